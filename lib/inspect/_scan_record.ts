// Parsing one trace line for the stats scanner (see _scan.ts): a fast path on
// bytes for records in the canonical field order, and JSON.parse for the rest.
import { parseTimestamp } from "./format.ts";
import { jsonCostProblem } from "../protocol/bounded_json.ts";
import { cutText } from "../protocol/short_text.ts";

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

/**
 * Bytes of a name a scan keeps (a tool's name, a call id): past it the name is cut (and not
 * interned). Kept whole, interned with its bytes, 400 names of 0.9 MB took `trace stats` to
 * 819 MB (attack round 25 bounded C15).
 */
const NAME_BYTES = 1024;

function intern(b: Uint8Array, from: number, to: number): string {
  if (to - from > NAME_BYTES) return dec.decode(b.subarray(from, from + NAME_BYTES));
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

/** The fast path over a line's head and tail bytes; null means "use the slow path". */
export function fast(head: Uint8Array, tail: Uint8Array, line: number): LiteRecord | null {
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

/** The slow path: JSON.parse and a shape check; a string says why the line is skipped. */
export function slow(bytes: Uint8Array, line: number): LiteRecord | string {
  let value: unknown;
  const text = dec.decode(bytes);
  const costly = jsonCostProblem(text);
  if (costly !== undefined) return costly;
  try {
    value = JSON.parse(text);
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
  if (type === "tool_call" && typeof payload.name === "string") {
    rec.name = cutText(payload.name, NAME_BYTES);
  }
  if (typeof payload.tool_call_id === "string") rec.id = cutText(payload.tool_call_id, NAME_BYTES);
  if (typeof payload.stop_reason === "string") rec.stop = payload.stop_reason;
  return rec;
}
