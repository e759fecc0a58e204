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

/** A new transcript of `file`; unpaired calls and outputs go to `loss`. */
export function createTranscript(file: string, loss: LossBook): Transcript {
  // Long because: a closure-based builder whose methods share the open request, pending calls and
  // usage of one transcript.
  const records: Array<ModelMsgEnvelope | EventMsgEnvelope> = [];
  let open: { key: string | undefined; usage: TokenCounts | null; lastTs: string } | null = null;
  let lastClosedHadUsage = true;
  let session: TokenCounts = { cache_read: 0, cache_write: 0, output: 0, total: 0 };
  const calls = new Map<string, At>(); // called, not yet answered
  const answered = new Set<string>();

  const event = (payload: EventPayload, ts: string) =>
    records.push({ timestamp: ts, type: "event_msg", payload });
  const model = (payload: CompleteMessage, ts: string) =>
    records.push({ timestamp: ts, type: "model_msg", payload });

  const close = () => {
    if (!open) return;
    if (open.usage) {
      session = add(session, open.usage);
      event({ type: "token_usage", session: { ...session }, request: open.usage }, open.lastTs);
    }
    lastClosedHadUsage = open.usage !== null;
    event({ type: "request_end", status: "completed" }, open.lastTs);
    open = null;
  };

  // Calls of earlier requests still unanswered get a placeholder before the next request.
  const unanswered = () => {
    for (const [id, at] of calls) {
      loss.note(
        "tool call without an output",
        file,
        at.line,
        `given the placeholder output ${JSON.stringify(NO_OUTPUT)}`,
      );
      model(
        {
          type: "tool_call_output",
          role: "user",
          output: NO_OUTPUT,
          tool_call_id: id,
          stop_reason: "aborted",
        },
        records.at(-1)?.timestamp ?? at.ts,
      );
    }
    calls.clear();
  };

  return {
    user(text, at, sender) {
      close();
      const msg: CompleteMessage = { type: "text", role: "user", text, stop_reason: "completed" };
      if (sender) msg.sender = sender;
      model(msg, at.ts);
    },
    assistant(msg, at, requestKey) {
      if (open && requestKey !== undefined && open.key !== undefined && open.key !== requestKey) {
        close();
      }
      if (!open) {
        unanswered();
        event({ type: "request_begin" }, at.ts);
        open = { key: requestKey, usage: null, lastTs: at.ts };
      }
      open.lastTs = at.ts;
      if (msg.type === "tool_call") calls.set(msg.tool_call_id, at);
      model(msg, at.ts);
    },
    usage(u, at) {
      if (open) {
        open.usage = counts(u);
        return;
      }
      if (!lastClosedHadUsage) {
        // Usage recorded after its request's outputs: attach it after the fact.
        const c = counts(u);
        session = add(session, c);
        event({ type: "token_usage", session: { ...session }, request: c }, at.ts);
        lastClosedHadUsage = true;
        return;
      }
      loss.note(
        "token usage outside a model request",
        file,
        at.line,
        "no model request to attribute it to",
      );
    },
    output(toolCallId, text, failed, at) {
      close();
      if (!calls.has(toolCallId)) {
        loss.note(
          answered.has(toolCallId)
            ? "second tool output for one call"
            : "tool output without a call",
          file,
          at.line,
          "a penguin trace pairs each tool call with exactly one output",
        );
        return;
      }
      calls.delete(toolCallId);
      answered.add(toolCallId);
      const stop: StopReason = failed ? "failed" : "completed";
      model(
        {
          type: "tool_call_output",
          role: "user",
          output: text,
          tool_call_id: toolCallId,
          stop_reason: stop,
        },
        at.ts,
      );
    },
    pointer(sessionId, at) {
      close();
      event({ type: "subagent", session_id: sessionId }, at.ts);
    },
    finish() {
      close();
      unanswered();
      return records;
    },
  };
}
