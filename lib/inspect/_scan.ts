// A fast, tolerant trace scanner for `trace stats`. It yields light records:
// the envelope kind, payload type, timestamp and the handful of fields stats
// needs, without parsing the large strings (tool outputs, arguments, text,
// thinking) of model messages written in the canonical field order
// (`{"timestamp","type","payload":{"type","role",…,"tool_call_id","stop_reason"}}`,
// what penguin and PenguinHarness write). Events and session metas are parsed
// in full (they are small), tool_list_ready is skipped, and every line that
// does not have the canonical shape goes through JSON.parse. Memory stays flat:
// a line longer than LONG_LINE is never gathered unless the slow path needs it.
import { formatProblem, type TraceProblem } from "../trace/reader.ts";
import { PenguinError } from "../protocol/errors.ts";
import { fast, type LiteRecord, slow } from "./_scan_record.ts";

export type { LiteRecord } from "./_scan_record.ts";

const dec = new TextDecoder();
const LONG_LINE = 4 << 20;
const EDGE = 64 * 1024;

/** Options of {@linkcode scanTrace}. */
export interface ScanOptions {
  /** Called for every skipped line. */
  onProblem?: (problem: TraceProblem) => void;
  /** Throw on the first problem instead (kind "data"). */
  strict?: boolean;
}

/** Scan the trace at `path`, calling `onRecord` for every record, in order. */
export async function scanTrace(
  path: string,
  onRecord: (rec: LiteRecord) => void,
  options: ScanOptions = {},
): Promise<{ lines: number; records: number; bytes: number }> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (err) {
    throw new PenguinError(
      err instanceof Deno.errors.NotFound ? "not_found" : "data",
      `Cannot read trace "${path}": ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  let records = 0;
  const problem = (line: number, kind: TraceProblem["kind"], reason: string) => {
    const p: TraceProblem = { file: path, line, kind, reason };
    if (options.strict) throw new PenguinError("data", formatProblem(p));
    options.onProblem?.(p);
  };
  const finish = (rec: LiteRecord | string, line: number, terminated: boolean) => {
    if (typeof rec === "string") {
      if (!terminated && rec.startsWith("not valid JSON")) {
        problem(line, "torn_tail", "torn last line: a record cut short without its newline");
      } else problem(line, rec.startsWith("not valid JSON") ? "malformed" : "invalid", rec);
      return;
    }
    records++;
    onRecord(rec);
  };
  const isBlank = (head: Uint8Array) =>
    head.length === 0 || (head[0] !== 0x7b && dec.decode(head.subarray(0, 4096)).trim() === "");
  const handle = (bytes: Uint8Array, line: number, terminated: boolean) => {
    if (isBlank(bytes)) return;
    finish(fast(bytes, bytes, line) ?? slow(bytes, line), line, terminated);
  };
  const handleLong = async (
    head: Uint8Array,
    tail: Uint8Array,
    line: number,
    terminated: boolean,
    whole: () => Promise<Uint8Array>,
  ) => {
    if (isBlank(head)) return;
    finish(fast(head, tail, line) ?? slow(await whole(), line), line, terminated);
  };
  let lineNo = 0;
  let bytes = 0;
  try {
    const buf = new Uint8Array(1 << 20);
    let pieces: Uint8Array[] = [];
    let piecesLen = 0;
    let longStart = -1; // file offset of a long line being skipped
    let longHead: Uint8Array | null = null;
    let longTail = new Uint8Array(0);
    const readRange = async (from: number, to: number, resume: number) => {
      const out = new Uint8Array(to - from);
      await file.seek(from, Deno.SeekMode.Start);
      let off = 0;
      while (off < out.length) {
        const n = await file.read(out.subarray(off));
        if (n === null) break;
        off += n;
      }
      await file.seek(resume, Deno.SeekMode.Start);
      return out.subarray(0, off);
    };
    const joinPieces = (extra: Uint8Array) => {
      const all = new Uint8Array(piecesLen + extra.length);
      let off = 0;
      for (const p of pieces) {
        all.set(p, off);
        off += p.length;
      }
      all.set(extra, off);
      pieces = [];
      piecesLen = 0;
      return all;
    };
    const keepTail = (view: Uint8Array) => {
      if (view.length >= EDGE) longTail = view.slice(view.length - EDGE);
      else {
        const t = new Uint8Array(Math.min(EDGE, longTail.length + view.length));
        const keep = t.length - view.length;
        t.set(longTail.subarray(longTail.length - keep), 0);
        t.set(view, keep);
        longTail = t;
      }
    };
    while (true) {
      const n = await file.read(buf);
      if (n === null) break;
      const chunkStart = bytes;
      bytes += n;
      const view = buf.subarray(0, n);
      let start = 0;
      while (start < n) {
        const nl = view.indexOf(0x0a, start);
        if (nl < 0) {
          const rest = view.subarray(start);
          if (longStart >= 0) keepTail(rest);
          else if (piecesLen + rest.length > LONG_LINE) {
            const all = joinPieces(rest);
            longStart = chunkStart + start - (all.length - rest.length);
            longHead = all.slice(0, EDGE);
            longTail = new Uint8Array(0);
            keepTail(all);
          } else {
            pieces.push(rest.slice());
            piecesLen += rest.length;
          }
          break;
        }
        lineNo++;
        const seg = view.subarray(start, nl);
        if (longStart >= 0) {
          keepTail(seg);
          const from = longStart;
          const end = chunkStart + nl;
          longStart = -1;
          await handleLong(longHead!, longTail, lineNo, true, () => readRange(from, end, bytes));
          longHead = null;
        } else if (piecesLen > 0) {
          handle(joinPieces(seg), lineNo, true);
        } else {
          handle(seg, lineNo, true);
        }
        start = nl + 1;
      }
    }
    if (longStart >= 0) {
      lineNo++;
      const from = longStart;
      await handleLong(longHead!, longTail, lineNo, false, () => readRange(from, bytes, bytes));
    } else if (piecesLen > 0) {
      lineNo++;
      handle(joinPieces(new Uint8Array(0)), lineNo, false);
    }
  } finally {
    file.close();
  }
  return { lines: lineNo, records, bytes };
}
