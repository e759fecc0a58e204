// Builds the penguin records of an imported conversation in trace order:
// user-side inputs, then each model request bracketed by request_begin /
// request_end (its usage just before the end), then the outputs of its tool
// calls. Every tool call is paired with its output by id; an output with no
// call, or a call with no output, is reported in the loss book (the call gets
// an aborted placeholder output so the trace stays valid).
import type {
  CompleteMessage,
  EventMsgEnvelope,
  EventPayload,
  ModelMsgEnvelope,
  Sender,
  StopReason,
  TokenCounts,
} from "../protocol/types.ts";
import type { LossBook } from "./import_report.ts";
import type { RecordSink } from "./foreign_session.ts";

/** The output given to a recorded tool call whose output was never recorded. */
export const NO_OUTPUT = "[no output recorded: the session ended before the tool finished]";

/** Where a record came from in the foreign file (for the loss report). */
export interface At {
  /** Recorded time (ISO-8601). */
  ts: string;
  /** 1-based line. */
  line: number;
}

/** Token usage of one request, as foreign files give it. */
export interface Usage {
  /** Input tokens not served from a cache (cache writes included). */
  input: number;
  /** Input tokens read from a cache. */
  cached: number;
  /** Output tokens, reasoning included. */
  output: number;
}

/** Usage recorded as uncached input, cache writes, cache reads and output (Claude Code, pi). */
export function cacheSplitUsage(
  input: number,
  cacheWrite: number,
  cacheRead: number,
  output: number,
): Usage {
  return { input: input + cacheWrite, cached: cacheRead, output };
}

/** Usage recorded as all input, the part of it read from a cache, and output (Codex). */
export function cachedPartUsage(input: number, cached: number, output: number): Usage {
  return { input: Math.max(0, input - cached), cached, output };
}

/** The builder. */
export interface Transcript {
  /** A user text (a prompt, or a harness note with `sender`). */
  user(text: string, at: At, sender?: Sender): void;
  /** An assistant message of the current request (opens one when none is open). */
  assistant(msg: CompleteMessage, at: At, requestKey?: string): void;
  /** The usage of the open request (else of the last one, when it has none yet). */
  usage(u: Usage, at: At): void;
  /** The output of a tool call (closes the open request). */
  output(toolCallId: string, text: string, failed: boolean, at: At): void;
  /** A `subagent` pointer to a child session. */
  pointer(sessionId: string, at: At): void;
  /** Close what is open and return the records. */
  finish(): Array<ModelMsgEnvelope | EventMsgEnvelope>;
}

function counts(u: Usage): TokenCounts {
  return {
    cache_read: u.cached,
    cache_write: u.input,
    output: u.output,
    total: u.cached + u.input + u.output,
  };
}

function add(a: TokenCounts, b: TokenCounts): TokenCounts {
  return {
    cache_read: a.cache_read + b.cache_read,
    cache_write: a.cache_write + b.cache_write,
    output: a.output + b.output,
    total: a.total + b.total,
  };
}

/** What a transcript carries between its calls. */
interface TranscriptState {
  file: string;
  loss: LossBook;
  records: Array<ModelMsgEnvelope | EventMsgEnvelope>;
  /** Where records go: `records`, or the caller's sink. */
  put: RecordSink;
  /** The time of the latest record. */
  lastTs: string | undefined;
  /** The time the latest record was written with (a valid one). */
  lastTime?: string;
  /** The request open now. */
  open: { key: string | undefined; usage: TokenCounts | null; lastTs: string } | null;
  lastClosedHadUsage: boolean;
  /** Usage of the session so far. */
  session: TokenCounts;
  /** Called, not yet answered. */
  calls: Map<string, At>;
  answered: Set<string>;
}

/**
 * A foreign time with at most millisecond digits: a fraction of 16 digits spelled a digits-only
 * secret, which masking then made no timestamp at all (attack round 23 secrets B7).
 */
export function foreignTime(ts: string): string {
  return ts.replace(/(\.\d{3})\d+/, "$1");
}

/** The time of a record with none a trace accepts, before any record had one. */
const NO_TIME = "1970-01-01T00:00:00.000Z";

/**
 * The time a record made at `ts` is written with: `ts` (see {@linkcode foreignTime}), or when it
 * is no time at all (a line without `timestamp`), the last record's, else {@linkcode NO_TIME}: a
 * transcript of lines without times was converted whole and then refused as "a bug in the
 * importer", every record invalid (attack round 23 bounded B8).
 */
function recordTime(st: TranscriptState, ts: string): string {
  const t = foreignTime(ts);
  const time = t !== "" && !Number.isNaN(Date.parse(t)) ? t : st.lastTime ?? NO_TIME;
  st.lastTime = time;
  return time;
}

function event(st: TranscriptState, payload: EventPayload, ts: string): void {
  st.lastTs = ts;
  st.put({ timestamp: recordTime(st, ts), type: "event_msg", payload });
}

function model(st: TranscriptState, payload: CompleteMessage, ts: string): void {
  st.lastTs = ts;
  st.put({ timestamp: recordTime(st, ts), type: "model_msg", payload });
}

function sessionUsage(st: TranscriptState, request: TokenCounts, ts: string): void {
  st.session = add(st.session, request);
  event(st, { type: "token_usage", session: { ...st.session }, request }, ts);
}

function close(st: TranscriptState): void {
  const open = st.open;
  if (!open) return;
  if (open.usage) sessionUsage(st, open.usage, open.lastTs);
  st.lastClosedHadUsage = open.usage !== null;
  event(st, { type: "request_end", status: "completed" }, open.lastTs);
  st.open = null;
}

/** Calls of earlier requests still unanswered get a placeholder before the next request. */
function unanswered(st: TranscriptState): void {
  for (const [id, at] of st.calls) {
    st.loss.note(
      "tool call without an output",
      st.file,
      at.line,
      `given the placeholder output ${JSON.stringify(NO_OUTPUT)}`,
    );
    model(
      st,
      {
        type: "tool_call_output",
        role: "user",
        output: NO_OUTPUT,
        tool_call_id: id,
        stop_reason: "aborted",
      },
      st.lastTs ?? at.ts,
    );
  }
  st.calls.clear();
}

function assistant(
  st: TranscriptState,
  msg: CompleteMessage,
  at: At,
  requestKey: string | undefined,
): void {
  if (
    st.open && requestKey !== undefined && st.open.key !== undefined &&
    st.open.key !== requestKey
  ) {
    close(st);
  }
  if (!st.open) {
    unanswered(st);
    event(st, { type: "request_begin" }, at.ts);
    st.open = { key: requestKey, usage: null, lastTs: at.ts };
  }
  st.open.lastTs = at.ts;
  if (msg.type === "tool_call") st.calls.set(msg.tool_call_id, at);
  model(st, msg, at.ts);
}

function usage(st: TranscriptState, u: Usage, at: At): void {
  if (st.open) {
    st.open.usage = counts(u);
    return;
  }
  if (!st.lastClosedHadUsage) {
    // Usage recorded after its request's outputs: attach it after the fact.
    sessionUsage(st, counts(u), at.ts);
    st.lastClosedHadUsage = true;
    return;
  }
  st.loss.note(
    "token usage outside a model request",
    st.file,
    at.line,
    "no model request to attribute it to",
  );
}

function output(
  st: TranscriptState,
  toolCallId: string,
  text: string,
  failed: boolean,
  at: At,
): void {
  close(st);
  if (!st.calls.has(toolCallId)) {
    st.loss.note(
      st.answered.has(toolCallId)
        ? "second tool output for one call"
        : "tool output without a call",
      st.file,
      at.line,
      "a penguin trace pairs each tool call with exactly one output",
    );
    return;
  }
  st.calls.delete(toolCallId);
  st.answered.add(toolCallId);
  const stop: StopReason = failed ? "failed" : "completed";
  model(
    st,
    {
      type: "tool_call_output",
      role: "user",
      output: text,
      tool_call_id: toolCallId,
      stop_reason: stop,
    },
    at.ts,
  );
}

/**
 * A new transcript of `file`; unpaired calls and outputs go to `loss`. With
 * `sink`, each record goes there as it is made (and `finish` returns none).
 */
export function createTranscript(file: string, loss: LossBook, sink?: RecordSink): Transcript {
  const records: Array<ModelMsgEnvelope | EventMsgEnvelope> = [];
  const st: TranscriptState = {
    file,
    loss,
    records,
    put: sink ?? ((r) => records.push(r)),
    lastTs: undefined,
    open: null,
    lastClosedHadUsage: true,
    session: { cache_read: 0, cache_write: 0, output: 0, total: 0 },
    calls: new Map(),
    answered: new Set(),
  };
  return {
    user(text, at, sender) {
      close(st);
      const msg: CompleteMessage = { type: "text", role: "user", text, stop_reason: "completed" };
      if (sender) msg.sender = sender;
      model(st, msg, at.ts);
    },
    assistant: (msg, at, requestKey) => assistant(st, msg, at, requestKey),
    usage: (u, at) => usage(st, u, at),
    output: (toolCallId, text, failed, at) => output(st, toolCallId, text, failed, at),
    pointer(sessionId, at) {
      close(st);
      event(st, { type: "subagent", session_id: sessionId }, at.ts);
    },
    finish() {
      close(st);
      unanswered(st);
      return st.records;
    },
  };
}
