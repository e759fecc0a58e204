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
import { parseTimestamp } from "./format.ts";

/** One scanned record. */
export interface LiteRecord {
  /** 1-based line number. */
  line: number;
  /** Epoch milliseconds of the timestamp (NaN when unparseable). */
  ts: number;
  /** Envelope kind. */
  kind: "session_meta" | "model_msg" | "event_msg";
  /** Payload type (`session_meta` for a meta). */
  type: string;
  /** Model message role, else "". */
  role: string;
  /** Tool name of a tool_call, else "". */
  name: string;
  /** tool_call_id of a tool_call / tool_call_output, else "". */
  id: string;
  /** stop_reason of a tool_call / tool_call_output, else "". */
  stop: string;
  /** The full payload for events (but request_begin and tool_list_ready), metas and records read the slow way; null otherwise. */
  payload: Record<string, unknown> | null;
  /** True when the envelope carries an `origin` (only known for slow-path records). */
  origin: boolean;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const P_TS = enc.encode('{"timestamp":"');
const P_TYPE = enc.encode('","type":"');
const P_PAYLOAD = enc.encode('","payload":{"type":"');
const P_ROLE = enc.encode(',"role":"');
const P_NAME = enc.encode('","name":"');
const P_STOP = enc.encode(',"stop_reason":"');
const P_ID = enc.encode(',"tool_call_id":"');
const P_COMPLETED_END = enc.encode(',"status":"completed"}}');
const P_DECISION = enc.encode(',"decision":"');
const P_DECISION_ID = enc.encode('","tool_call_id":"');
const COMPLETED: Record<string, unknown> = Object.freeze({
  type: "request_end",
  status: "completed",
});
const LONG_LINE = 4 << 20;
const EDGE = 64 * 1024;
const TAIL_WINDOW = 1024;
const TOOL_TAIL =
  /,"tool_call_id":("(?:[^"\\]|\\.)*"),"stop_reason":"([a-z]+)"(?:,"fidelity":\{.*\})?\}\}\s*$/;
const KINDS = new Set(["session_meta", "model_msg", "event_msg"]);

function startsWith(b: Uint8Array, at: number, p: Uint8Array): boolean {
  if (at < 0 || at + p.length > b.length) return false;
  for (let i = 0; i < p.length; i++) if (b[at + i] !== p[i]) return false;
  return true;
}

// Short ASCII strings (kinds, types, roles, tool names) recur constantly: keep
// one string per distinct byte sequence instead of decoding each time.
const interned = new Map<number, { bytes: Uint8Array; text: string }[]>();
let internedCount = 0;

function intern(b: Uint8Array, from: number, to: number): string {
  let h = to - from;
  for (let i = from; i < to; i++) h = (h * 31 + b[i]!) | 0;
  const bucket = interned.get(h);
  if (bucket) {
    outer: for (const e of bucket) {
      if (e.bytes.length !== to - from) continue;
      for (let i = 0; i < e.bytes.length; i++) if (e.bytes[i] !== b[from + i]) continue outer;
      return e.text;
    }
  }
  const text = dec.decode(b.subarray(from, to));
  if (internedCount < 4096) {
    internedCount++;
    const entry = { bytes: b.slice(from, to), text };
    if (bucket) bucket.push(entry);
    else interned.set(h, [entry]);
  }
  return text;
}

// A short string's text: ASCII without an op call, else decoded.
function text(b: Uint8Array, from: number, to: number): string {
  let s = "";
  for (let i = from; i < to; i++) {
    const c = b[i]!;
    if (c >= 0x80) return dec.decode(b.subarray(from, to));
    s += String.fromCharCode(c);
  }
  return s;
}

// The end of the string starting at `from` (just after its opening quote)
// when it has no escapes; -1 otherwise.
function plainStringEnd(b: Uint8Array, from: number): number {
  const q = b.indexOf(0x22, from);
  if (q < 0) return -1;
  for (let i = from; i < q; i++) if (b[i] === 0x5c) return -1;
  return q;
}

// The start of the plain string that ends (closing quote) at `end`; -1 when
// it has escapes or is longer than `max`.
function plainStringStart(b: Uint8Array, end: number, max: number): number {
  for (let i = end - 1; i >= 0 && end - i <= max; i--) {
    const c = b[i]!;
    if (c === 0x22) return i + 1;
    if (c === 0x5c) return -1;
  }
  return -1;
}

// Index of the last non-blank byte.
function lastNonBlank(tail: Uint8Array): number {
  let i = tail.length - 1;
  while (i >= 0 && (tail[i] === 0x20 || tail[i] === 0x0d || tail[i] === 0x09)) i--;
  return i;
}

function endsClosed(tail: Uint8Array): boolean {
  const i = lastNonBlank(tail);
  return i >= 1 && tail[i] === 0x7d && tail[i - 1] === 0x7d;
}

const DIGIT0 = 48;

// Epoch ms of a canonical `YYYY-MM-DDTHH:MM:SS.sssZ` timestamp at [from, to); else NaN.
function timestampAt(b: Uint8Array, from: number, to: number): number {
  if (
    to - from === 24 && b[from + 4] === 45 && b[from + 10] === 84 && b[from + 19] === 46 &&
    b[from + 23] === 90
  ) {
    const d = (i: number) => b[from + i]! - DIGIT0;
    const t = Date.UTC(
      d(0) * 1000 + d(1) * 100 + d(2) * 10 + d(3),
      d(5) * 10 + d(6) - 1,
      d(8) * 10 + d(9),
      d(11) * 10 + d(12),
      d(14) * 10 + d(15),
      d(17) * 10 + d(18),
      d(20) * 100 + d(21) * 10 + d(22),
    );
    if (Number.isFinite(t)) return t;
  }
  return parseTimestamp(dec.decode(b.subarray(from, to)));
}

function lite(line: number, ts: number, kind: LiteRecord["kind"], type: string): LiteRecord {
  return {
    line,
    ts,
    kind,
    type,
    role: "",
    name: "",
    id: "",
    stop: "",
    payload: null,
    origin: false,
  };
}

// `…,"tool_call_id":"<id>","stop_reason":"<stop>"}}` at the end of the line,
// read backwards on bytes; false when the tail has another shape.
function toolTail(tail: Uint8Array, rec: LiteRecord): boolean {
  let i = lastNonBlank(tail) - 2; // before "}}"
  if (i < 0 || tail[i] !== 0x22) return false;
  const stopStart = plainStringStart(tail, i, 16);
  if (stopStart < 0 || !startsWith(tail, stopStart - P_STOP.length, P_STOP)) return false;
  i = stopStart - P_STOP.length - 1; // closing quote of the id
  if (i < 0 || tail[i] !== 0x22) return false;
  const idStart = plainStringStart(tail, i, 512);
  if (idStart < 0 || !startsWith(tail, idStart - P_ID.length, P_ID)) return false;
  rec.stop = intern(tail, stopStart, lastNonBlank(tail) - 2);
  rec.id = text(tail, idStart, i);
  return true;
}

// The fast path; null means "use the slow path".
function fast(head: Uint8Array, tail: Uint8Array, line: number): LiteRecord | null {
  if (!startsWith(head, 0, P_TS)) return null;
  const tsEnd = plainStringEnd(head, P_TS.length);
  if (tsEnd < 0 || !startsWith(head, tsEnd, P_TYPE)) return null;
  const kStart = tsEnd + P_TYPE.length;
  const kEnd = plainStringEnd(head, kStart);
  if (kEnd < 0 || !startsWith(head, kEnd, P_PAYLOAD)) return null;
  const kind = intern(head, kStart, kEnd);
  if (kind !== "model_msg" && kind !== "event_msg") return null;
  const tStart = kEnd + P_PAYLOAD.length;
  const tEnd = plainStringEnd(head, tStart);
  if (tEnd < 0 || !endsClosed(tail)) return null;
  const type = intern(head, tStart, tEnd);
  const ts = timestampAt(head, P_TS.length, tsEnd);
  if (kind === "event_msg") {
    // Events with nothing stats needs; the others are parsed in full.
    if (type === "tool_list_ready") return lite(line, ts, kind, type);
    if (type === "request_begin" && head.length === tEnd + 3) return lite(line, ts, kind, type);
    if (type === "request_end") {
      if (head.length !== tEnd + 1 + P_COMPLETED_END.length) return null;
      if (!startsWith(head, tEnd + 1, P_COMPLETED_END)) return null;
      const rec = lite(line, ts, kind, type);
      rec.payload = COMPLETED;
      return rec;
    }
    if (type === "approval_decision" && startsWith(head, tEnd + 1, P_DECISION)) {
      const dStart = tEnd + 1 + P_DECISION.length;
      const dEnd = plainStringEnd(head, dStart);
      if (dEnd < 0 || !startsWith(head, dEnd, P_DECISION_ID)) return null;
      const iStart = dEnd + P_DECISION_ID.length;
      const iEnd = plainStringEnd(head, iStart);
      if (iEnd < 0 || head.length !== iEnd + 3) return null;
      const rec = lite(line, ts, kind, type);
      rec.payload = { type, decision: intern(head, dStart, dEnd) };
      rec.id = text(head, iStart, iEnd);
      return rec;
    }
    return null;
  }
  if (!startsWith(head, tEnd + 1, P_ROLE)) return null;
  const rStart = tEnd + 1 + P_ROLE.length;
  const rEnd = plainStringEnd(head, rStart);
  if (rEnd < 0) return null;
  const rec = lite(line, ts, kind, type);
  rec.role = intern(head, rStart, rEnd);
  if (type === "tool_call" || type === "tool_call_output") {
    if (type === "tool_call") {
      if (!startsWith(head, rEnd, P_NAME)) return null;
      const nStart = rEnd + P_NAME.length;
      const nEnd = plainStringEnd(head, nStart);
      if (nEnd < 0) return null;
      rec.name = intern(head, nStart, nEnd);
    }
    if (toolTail(tail, rec)) return rec;
    // Another tail shape (e.g. fidelity after stop_reason): try the pattern.
    const m = TOOL_TAIL.exec(dec.decode(tail.subarray(Math.max(0, tail.length - TAIL_WINDOW))));
    if (!m) return null;
    try {
      rec.id = JSON.parse(m[1]!);
    } catch {
      return null;
    }
    rec.stop = m[2]!;
    return rec;
  }
  // Other complete messages: nothing more is needed.
  return rec;
}

function slow(bytes: Uint8Array, line: number): LiteRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(dec.decode(bytes));
  } catch (err) {
    return `not valid JSON (${err instanceof Error ? err.message : String(err)})`;
  }
  const v = value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "not a JSON object";
  const kind = v.type;
  const payload = v.payload as Record<string, unknown> | null;
  if (typeof v.timestamp !== "string") return "timestamp: expected a string";
  if (typeof kind !== "string" || !KINDS.has(kind)) return "type: expected an envelope type";
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    return "payload: expected an object";
  }
  const type = kind === "session_meta" ? "session_meta" : payload.type;
  if (typeof type !== "string") return "payload.type: expected a string";
  const rec = lite(line, parseTimestamp(v.timestamp), kind as LiteRecord["kind"], type);
  rec.payload = payload;
  rec.origin = v.origin !== undefined;
  if (typeof payload.role === "string") rec.role = payload.role;
  if (type === "tool_call" && typeof payload.name === "string") rec.name = payload.name;
  if (typeof payload.tool_call_id === "string") rec.id = payload.tool_call_id;
  if (typeof payload.stop_reason === "string") rec.stop = payload.stop_reason;
  return rec;
}

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
