/**
 * `trace follow`: tail a trace another process is writing. New bytes are
 * polled for; only complete lines (ending in a newline) are printed, so a
 * record caught half-written waits for the rest. When the session rotates
 * (`<session>_<NNN+1>.jsonl` appears next to the current file) the current
 * file is drained first, then the next one is followed from its start. One
 * file handle, one read buffer and the pending partial line are all it holds.
 *
 * @module
 */
import { sleep } from "../protocol/sleep.ts";
import { exists } from "../state/_fs.ts";
import { parseMessageLine } from "../protocol/validate.ts";
import { largeGarbage } from "../state/_gc.ts";
import { nextShardPath } from "../trace/layout.ts";
import { followLines, type LineFollower, MAX_LINE_BYTES } from "../trace/lines.ts";
import { formatSize } from "../protocol/format_size.ts";
import type { Style } from "../display/palette.ts";
import type { OmniMessage } from "../protocol/types.ts";
import { createRenderer } from "./render.ts";
import { recordedCallIds } from "./recorded_calls.ts";

/** Options of {@linkcode followTrace}. */
export interface FollowOptions {
  /** Print raw lines instead of rendering. */
  json?: boolean;
  /** Colours for the rendering. */
  style: Style;
  /** Expand collapsed outputs. */
  full?: boolean;
  /** Skip what the file already holds; print only records written from now on. */
  onlyNew?: boolean;
  /** Poll interval in ms (default 100). */
  intervalMs?: number;
  /**
   * The session's files before the followed one, in order: their calls are
   * counted so the followed calls get the numbers `trace show` gives them.
   */
  earlierFiles?: readonly string[];
  /** Stops following. */
  signal: AbortSignal;
  /** Output. */
  out: (text: string) => void;
  /** Notices (malformed lines, rotation). */
  err: (text: string) => void;
  /** Applied to every record read (the current secrets masked), rendered or as JSON. */
  mask?: ((message: OmniMessage) => OmniMessage) | undefined;
}

/** The line printed for a record under `--json`: as read unless masking changed it. */
function jsonLine(
  text: string,
  message: OmniMessage,
  mask: ((message: OmniMessage) => OmniMessage) | undefined,
): string {
  const masked = mask ? mask(message) : message;
  return masked === message ? text : JSON.stringify(masked);
}

/** Follow the trace at `path` until `options.signal` aborts (see the module doc). */
export async function followTrace(path: string, options: FollowOptions): Promise<void> {
  // Long by design: one polling loop whose steps share the open file, its offset
  // and the renderer; each step is a few lines.
  const interval = options.intervalMs ?? 100;
  let current = path;
  let lines: LineFollower = await followLines(current, { fromEnd: options.onlyNew });
  // Calls numbered as trace show numbers them: after the earlier files' calls and, with
  // onlyNew, the ones this file held. Read after the follow started, so none is missed (a
  // call read twice keeps its number).
  const earlier = [...(options.earlierFiles ?? []), ...(options.onlyNew ? [path] : [])];
  const renderer = createRenderer({
    style: options.style,
    full: options.full,
    earlierCallIds: options.json || earlier.length === 0 ? [] : await recordedCallIds(earlier),
  });

  // Print the complete lines appended since the last look; true when anything came in.
  const drain = async (): Promise<boolean> => {
    const got = await lines.read();
    for (let i = 0; i < got.lines.length; i++) {
      const { no, text, skipped } = got.lines[i]!;
      // Let go of the line once printed: a batch is one line of up to 64 MiB at worst.
      got.lines[i] = { no, text: "" };
      if (skipped !== undefined) {
        options.err(
          `[trace] skipped line ${no} of ${current}: a record of ${
            formatSize(skipped)
          }, over the ` +
            `${formatSize(MAX_LINE_BYTES)} a record may hold (not read)\n`,
        );
        continue;
      }
      if (text.trim() === "") continue;
      const r = parseMessageLine(text);
      if (!r.ok) {
        options.err(`[trace] skipped line ${no} of ${current}: ${r.problem.message}\n`);
        continue;
      }
      if (options.json) {
        // Written apart from its newline: joined, the line was copied whole once more.
        options.out(jsonLine(text, r.message, options.mask));
        options.out("\n");
      } else {
        options.out(renderer.record(options.mask ? options.mask(r.message) : r.message, current));
      }
      // The line, its record, the masked copy and what was printed: garbage of its size, each
      // freed only by a full collection when large (attack round 25 bounded C5: one 66 MB record
      // took follow to 409 MB, `--json` 469 MB).
      largeGarbage(4 * text.length);
    }
    return got.bytes > 0;
  };

  try {
    while (!options.signal.aborted) {
      // A file that shrank was replaced or truncated: start it over.
      if (await lines.shrank()) {
        options.err(`[trace] ${current} shrank; reading it from the start\n`);
        await lines.restart();
      }
      if (await drain()) continue;
      const next = nextShardPath(current);
      if (next !== null && await exists(next, { kind: "file" })) {
        await drain(); // anything written between the last read and the rotation
        if (lines.pending() > 0) {
          options.err(
            `[trace] ${current} ends with a torn line (${lines.pending()} bytes); skipped\n`,
          );
        }
        lines.close();
        current = next;
        lines = await followLines(current);
        continue;
      }
      await sleep(interval, options.signal);
    }
  } finally {
    lines.close();
  }
}
