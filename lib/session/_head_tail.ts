// Cheap looks at a trace file without reading all of it: its head (the
// session_meta and the first human prompt) and its tail (the last record and
// the last token_usage). Lines are parsed only when a cheap substring test
// says they may matter; damaged lines are skipped silently (these are
// summaries for listings, not validation). The windows are cut into lines by
// lib/trace/lines.ts.
import { splitGoalRound } from "../protocol/goal_round_marker.ts";
import { parseJsonBounded } from "../protocol/bounded_json.ts";
import type { TokenCounts } from "../protocol/types.ts";
import { readAt, textLines, textLinesFromEnd } from "../trace/lines.ts";
import { collectorEvery } from "../state/_gc.ts";
import { shortText } from "../protocol/short_text.ts";

const NL = 0x0a;
const dec = new TextDecoder();

/** Default size of the tail window, and of each head read. */
export const WINDOW = 64 * 1024;
/** The head read stops growing here (a first line longer than this is not a usable meta). */
const HEAD_CAP = 16 * 1024 * 1024;
/** Past this, the head read grows only to complete the first line. */
const HEAD_SOFT = 1024 * 1024;
/** The tail window stops doubling here. */
const TAIL_CAP = 8 * 1024 * 1024;

/**
 * Bytes the looks of one process read and inspect at once, together: a listing looks at 32
 * sessions at a time, and 40 traces whose first and last lines were 20 MB took `sessions list` to
 * 1038 MB (attack round 23 bounded B7). A look larger than this runs alone. A byte read costs
 * about four on its way (the bytes, the text, the line cut, the parsed string): at 48 MiB, three
 * 15 MB metas at once took a listing to 340 MB (round 24 bounded R4).
 */
export const LOOK_BUDGET = 16 * 1024 * 1024;

let lookBytes = 0;
const lookWaiters: (() => void)[] = [];
/** Large looks leave large strings V8 frees only in a full collection: one every 32 MiB of them. */
const collected = collectorEvery(32 * 1024 * 1024);

/** Run `fn`, which reads and inspects `bytes` of a file, within {@linkcode LOOK_BUDGET}. */
async function withinLookBudget<T>(bytes: number, fn: () => Promise<T>): Promise<T> {
  while (lookBytes > 0 && lookBytes + bytes > LOOK_BUDGET) {
    await new Promise<void>((resolve) => lookWaiters.push(resolve));
  }
  lookBytes += bytes;
  try {
    return await fn();
  } finally {
    lookBytes -= bytes;
    if (bytes >= 1024 * 1024) collected(bytes);
    for (const wake of lookWaiters.splice(0)) wake();
  }
}

type Obj = Record<string, unknown>;

/** Parse a JSON object; null for anything else or on error. */
export function parseObject(text: string): Obj | null {
  try {
    const v = parseJsonBounded(text, "a trace line");
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Obj : null;
  } catch {
    return null;
  }
}

/** The payload of a parsed record, or null. */
export function payloadOf(rec: Obj | null): Obj | null {
  const p = rec?.payload;
  return typeof p === "object" && p !== null && !Array.isArray(p) ? p as Obj : null;
}

/** A goal round's text without its leading `[goal]` block: the objective the user gave. */
function withoutGoalBlock(text: string): string {
  return splitGoalRound(text)?.body ?? text;
}

/** True when `p` is the payload of a human prompt: a user text without `sender`. */
export function isHumanText(p: Obj | null): p is Obj & { text: string } {
  return p !== null && p.type === "text" && p.role === "user" && p.sender === undefined &&
    typeof p.text === "string";
}

/** What the head of a file shows. */
export interface Head {
  /** The first record, parsed (null when the first line is not a JSON object). */
  first: Obj | null;
  /** True when a record other than the first line's exists in the part read. */
  more: boolean;
  /** The first human prompt before the first request_begin, if seen. */
  prompt: { text: string; timestamp: string } | null;
  /** The first user text of any sender before the first request_begin, if seen. */
  userText: string | null;
  /** True when the scan reached the first human prompt or the first request_begin. */
  done: boolean;
}

/** The longest string, and the most items of a list, a compacted head keeps. */
const KEEP_CHARS = 4096;
const KEEP_ITEMS = 64;

/** `v` with every string cut to KEEP_CHARS and every list to KEEP_ITEMS, copied; 8 levels deep. */
function compactValue(v: unknown, depth = 0): unknown {
  if (typeof v === "string") return v.length > KEEP_CHARS ? shortText(v, KEEP_CHARS) : v;
  if (typeof v !== "object" || v === null) return v;
  if (depth >= 8) return null;
  if (Array.isArray(v)) return v.slice(0, KEEP_ITEMS).map((x) => compactValue(x, depth + 1));
  const out: Obj = {};
  for (const [k, x] of Object.entries(v).slice(0, KEEP_ITEMS)) out[k] = compactValue(x, depth + 1);
  return out;
}

/**
 * `head` as a listing keeps it: what it shows, nothing of a size a trace
 * chooses (a meta of 15 MB, a prompt of 1 MB); see lib/protocol/short_text.ts.
 */
export function compactHead(head: Head): Head {
  return {
    ...head,
    first: head.first && compactValue(head.first) as Obj,
    prompt: head.prompt &&
      { text: shortText(head.prompt.text, KEEP_CHARS), timestamp: head.prompt.timestamp },
    userText: head.userText && shortText(head.userText, KEEP_CHARS),
  };
}

// Index of the quote closing the JSON string whose content starts at `from`.
function stringEnd(s: string, from: number): number {
  for (let i = s.indexOf('"', from); i !== -1; i = s.indexOf('"', i + 1)) {
    let slashes = 0;
    for (let j = i - 1; j >= from && s.charCodeAt(j) === 0x5c; j--) slashes++;
    if (slashes % 2 === 0) return i;
  }
  return -1;
}

const PROMPT_KEY = '"system_prompt":"';

/**
 * Parse the first line of a trace. The system prompt (most of a
 * session_meta's bytes, and never needed for a summary) is cut out before
 * parsing: its value comes back as "". Any other line parses as is.
 */
export function parseHeadLine(text: string): Obj | null {
  const k = text.indexOf(PROMPT_KEY);
  if (k !== -1) {
    const from = k + PROMPT_KEY.length;
    const end = stringEnd(text, from);
    if (end !== -1) {
      if (text.length - (end - from) > MAX_META_CHARS) return null;
      const rec = parseObject(text.slice(0, from) + text.slice(end));
      if (rec !== null) return rec;
    }
  }
  return text.length > MAX_META_CHARS ? null : parseObject(text);
}

/**
 * The longest first line parsed, its system prompt left out: a session_meta
 * holds ids, paths and the tool list, never megabytes besides its prompt. A
 * longer one is no usable meta (a 15 MB workspace, parsed for each session
 * listed, cost a listing 60 MB a look: attack round 24 bounded R4).
 */
const MAX_META_CHARS = 4 * 1024 * 1024;

/**
 * Inspect the lines of `text` (a file's start; `complete` when it is the
 * whole file). The first record's `system_prompt` is left out (see
 * {@linkcode parseHeadLine}).
 */
export function headOf(text: string, complete: boolean): Head {
  const head: Head = { first: null, more: false, prompt: null, userText: null, done: false };
  let lineNo = 0;
  for (const line of textLines(text, complete)) {
    if (line.trim() === "") continue;
    lineNo++;
    if (lineNo === 1) {
      head.first = parseHeadLine(line);
      continue;
    }
    if (line.includes('"type":"request_begin"')) {
      head.more = true;
      head.done = true;
      break;
    }
    if (!head.more || line.includes('"role":"user"')) {
      const rec = parseObject(line);
      if (rec === null) continue;
      head.more = true;
      const p = payloadOf(rec);
      if (rec.type !== "model_msg" || rec.origin !== undefined) continue;
      if (p?.type === "text" && p.role === "user" && typeof p.text === "string") {
        head.userText ??= p.text;
      }
      if (isHumanText(p)) {
        head.prompt = { text: withoutGoalBlock(p.text), timestamp: String(rec.timestamp ?? "") };
        head.done = true;
        break;
      }
    }
  }
  return head;
}

/**
 * Read and inspect the head of the file: at least `WINDOW` bytes, more while
 * the first line is incomplete or neither the first human prompt nor the
 * first request_begin (before which that prompt always comes) has been seen,
 * up to HEAD_SOFT bytes (HEAD_CAP to complete the first line).
 */
export async function readHead(file: Deno.FsFile, size: number): Promise<Head> {
  let want = Math.min(size, WINDOW);
  while (true) {
    const { head, complete, firstDone } = await withinLookBudget(want, async () => {
      const bytes = await readAt(file, 0, want);
      const complete = bytes.length >= size;
      const firstDone = bytes.indexOf(NL) !== -1 || complete;
      return { head: headOf(dec.decode(bytes), complete), complete, firstDone };
    });
    if (complete || head.done || want >= HEAD_CAP || (firstDone && want >= HEAD_SOFT)) return head;
    want = Math.min(size, want * 4, firstDone ? HEAD_SOFT : HEAD_CAP);
  }
}

/** What the tail of a file shows. */
export interface Tail {
  /** Timestamp of the last parseable record. */
  lastTimestamp: string | null;
  /** The last token_usage payload seen. */
  usage: { session: TokenCounts; request: TokenCounts } | null;
}

/** Scan complete lines of `text` from the end (the first line is skipped unless `fromStart`). */
export function tailOf(text: string, fromStart: boolean): Tail {
  const tail: Tail = { lastTimestamp: null, usage: null };
  for (const line of textLinesFromEnd(text, fromStart)) {
    if (tail.lastTimestamp !== null && tail.usage !== null) break;
    if (line.trim() === "") continue;
    const wantsUsage = tail.usage === null && line.includes('"token_usage"');
    if (tail.lastTimestamp !== null && !wantsUsage) continue;
    const rec = parseObject(line);
    if (rec === null || typeof rec.timestamp !== "string") continue;
    tail.lastTimestamp ??= rec.timestamp;
    const p = payloadOf(rec);
    if (wantsUsage && rec.type === "event_msg" && p?.type === "token_usage") {
      const u = p as unknown as { session: TokenCounts; request: TokenCounts };
      if (typeof u.session?.total === "number" && typeof u.request?.total === "number") {
        tail.usage = { session: u.session, request: u.request };
      }
    }
  }
  return tail;
}

/** Read the tail window (doubling while it shows no token_usage, up to a cap). */
export async function readTail(file: Deno.FsFile, size: number): Promise<Tail> {
  let want = Math.min(size, WINDOW);
  while (true) {
    const from = size - want;
    const tail = await withinLookBudget(
      want,
      async () => tailOf(dec.decode(await readAt(file, from, want)), from === 0),
    );
    if ((tail.usage !== null && tail.lastTimestamp !== null) || from === 0 || want >= TAIL_CAP) {
      return tail;
    }
    want = Math.min(size, want * 2, TAIL_CAP);
  }
}
