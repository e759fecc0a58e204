/**
 * Streaming trace reader. It reads the file in chunks, splits lines at the
 * byte level, decodes each line once and validates every record; it never
 * loads a whole file into one string, never modifies a file, and runs in
 * linear time however damaged the file is.
 *
 * Tolerant by default: blank lines are ignored; a torn last line (no trailing
 * newline, not parseable: what a crash mid-write leaves) is skipped and
 * reported as `torn_tail`; a malformed or schema-invalid line elsewhere is
 * skipped and reported with its line number and the reason. Strict mode
 * throws a PenguinError of kind "data" (`<file>:<line>: <reason>`) instead.
 *
 * @module
 */
import { errorMessage, PenguinError } from "../protocol/errors.ts";
import type { OmniMessage } from "../protocol/types.ts";
import { validateMessage } from "../protocol/validate.ts";
import { certainlyValid } from "./_fast_check.ts";

/** What is wrong with one line (or, for `structure`, with the file). */
export type TraceProblemKind = "torn_tail" | "malformed" | "invalid" | "structure";

/** One problem found in a trace file. */
export interface TraceProblem {
  /** The file, as the caller named it. */
  file: string;
  /** 1-based line number. */
  line: number;
  /** Category: a torn last line, a line that is not JSON/UTF-8, a schema violation, a file-level rule. */
  kind: TraceProblemKind;
  /** One sentence naming what was expected and what was found. */
  reason: string;
}

/** One record read from a trace. */
export interface TraceRecord {
  /** 1-based line number. */
  line: number;
  /** The message, exactly as parsed (unknown fields kept). */
  message: OmniMessage;
}

/** Options of {@linkcode readTrace}. */
export interface ReadTraceOptions {
  /** Throw on the first problem instead of skipping the line (default false). */
  strict?: boolean;
  /** Check every record against the protocol schema (default true); false passes any JSON value through unchecked. */
  validate?: boolean;
  /** Called for every problem found (tolerant mode). */
  onProblem?: (problem: TraceProblem) => void;
  /** Read buffer size in bytes (default 1 MiB). */
  chunkSize?: number;
}

/** Format a problem as `file:line: reason`. */
export function formatProblem(p: TraceProblem): string {
  return `${p.file}:${p.line}: ${p.reason}`;
}

// Control characters from a damaged file must not reach a terminal raw.
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/g;

function clean(text: string): string {
  return text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

function isBlank(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}

function concat(pieces: Uint8Array[], total: number): Uint8Array {
  if (pieces.length === 1) return pieces[0]!;
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of pieces) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

async function openForRead(path: string): Promise<Deno.FsFile> {
  try {
    return await Deno.open(path, { read: true });
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new PenguinError("not_found", `Cannot read trace "${path}": no such file`, {
        cause: err,
      });
    }
    throw new PenguinError("data", `Cannot read trace "${path}": ${errorMessage(err)}`, {
      cause: err,
    });
  }
}

// Read bytes [from, to) of `file`, then put its position back at `resume`.
async function readRange(
  file: Deno.FsFile,
  from: number,
  to: number,
  resume: number,
): Promise<Uint8Array> {
  const out = new Uint8Array(to - from);
  await file.seek(from, Deno.SeekMode.Start);
  let off = 0;
  while (off < out.length) {
    const n = await file.read(out.subarray(off));
    if (n === null) break;
    off += n;
  }
  await file.seek(resume, Deno.SeekMode.Start);
  return off === out.length ? out : out.subarray(0, off);
}

const EMPTY = new Uint8Array(0);
const FAST_WINDOW = 32 * 1024;
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

// Decode one line; null when it is not valid UTF-8. The lenient decoder is
// much faster; only a line that decodes to U+FFFD is checked strictly.
function decodeLine(bytes: Uint8Array): string | null {
  const text = lenient.decode(bytes);
  if (!text.includes("\uFFFD")) return text;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Read the records of the trace at `path`, one at a time. Problems go to
 * `onProblem` (tolerant mode) or throw (strict mode).
 */
export async function* readTrace(
  path: string,
  options: ReadTraceOptions = {},
): AsyncGenerator<TraceRecord, void, undefined> {
  const strict = options.strict ?? false;
  const validate = options.validate ?? true;
  const onProblem = options.onProblem;
  const chunkSize = options.chunkSize ?? 1 << 20;
  // A line longer than this is not gathered chunk by chunk: its end is found
  // first, then it is read once into a buffer of exactly its size.
  const gatherLimit = Math.max(chunkSize, 1 << 20);
  const file = await openForRead(path);

  // Handle one line; returns the record, or null when it was skipped.
  // `owned`: `bytes` is a buffer of its own (not a view into the read buffer),
  // released right after decoding so a huge line's bytes do not wait for GC.
  const handle = (
    bytes: Uint8Array,
    line: number,
    terminated: boolean,
    owned: boolean,
  ): TraceRecord | null => {
    if (bytes.length === 0 || (bytes[0] !== 0x7b && isBlank(bytes))) return null;
    const size = bytes.length;
    const text = decodeLine(bytes);
    if (owned) (bytes.buffer as ArrayBuffer).transfer(0);
    bytes = EMPTY;
    return handleText(text, size, line, terminated);
  };

  // Handle one decoded line (`text` null: not valid UTF-8; `size` in bytes).
  const handleText = (
    text: string | null,
    size: number,
    line: number,
    terminated: boolean,
  ): TraceRecord | null => {
    let value: unknown = undefined;
    let parsed = false;
    let parseError = "";
    if (text !== null) {
      try {
        value = JSON.parse(text);
        parsed = true;
      } catch (err) {
        parseError = err instanceof Error ? err.message : String(err);
      }
    }
    let kind: TraceProblemKind;
    let reason: string;
    if (parsed) {
      if (!validate || certainlyValid(value)) return { line, message: value as OmniMessage };
      const r = validateMessage(value);
      if (r.ok) return { line, message: r.message };
      kind = "invalid";
      reason = r.problem.message;
    } else if (!terminated) {
      kind = "torn_tail";
      reason = `torn last line: a record cut short without its newline (${size} byte(s))`;
    } else if (text === null) {
      kind = "malformed";
      reason = "not valid UTF-8";
    } else {
      kind = "malformed";
      reason = `not valid JSON (${parseError})`;
    }
    const problem: TraceProblem = { file: path, line, kind, reason: clean(reason) };
    if (strict) throw new PenguinError("data", formatProblem(problem));
    onProblem?.(problem);
    return null;
  };

  try {
    const buf = new Uint8Array(chunkSize);
    let pieces: Uint8Array[] = [];
    let piecesLen = 0;
    let lineNo = 0;
    let pos = 0; // file offset just after the current chunk
    let longStart = -1; // file offset where a long line began, while seeking its end
    while (true) {
      const n = await file.read(buf);
      if (n === null) break;
      const chunkStart = pos;
      pos += n;
      const view = n === buf.length ? buf : buf.subarray(0, n);
      let start = 0;
      while (start < n) {
        const nl = view.indexOf(0x0a, start);
        if (nl === -1) {
          if (longStart < 0) {
            if (piecesLen + n - start > gatherLimit) {
              longStart = chunkStart + start - piecesLen;
              pieces = [];
              piecesLen = 0;
            } else {
              pieces.push(view.slice(start));
              piecesLen += n - start;
            }
          }
          break;
        }
        if (longStart < 0 && piecesLen === 0) {
          // Fast path: decode every complete line of this chunk in one call
          // (much cheaper than one decode per line), then split.
          // Windows of at most 32 KiB keep the decoded strings small and short-lived.
          let last = view.lastIndexOf(0x0a, Math.min(n, start + FAST_WINDOW) - 1);
          if (last < nl) last = nl;
          const text = lenient.decode(view.subarray(start, last));
          if (!text.includes("\uFFFD")) {
            let from = 0;
            while (from <= text.length) {
              let to = text.indexOf("\n", from);
              if (to === -1) to = text.length;
              lineNo++;
              const lineText = text.slice(from, to);
              from = to + 1;
              if (lineText === "" || (lineText.charCodeAt(0) !== 0x7b && lineText.trim() === "")) {
                continue;
              }
              const rec = handleText(lineText, lineText.length, lineNo, true);
              if (rec) yield rec;
            }
            start = last + 1;
            continue;
          }
          // Some line is not valid UTF-8: fall back to line-by-line handling.
        }
        lineNo++;
        let rec: TraceRecord | null;
        if (longStart >= 0) {
          rec = handle(await readRange(file, longStart, chunkStart + nl, pos), lineNo, true, true);
          longStart = -1;
        } else if (piecesLen === 0) {
          rec = handle(view.subarray(start, nl), lineNo, true, false);
        } else {
          pieces.push(view.subarray(start, nl));
          const joined = concat(pieces, piecesLen + nl - start);
          pieces = [];
          piecesLen = 0;
          rec = handle(joined, lineNo, true, true);
        }
        start = nl + 1;
        if (rec) yield rec;
      }
    }
    let rec: TraceRecord | null = null;
    if (longStart >= 0) {
      rec = handle(await readRange(file, longStart, pos, pos), ++lineNo, false, true);
    } else if (piecesLen > 0) {
      const joined = concat(pieces, piecesLen);
      pieces = [];
      rec = handle(joined, ++lineNo, false, true);
    }
    if (rec) yield rec;
  } finally {
    file.close();
  }
}

/** Everything read from one trace file. */
export interface TraceFileContents {
  /** The records, with their line numbers. */
  records: TraceRecord[];
  /** The messages of `records`, in order. */
  messages: OmniMessage[];
  /** Every problem found (empty in strict mode: it throws instead). */
  problems: TraceProblem[];
}

/** Read a whole trace file into memory (tolerant unless `strict`). */
export async function readTraceFile(
  path: string,
  options: Omit<ReadTraceOptions, "onProblem"> = {},
): Promise<TraceFileContents> {
  const records: TraceRecord[] = [];
  const problems: TraceProblem[] = [];
  for await (const rec of readTrace(path, { ...options, onProblem: (p) => problems.push(p) })) {
    records.push(rec);
  }
  return { records, messages: records.map((r) => r.message), problems };
}

/**
 * The one-line diagnostic for skipped lines, e.g.
 * `[trace] skipped 3 malformed line(s) [2, 5, 9] in /x.jsonl`, listing at most
 * 20 line numbers; null when nothing was skipped.
 */
export function skippedLinesNotice(path: string, problems: readonly TraceProblem[]): string | null {
  if (problems.length === 0) return null;
  const shown = problems.slice(0, 20).map((p) => p.line).join(", ");
  const more = problems.length > 20 ? ", …" : "";
  return `[trace] skipped ${problems.length} malformed line(s) [${shown}${more}] in ${path}`;
}
