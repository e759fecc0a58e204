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
import { basename, dirname, join } from "node:path";
import { parseMessageLine } from "../protocol/validate.ts";
import { parseTraceFileName, traceFileName } from "../trace/paths.ts";
import type { Style } from "../display/palette.ts";
import { createRenderer } from "./render.ts";

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
  /** Stops following. */
  signal: AbortSignal;
  /** Output. */
  out: (text: string) => void;
  /** Notices (malformed lines, rotation). */
  err: (text: string) => void;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

async function exists(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/** The path of the shard after `path` (`_NNN` + 1), or null when the name has no index. */
export function nextShardPath(path: string): string | null {
  const parsed = parseTraceFileName(basename(path));
  if (!parsed) return null;
  try {
    return join(dirname(path), traceFileName(parsed.sessionId, parsed.index + 1));
  } catch {
    // Not a session-id-shaped name: keep its own spelling.
    const width = Math.max(3, String(parsed.index + 1).length);
    return join(
      dirname(path),
      `${parsed.sessionId}_${String(parsed.index + 1).padStart(width, "0")}.jsonl`,
    );
  }
}

/** Follow the trace at `path` until `options.signal` aborts (see the module doc). */
export async function followTrace(path: string, options: FollowOptions): Promise<void> {
  // Long by design: one polling loop whose steps share the open file, its offset
  // and the renderer; each step is a few lines.
  const interval = options.intervalMs ?? 100;
  const dec = new TextDecoder();
  const renderer = createRenderer({ style: options.style, full: options.full });
  const buf = new Uint8Array(1 << 20);
  let current = path;
  let file = await Deno.open(current, { read: true });
  let offset = options.onlyNew ? (await file.stat()).size : 0;
  // Starting at the end of a file caught mid-record: skip up to the next newline.
  let skipFirstPartial = false;
  if (offset > 0) {
    await file.seek(offset - 1, Deno.SeekMode.Start);
    const one = new Uint8Array(1);
    await file.read(one);
    skipFirstPartial = one[0] !== 0x0a;
  }
  let partial: Uint8Array[] = [];
  let partialLen = 0;
  let lineNo = 0;

  const emitLine = (bytes: Uint8Array) => {
    lineNo++;
    const text = dec.decode(bytes).replace(/\r$/, "");
    if (text.trim() === "") return;
    if (skipFirstPartial) return;
    const r = parseMessageLine(text);
    if (!r.ok) {
      options.err(`[trace] skipped line ${lineNo} of ${current}: ${r.problem.message}\n`);
      return;
    }
    if (options.json) options.out(text + "\n");
    else options.out(renderer.record(r.message, current));
  };

  // Read everything new; print the complete lines; keep the partial one.
  const drain = async (): Promise<boolean> => {
    let grew = false;
    while (true) {
      const n = await file.read(buf);
      if (n === null || n === 0) break;
      grew = true;
      offset += n;
      const view = buf.subarray(0, n);
      let start = 0;
      while (start < n) {
        const nl = view.indexOf(0x0a, start);
        if (nl < 0) {
          partial.push(view.slice(start));
          partialLen += n - start;
          break;
        }
        let line = view.subarray(start, nl);
        if (partialLen > 0) {
          const all = new Uint8Array(partialLen + line.length);
          let off = 0;
          for (const p of partial) {
            all.set(p, off);
            off += p.length;
          }
          all.set(line, off);
          line = all;
          partial = [];
          partialLen = 0;
        }
        emitLine(line);
        skipFirstPartial = false;
        start = nl + 1;
      }
    }
    return grew;
  };

  try {
    while (!options.signal.aborted) {
      // A file that shrank was replaced or truncated: start it over.
      const size = (await file.stat()).size;
      if (size < offset) {
        options.err(`[trace] ${current} shrank; reading it from the start\n`);
        await file.seek(0, Deno.SeekMode.Start);
        offset = 0;
        partial = [];
        partialLen = 0;
        lineNo = 0;
      }
      if (await drain()) continue;
      const next = nextShardPath(current);
      if (next !== null && await exists(next)) {
        await drain(); // anything written between the last read and the rotation
        if (partialLen > 0) {
          options.err(`[trace] ${current} ends with a torn line (${partialLen} bytes); skipped\n`);
        }
        file.close();
        current = next;
        file = await Deno.open(current, { read: true });
        offset = 0;
        partial = [];
        partialLen = 0;
        lineNo = 0;
        skipFirstPartial = false;
        continue;
      }
      await sleep(interval, options.signal);
    }
  } finally {
    file.close();
  }
}
