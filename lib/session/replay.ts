/**
 * The resume replay: from the records of a session's latest
 * trace file, rebuild what a resumed session needs: the committed history,
 * the inputs to carry into the next run, the counters, and the messages to
 * re-render. Pure: no I/O, no clock; the inputs are never modified (the
 * outputs share the input envelopes; synthesized messages take the timestamp
 * of the record that caused them).
 *
 * @module
 */
import { isComplete } from "../protocol/guards.ts";
import type {
  CompactionMode,
  CompactionReason,
  CompleteMessage,
  ModelMsgEnvelope,
  OmniMessage,
  SessionMetaEnvelope,
  TextMessage,
  TokenCounts,
} from "../protocol/types.ts";
import { contextSummaryText, extractSummary } from "./summary.ts";

/** The output text of a tool call whose result never reached the trace. Used in memory only, never written. */
export const INTERRUPTED_OUTPUT = "[interrupted: process exited before the tool finished]";

/** A complete model message in an envelope: what history and carry-over hold. */
export type ReplayMessage = ModelMsgEnvelope<CompleteMessage>;

/** A compaction that began and never ended (the process died during it). */
export interface DanglingCompaction {
  /** Why it began. */
  reason: CompactionReason;
  /** How it was compacting. */
  mode: CompactionMode;
}

/** What {@linkcode resumeTrace} rebuilds from one trace file. */
export interface ResumeReplay {
  /** The committed conversation, in order, for the new model context (setHistory). */
  history: ReplayMessage[];
  /** Inputs not yet sent (and placeholder outputs for unanswered committed calls), prepended to the next run; never written. */
  carryOver: ReplayMessage[];
  /** True when the file ends with a completed compaction: the context is closed and the next record goes to a new file. */
  contextClosed: boolean;
  /** The `[context_summary]` user text to prepend to the next run (closed summarize context only). */
  pendingSummary?: ModelMsgEnvelope<TextMessage>;
  /** Session token counts of the last `token_usage` (zeros when none). */
  sessionTokens: TokenCounts;
  /** `request.total` of the last `token_usage` (0 when none, or when the context is closed). */
  lastRequestTotal: number;
  /** Completed requests in the current context, compaction requests excluded (0 when closed). */
  sessionTurns: number;
  /** Every complete model message and every `abort` event, in order, for re-rendering (empty when closed). */
  renderMessages: OmniMessage[];
  /** The first `session_meta` record, or null. */
  meta: SessionMetaEnvelope | null;
  /** Set when a compaction began and never ended; the resumer closes it as failed. */
  danglingCompaction?: DanglingCompaction;
  /** The `to` of the last `workspace_moved` event: where the session now works (else the meta's workspace). */
  workspace?: string;
  /** The pair of the last `model_switched` event: what the session now runs on (else the meta's pair). */
  pair?: { provider: string; model_id: string };
}

/** An incremental replay: push records in file order, then finish once. */
export interface Replay {
  /** Feed the next record. */
  push(msg: OmniMessage): void;
  /** The result for everything pushed so far. */
  finish(): ResumeReplay;
}

function zeroCounts(): TokenCounts {
  return { cache_read: 0, cache_write: 0, output: 0, total: 0 };
}

function isOutput(m: ReplayMessage): boolean {
  return m.payload.type === "tool_call_output";
}

function callIdOf(m: ReplayMessage): string {
  return (m.payload as { tool_call_id: string }).tool_call_id;
}

function placeholder(toolCallId: string, timestamp: string): ReplayMessage {
  return {
    timestamp,
    type: "model_msg",
    payload: {
      type: "tool_call_output",
      role: "user",
      output: INTERRUPTED_OUTPUT,
      tool_call_id: toolCallId,
      stop_reason: "aborted",
    },
  };
}

/**
 * Start an incremental replay. {@linkcode resumeTrace} is this over an array;
 * a loader can stream records into it without holding them in a list.
 */
export function createReplay(): Replay {
  // Long because: one closure-based replay whose methods share the meta, the history and the token
  // counters; each method is short.
  let meta: SessionMetaEnvelope | null = null;
  let sessionTokens = zeroCounts();
  let lastRequestTotal = 0;
  let last: OmniMessage | null = null;

  // Text of the request in flight and of the last completed request (closure).
  let requestText = "";
  let lastCompletedText = "";

  let pending: ReplayMessage[] = [];
  let snapshot: ReplayMessage[] = [];
  let outputs: ReplayMessage[] = [];
  let inRequest = false;
  let inCompaction = false;
  let dangling: DanglingCompaction | null = null;
  // Index in `pending` where the dangling compaction span began: user texts
  // queued after it (the compaction prompt or its corrective note) are not
  // conversational input when the span never ends.
  let danglingPendingFrom = -1;
  let movedTo: string | undefined;
  let pair: { provider: string; model_id: string } | undefined;
  const committed = new Set<string>();
  const answered = new Set<string>();
  const history: ReplayMessage[] = [];
  const render: OmniMessage[] = [];
  let turns = 0;
  let finished = false;

  // Keep non-outputs; keep a tool output only while its call is committed
  // and not yet answered (a later duplicate of the same id is dropped too).
  const eligible = (msgs: ReplayMessage[]): ReplayMessage[] => {
    const out: ReplayMessage[] = [];
    for (const m of msgs) {
      if (isOutput(m)) {
        const id = callIdOf(m);
        if (!committed.has(id) || answered.has(id)) continue;
        answered.add(id);
      }
      out.push(m);
    }
    return out;
  };

  const dropRound = () => {
    const reclaimed = inCompaction ? snapshot.filter(isOutput) : snapshot;
    if (danglingPendingFrom >= 0) danglingPendingFrom += reclaimed.length;
    pending = reclaimed.length > 0 ? [...reclaimed, ...pending] : pending;
    snapshot = [];
    outputs = [];
    inRequest = false;
  };

  const commitRound = (at: string) => {
    // Ids answered by this round's own inputs, decided before marking.
    const answeredHere = new Set<string>();
    for (const m of snapshot) {
      if (!isOutput(m)) continue;
      const id = callIdOf(m);
      if (committed.has(id) && !answered.has(id)) answeredHere.add(id);
    }
    for (const id of committed) {
      if (!answered.has(id) && !answeredHere.has(id)) {
        history.push(placeholder(id, at));
        answered.add(id);
      }
    }
    history.push(...eligible(snapshot));
    for (const m of outputs) {
      history.push(m);
      const p = m.payload;
      if (p.type === "tool_call" && p.stop_reason === "completed") committed.add(p.tool_call_id);
    }
    if (!inCompaction) turns += 1;
    snapshot = [];
    outputs = [];
    inRequest = false;
  };

  const onModel = (msg: ReplayMessage) => {
    render.push(msg);
    const p = msg.payload;
    if (p.role === "user") {
      pending.push(msg);
    } else if (inRequest) {
      outputs.push(msg);
      if (p.type === "text") requestText += p.text;
    }
  };

  const onEvent = (msg: OmniMessage) => {
    const p = msg.payload as { type: string } & Record<string, unknown>;
    switch (p.type) {
      case "request_begin":
        if (inRequest) dropRound();
        snapshot = pending;
        pending = [];
        if (danglingPendingFrom >= 0) danglingPendingFrom = 0;
        inRequest = true;
        requestText = "";
        break;
      case "request_end":
        if (!inRequest) break;
        if (p.status === "completed") {
          lastCompletedText = requestText;
          commitRound(msg.timestamp);
        } else {
          dropRound();
        }
        break;
      case "token_usage": {
        const u = p as unknown as { session: TokenCounts; request: TokenCounts };
        sessionTokens = { ...u.session };
        lastRequestTotal = u.request.total;
        break;
      }
      case "compaction_begin":
        inCompaction = true;
        dangling = { reason: p.reason as CompactionReason, mode: p.mode as CompactionMode };
        danglingPendingFrom = pending.length;
        break;
      case "compaction_end":
        inCompaction = false;
        dangling = null;
        danglingPendingFrom = -1;
        break;
      case "abort":
        render.push(msg);
        break;
      case "workspace_moved":
        if (typeof p.to === "string" && p.to !== "") movedTo = p.to;
        break;
      case "model_switched":
        if (typeof p.provider === "string" && typeof p.model_id === "string") {
          pair = { provider: p.provider, model_id: p.model_id };
        }
        break;
    }
  };

  return {
    push(msg: OmniMessage): void {
      if (finished) throw new Error("replay already finished");
      if (Array.isArray(msg.origin) && msg.origin.length > 0) return;
      if (msg.type === "session_meta") {
        if (meta === null) meta = msg;
        return;
      }
      last = msg;
      if (msg.type === "model_msg") {
        if (isComplete(msg.payload)) onModel(msg as ReplayMessage);
      } else if (msg.type === "event_msg") {
        onEvent(msg);
      }
    },
    finish(): ResumeReplay {
      finished = true;
      const closure = closeIfCompacted(last, lastCompletedText);
      if (closure) {
        return {
          ...closure,
          sessionTokens,
          meta,
          ...(movedTo ? { workspace: movedTo } : {}),
          ...(pair ? { pair } : {}),
        };
      }

      const end = last?.timestamp ?? meta?.timestamp ?? "";
      if (inRequest) dropRound();
      if (dangling && danglingPendingFrom >= 0) {
        const from = danglingPendingFrom;
        pending = pending.filter((m, i) => i < from || m.payload.type !== "text");
      }
      const carried = eligible(pending);
      for (const id of committed) {
        if (!answered.has(id)) carried.push(placeholder(id, end));
      }
      const out: ResumeReplay = {
        history,
        carryOver: carried,
        contextClosed: false,
        sessionTokens,
        lastRequestTotal,
        sessionTurns: turns,
        renderMessages: render,
        meta,
      };
      if (dangling) out.danglingCompaction = dangling;
      if (movedTo) out.workspace = movedTo;
      if (pair) out.pair = pair;
      return out;
    },
  };
}

// A file ending in a completed compaction is a closed context: nothing to
// replay. In summarize mode the summary of the last completed request becomes
// the pending summary; an empty one (older traces) voids the closure and the
// file is replayed turn by turn instead.
function closeIfCompacted(
  last: OmniMessage | null,
  summaryText: string,
): Omit<ResumeReplay, "sessionTokens" | "meta"> | null {
  if (last?.type !== "event_msg") return null;
  const p = last.payload;
  if (p.type !== "compaction_end" || p.status !== "completed") return null;
  const closed = {
    history: [],
    carryOver: [],
    contextClosed: true,
    lastRequestTotal: 0,
    sessionTurns: 0,
    renderMessages: [],
  };
  if (p.mode !== "summarize") return closed;
  const summary = extractSummary(summaryText);
  if (summary === "") return null; // legacy trace: void the closure
  const text: TextMessage = {
    type: "text",
    role: "user",
    text: contextSummaryText(summary),
    stop_reason: "completed",
  };
  return {
    ...closed,
    pendingSummary: { timestamp: last.timestamp, type: "model_msg", payload: text },
  };
}

/**
 * Replay the records of one trace file: committed rounds become history, an
 * unfinished or failed round gives its input back as carry-over, and every
 * committed tool call left unanswered gets an in-memory placeholder output.
 * See {@linkcode ResumeReplay} for what each output means.
 */
export function resumeTrace(messages: Iterable<OmniMessage>): ResumeReplay {
  const replay = createReplay();
  for (const msg of messages) replay.push(msg);
  return replay.finish();
}

/**
 * Whether a resumed session has anything to compact: `ok` when the replay
 * has completed turns, `just_compacted` when the context was closed by a
 * completed compaction, `empty` otherwise.
 */
export function replayCompactability(replay: ResumeReplay): "ok" | "just_compacted" | "empty" {
  if (replay.contextClosed) return "just_compacted";
  return replay.sessionTurns > 0 ? "ok" : "empty";
}
