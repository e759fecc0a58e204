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
import { jsonCostProblem } from "../protocol/bounded_json.ts";
import { formatSize } from "../protocol/format_size.ts";
import { PenguinError } from "../protocol/errors.ts";
import type { OmniMessage } from "../protocol/types.ts";
import type { validateMessage as ValidateMessage } from "../protocol/validate.ts";
import { certainlyValid } from "./_fast_check.ts";
import { decodeLine, MAX_LINE_BYTES, openTrace, readLines } from "./lines.ts";
import { collectorEvery } from "../state/_gc.ts";

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
  /**
   * Only lines holding this text (ASCII) are decoded and parsed; the others
   * are skipped unread, problems and all: a reader after a few records of a
   * huge trace then leaves no copy of its other lines for the GC.
   */
  holding?: string;
  /**
   * Applied to every record read, before it is handed on (`trace show`,
   * `trace export`, `sessions show` mask the current secrets with it).
   */
  mask?: ((message: OmniMessage) => OmniMessage) | undefined;
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

const EMPTY = new Uint8Array(0);

/** Whether `bytes` holds the byte sequence `needle` (not empty). */
function holds(bytes: Uint8Array, needle: Uint8Array): boolean {
  const first = needle[0]!;
  for (let at = bytes.indexOf(first); at !== -1; at = bytes.indexOf(first, at + 1)) {
    if (at + needle.length > bytes.length) return false;
    let i = 1;
    while (i < needle.length && bytes[at + i] === needle[i]) i++;
    if (i === needle.length) return true;
  }
  return false;
}

/**
 * The longest record (line) a trace may hold: a longer one is reported as a
 * problem without being read. penguin writes none that long (a tool call's
 * arguments stop at 2 MiB, command output is archived past its cap, an image
 * at 5 MiB); a file from elsewhere (`sessions import`) may.
 */
export const MAX_RECORD_BYTES = MAX_LINE_BYTES;

/** The message check of a reading that validates: the schemas (zod) load only then. */
async function validatorFor(validate: boolean): Promise<typeof ValidateMessage | undefined> {
  return validate ? (await import("../protocol/validate.ts")).validateMessage : undefined;
}

/** Lines at least this long count toward {@linkcode largeLines}. */
const LARGE_LINE_BYTES = 1024 * 1024;
/**
 * The process's collector around large lines (one every 32 MiB of them, counted before a line is
 * decoded and again after it is parsed): what the records before a large one left (their text,
 * parsed and rendered by the reader's caller) is freed only in a full collection (attack round 23
 * bounded B9: two 60 MB records took an export to 650 MB), and so is the decoded line once parsed,
 * which else stays beside its record while the caller renders it (attack round 24 bounded R12).
 */
const largeLines = collectorEvery(32 * 1024 * 1024);

/** Count a line of `size` bytes, just read into a record, toward {@linkcode largeLines}. */
function afterLine(size: number): void {
  if (size >= LARGE_LINE_BYTES) largeLines(size);
}

/** The problem of a line of `size` bytes over {@linkcode MAX_RECORD_BYTES}, at `line` of `file`. */
function tooLargeProblem(file: string, size: number, line: number): TraceProblem {
  const reason = `a record of ${formatSize(size)}, over the ${
    formatSize(MAX_RECORD_BYTES)
  } a record may hold (not read)`;
  return { file, line, kind: "malformed", reason };
}

/**
 * Read the records of the trace at `path`, one at a time. Problems go to
 * `onProblem` (tolerant mode) or throw (strict mode).
 */
export async function* readTrace(
  path: string,
  options: ReadTraceOptions = {},
): AsyncGenerator<TraceRecord, void, undefined> {
  // Long because: one generator whose line handlers share the options, the line counters and the
  // problem reporting; each handler is short.
  const strict = options.strict ?? false;
  const check = await validatorFor(options.validate ?? true);
  const onProblem = options.onProblem;
  const chunkSize = options.chunkSize ?? 1 << 20;
  const file = await openTrace(path);
  const needle = options.holding;
  const mask = options.mask;
  const needleBytes = needle === undefined ? undefined : new TextEncoder().encode(needle);

  // One line as bytes: the record, or null when skipped. `own`: a buffer of its own (not a view
  // into the read buffer), released right after decoding so a huge line's bytes do not wait for GC.
  const handleBytes = (
    bytes: Uint8Array,
    line: number,
    terminated: boolean,
    own: boolean,
  ): TraceRecord | null => {
    if (bytes.length === 0 || (bytes[0] !== 0x7b && isBlank(bytes))) return null;
    if (bytes.length >= LARGE_LINE_BYTES) largeLines(bytes.length);
    if (needleBytes !== undefined && !holds(bytes, needleBytes)) {
      if (own) (bytes.buffer as ArrayBuffer).transfer(0);
      return null;
    }
    const size = bytes.length;
    const text = decodeLine(bytes);
    if (own) (bytes.buffer as ArrayBuffer).transfer(0);
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
    const costly = text === null ? undefined : jsonCostProblem(text);
    if (text !== null && costly === undefined) {
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
      if (!check || certainlyValid(value)) return { line, message: value as OmniMessage };
      const r = check(value);
      if (r.ok) return { line, message: r.message };
      kind = "invalid";
      reason = r.problem.message;
    } else if (!terminated) {
      kind = "torn_tail";
      reason = `torn last line: a record cut short without its newline (${size} byte(s))`;
    } else if (text === null) {
      kind = "malformed";
      reason = "not valid UTF-8";
    } else if (costly !== undefined) {
      kind = "malformed";
      reason = `${costly} (not read)`;
    } else {
      kind = "malformed";
      reason = `not valid JSON (${parseError})`;
    }
    return report({ file: path, line, kind, reason: clean(reason) });
  };

  // A problem thrown (strict mode) or handed on; the line is skipped.
  const report = (problem: TraceProblem): null => {
    if (strict) throw new PenguinError("data", formatProblem(problem));
    onProblem?.(problem);
    return null;
  };

  try {
    for await (const batch of readLines(file, { chunkSize })) {
      for (const l of batch) {
        let rec: TraceRecord | null;
        let size = 0; // of a line read as bytes
        if (l.kind === "text") {
          const t = l.text;
          if (t === "" || (t.charCodeAt(0) !== 0x7b && t.trim() === "")) continue;
          if (needle !== undefined && !t.includes(needle)) continue;
          rec = handleText(t, t.length, l.no, true);
        } else if (l.kind === "bytes") {
          size = l.bytes.length;
          rec = handleBytes(l.bytes, l.no, l.terminated, l.own);
        } else if (l.size > MAX_RECORD_BYTES) {
          // Not read: a sparse file or a hostile one would cost its whole size in memory.
          rec = report(tooLargeProblem(path, l.size, l.no));
        } else {
          size = l.size;
          rec = handleBytes(await l.read(), l.no, l.terminated, true);
        }
        // Here, not in handleBytes: the decoded line is no local of a live frame any more.
        afterLine(size);
        if (rec) yield mask ? { ...rec, message: mask(rec.message) } : rec;
      }
    }
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

/** Problems a reader's list keeps at most ({@linkcode keepProblem}); the others are counted. */
export const MAX_KEPT_PROBLEMS = 1000;

/** Problems past {@linkcode MAX_KEPT_PROBLEMS} of a list, counted by file. */
const overflow = new WeakMap<readonly TraceProblem[], Map<string, number>>();

/**
 * An `onProblem` that adds to `list` up to {@linkcode MAX_KEPT_PROBLEMS} problems and counts the
 * others (see {@linkcode problemTotal}): a 30 MB trace of a million broken lines kept a million
 * problems for a one-line notice (attack round 23 bounded A17).
 */
export function keepProblem(list: TraceProblem[]): (p: TraceProblem) => void {
  return (p) => {
    if (list.length < MAX_KEPT_PROBLEMS) return void list.push(p);
    let byFile = overflow.get(list);
    if (!byFile) overflow.set(list, byFile = new Map());
    byFile.set(p.file, (byFile.get(p.file) ?? 0) + 1);
  };
}

/** How many problems of `file` were left out of `list` ({@linkcode keepProblem}). */
export function problemsLeftOut(list: readonly TraceProblem[], file: string): number {
  return overflow.get(list)?.get(file) ?? 0;
}

/**
 * The one-line diagnostic for skipped lines, e.g.
 * `[trace] skipped 3 malformed line(s) [2, 5, 9] in /x.jsonl`, listing at most
 * 20 line numbers; null when nothing was skipped. `leftOut`: more skipped
 * lines not in `problems` ({@linkcode problemsLeftOut}).
 */
export function skippedLinesNotice(
  path: string,
  problems: readonly TraceProblem[],
  leftOut = 0,
): string | null {
  const total = problems.length + leftOut;
  if (total === 0) return null;
  const shown = problems.slice(0, 20).map((p) => p.line).join(", ");
  const more = total > 20 ? ", …" : "";
  return `[trace] skipped ${total} malformed line(s) [${shown}${more}] in ${path}`;
}
