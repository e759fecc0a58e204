/**
 * A session recorded by another harness (OpenAI Codex CLI, Claude Code, pi),
 * turned into penguin trace records by one of the `import_*` parsers: the
 * pure half of `penguin sessions import --from`. Writing it is
 * `importForeign`'s job.
 *
 * @module
 */
import { isJsonCostRefusal, parseJsonBounded } from "../protocol/bounded_json.ts";
import { PenguinError } from "../protocol/errors.ts";
import type { EventMsgEnvelope, ModelMsgEnvelope } from "../protocol/types.ts";
import type { LineProblem, LossEntry } from "./import_report.ts";
import { COLLECT_EVERY_BYTES, collectorEvery, garbageCollector } from "../state/_gc.ts";
import { openRegularNow } from "../state/_fs.ts";

/** The harnesses penguin imports from. */
export type Harness = "codex" | "claude" | "pi";

/** Every {@linkcode Harness}. */
export const HARNESSES: readonly Harness[] = ["codex", "claude", "pi"];

/** One JSONL line of a foreign file: its number and its parsed value. */
export interface ForeignLine {
  /** 1-based line number. */
  line: number;
  /** The parsed JSON value. */
  value: unknown;
}

/** A foreign session, converted. */
export interface ForeignSession {
  /** The harness that recorded it. */
  harness: Harness;
  /** The file it was read from. */
  file: string;
  /** Its id in that harness. */
  id: string;
  /** The harness's version, when recorded. */
  version: string | null;
  /** The working directory it ran in. */
  cwd: string;
  /** Provider of the recorded model (`unknown` when not recorded). */
  provider: string;
  /** The recorded model id (`unknown` when not recorded). */
  modelId: string;
  /** The system prompt, when the harness recorded it; else empty. */
  systemPrompt: string;
  /** Time of its first record (ISO-8601). */
  startedAt: string;
  /** The trace records after the session_meta, each with its recorded time (empty when a sink took them). */
  records: Array<ModelMsgEnvelope | EventMsgEnvelope>;
  /** Subagent sessions it spawned whose transcripts were found (Claude Code). */
  children: ForeignChild[];
  /** What could not be mapped. */
  loss: LossEntry[];
  /** Malformed lines (skipped; the import is refused unless lenient). */
  problems: LineProblem[];
}

/** Where a parser puts each record as it makes it, in trace order (instead of `records`). */
export type RecordSink = (record: ModelMsgEnvelope | EventMsgEnvelope) => void;

/** A subagent session and the tool call of its parent that spawned it. */
export interface ForeignChild {
  /** The parent's tool call. */
  toolCallId: string;
  /** The child session. */
  session: ForeignSession;
  /** Where its records went as they were made (then `session.records` is empty). */
  spool?: ChildSpool;
}

/** Where a subagent's records go while its transcript is parsed (see `_import_spool.ts`). */
export interface ChildSpool {
  /** Takes each record. */
  sink: RecordSink;
  /** The transcript is parsed: nothing more comes. */
  close(): void;
}

/**
 * The longest line of a foreign session that is read: 4 Mi characters. A
 * real line is far shorter (the peer sessions at hand: at most 105 KB; Claude
 * Code and Codex shrink images and cut long tool output), and every pass over
 * the file decodes and parses each line again: a line that large is left for
 * a full garbage collection, so long lines pile up. A 64 MiB file of 16 Mi
 * lines peaked at 440 MB, of 8 Mi lines at 305 MB, of 4 Mi lines at 257 MB.
 */
export const MAX_FOREIGN_LINE_CHARS = 4 * 1024 * 1024;

/**
 * A line at least this long is followed by a full garbage collection once it
 * has been read: V8 frees strings that large only in one, and a file of many
 * such lines would otherwise hold them all.
 */
const LONG_LINE_CHARS = 1024 * 1024;

/** The refusal of a line past {@linkcode MAX_FOREIGN_LINE_CHARS} (the import names the file). */
function lineTooLong(line: number): PenguinError {
  return new PenguinError(
    "data",
    `line ${line}: not parsed, too costly to parse: longer than ${
      MAX_FOREIGN_LINE_CHARS / 1024 / 1024
    } Mi characters ` +
      `(no message of a real session comes near)`,
  );
}

/**
 * JSONL text's lines, each parsed when it is reached and not kept: every
 * iteration of `lines` parses them again, so a file of many small lines
 * costs its text, not its parsed values all at once. Malformed lines are
 * found at once (in `problems`, in file order) and skipped by `lines`;
 * blank lines are skipped.
 */
export function lazyJsonLines(
  text: ForeignText,
  file: string,
): { lines: Iterable<ForeignLine>; problems: LineProblem[] } {
  const problems: LineProblem[] = [];
  const bad = new Set<number>();
  const collect = garbageCollector();
  for (const { line, raw, last } of rawLines(text)) {
    if (raw.trim() === "") continue;
    if (raw.length > MAX_FOREIGN_LINE_CHARS) throw lineTooLong(line);
    try {
      // A line too costly to parse refuses the file (a PenguinError naming the
      // line; the import names the file).
      parseJsonBounded(raw, `line ${line}`);
    } catch (err) {
      if (isJsonCostRefusal(err)) throw err;
      const why = err instanceof Error ? err.message : String(err);
      const torn = last ? " (the file ends in a partial line)" : "";
      problems.push({ file, line, reason: `not valid JSON: ${why}${torn}` });
      bad.add(line);
    }
    if (raw.length > LONG_LINE_CHARS) collect();
  }
  const lines = {
    *[Symbol.iterator](): Iterator<ForeignLine> {
      for (const { line, raw } of rawLines(text)) {
        if (bad.has(line) || raw.trim() === "") continue;
        const long = raw.length > LONG_LINE_CHARS;
        yield { line, value: JSON.parse(raw) };
        if (long) collect();
      }
    },
  };
  return { lines, problems };
}

/**
 * A foreign file's content: its text, or the file itself (its first `size`
 * bytes, read again on each pass over its lines and each line decoded when it
 * is reached: a file of many small lines costs a read buffer, not its text).
 */
export type ForeignText = string | { path: string; size: number };

/** The lines of `text` (split at "\n"), 1-based, `last` on the one after the last newline. */
function* rawLines(text: ForeignText): Generator<{ line: number; raw: string; last: boolean }> {
  if (typeof text !== "string") return yield* fileLines(text.path, text.size);
  let start = 0;
  for (let line = 1;; line++) {
    const end = text.indexOf("\n", start);
    if (end === -1) {
      yield { line, raw: text.slice(start), last: true };
      return;
    }
    yield { line, raw: text.slice(start, end), last: false };
    start = end + 1;
  }
}

/**
 * The lines of the first `size` bytes of the file at `path`, read a MiB at a
 * time. A line's bytes gather in one buffer kept from line to line (grown as
 * a line needs, at most to the longest line), so a long line leaves its
 * decoded text behind, not pieces and a copy of them.
 */
function* fileLines(
  path: string,
  size: number,
): Generator<{ line: number; raw: string; last: boolean }> {
  // As the whole text decoded at once would read: a byte order mark dropped only at the start.
  const first = new TextDecoder();
  const rest = new TextDecoder("utf-8", { ignoreBOM: true });
  // Without blocking: the file may have been swapped for a FIFO since it was looked at.
  using file = openRegularNow(path);
  const buf = new Uint8Array(1 << 20);
  let held = new Uint8Array(0);
  let heldLength = 0;
  let line = 1;
  let left = size;
  const hold = (bytes: Uint8Array) => {
    if (heldLength + bytes.length > held.length) {
      const grown = new Uint8Array(Math.max(heldLength + bytes.length, held.length * 2));
      grown.set(held.subarray(0, heldLength));
      held = grown;
    }
    held.set(bytes, heldLength);
    heldLength += bytes.length;
  };
  const take = (end: Uint8Array) => {
    const whole = heldLength === 0 ? end : (hold(end), held.subarray(0, heldLength));
    heldLength = 0;
    return (line === 1 ? first : rest).decode(whole);
  };
  // A pass makes garbage fast (each line parsed and dropped): collected as it goes.
  const collected = collectorEvery(COLLECT_EVERY_BYTES);
  while (left > 0) {
    const n = file.read(buf.subarray(0, Math.min(buf.length, left)));
    if (n === 0) break;
    left -= n;
    collected(n);
    let start = 0;
    for (let nl = buf.indexOf(10); nl !== -1 && nl < n; nl = buf.indexOf(10, start)) {
      yield { line, raw: take(buf.subarray(start, nl)), last: false };
      line++;
      start = nl + 1;
    }
    if (start < n) hold(buf.subarray(start, n));
  }
  yield { line, raw: take(new Uint8Array(0)), last: true };
}

/** Parse JSONL text into lines; blank lines are skipped, malformed JSON becomes a problem. */
export function splitJsonLines(
  text: ForeignText,
  file: string,
): { lines: ForeignLine[]; problems: LineProblem[] } {
  const { lines, problems } = lazyJsonLines(text, file);
  return { lines: [...lines], problems };
}
