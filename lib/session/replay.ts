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

/** What the replay's steps share: the meta, the history and the token counters. */
interface ReplayState {
  meta: SessionMetaEnvelope | null;
  sessionTokens: TokenCounts;
  lastRequestTotal: number;
  last: OmniMessage | null;
  /** Text of the request in flight. */
  requestText: string;
  /** Text of the last completed request (closure). */
  lastCompletedText: string;
  pending: ReplayMessage[];
  snapshot: ReplayMessage[];
  outputs: ReplayMessage[];
  inRequest: boolean;
  inCompaction: boolean;
  dangling: DanglingCompaction | null;
  /**
   * Index in `pending` where the dangling compaction span began: user texts
   * queued after it (the compaction prompt or its corrective note) are not
   * conversational input when the span never ends.
   */
  danglingPendingFrom: number;
  movedTo: string | undefined;
  pair: { provider: string; model_id: string } | undefined;
  committed: Set<string>;
  answered: Set<string>;
  history: ReplayMessage[];
  render: OmniMessage[];
  turns: number;
  finished: boolean;
}

// Keep non-outputs; keep a tool output only while its call is committed
// and not yet answered (a later duplicate of the same id is dropped too).
function eligible(s: ReplayState, msgs: ReplayMessage[]): ReplayMessage[] {
  const out: ReplayMessage[] = [];
  for (const m of msgs) {
    if (isOutput(m)) {
      const id = callIdOf(m);
      if (!s.committed.has(id) || s.answered.has(id)) continue;
      s.answered.add(id);
    }
    out.push(m);
  }
  return out;
}

function dropRound(s: ReplayState) {
  const reclaimed = s.inCompaction ? s.snapshot.filter(isOutput) : s.snapshot;
  if (s.danglingPendingFrom >= 0) s.danglingPendingFrom += reclaimed.length;
  s.pending = reclaimed.length > 0 ? [...reclaimed, ...s.pending] : s.pending;
  s.snapshot = [];
  s.outputs = [];
  s.inRequest = false;
}

function commitRound(s: ReplayState, at: string) {
  // Ids answered by this round's own inputs, decided before marking.
  const answeredHere = new Set<string>();
  for (const m of s.snapshot) {
    if (!isOutput(m)) continue;
    const id = callIdOf(m);
    if (s.committed.has(id) && !s.answered.has(id)) answeredHere.add(id);
  }
  for (const id of s.committed) {
    if (!s.answered.has(id) && !answeredHere.has(id)) {
      s.history.push(placeholder(id, at));
      s.answered.add(id);
    }
  }
  s.history.push(...eligible(s, s.snapshot));
  for (const m of s.outputs) {
    s.history.push(m);
    const p = m.payload;
    if (p.type === "tool_call" && p.stop_reason === "completed") s.committed.add(p.tool_call_id);
  }
  if (!s.inCompaction) s.turns += 1;
  s.snapshot = [];
  s.outputs = [];
  s.inRequest = false;
}

function onModel(s: ReplayState, msg: ReplayMessage) {
  s.render.push(msg);
  const p = msg.payload;
  if (p.role === "user") {
    s.pending.push(msg);
  } else if (s.inRequest) {
    s.outputs.push(msg);
    if (p.type === "text") s.requestText += p.text;
  }
}

function onEvent(s: ReplayState, msg: OmniMessage) {
  const p = msg.payload as { type: string } & Record<string, unknown>;
  switch (p.type) {
    case "request_begin":
      if (s.inRequest) dropRound(s);
      s.snapshot = s.pending;
      s.pending = [];
      if (s.danglingPendingFrom >= 0) s.danglingPendingFrom = 0;
      s.inRequest = true;
      s.requestText = "";
      break;
    case "request_end":
      if (!s.inRequest) break;
      if (p.status === "completed") {
        s.lastCompletedText = s.requestText;
        commitRound(s, msg.timestamp);
      } else {
        dropRound(s);
      }
      break;
    case "token_usage": {
      const u = p as unknown as { session: TokenCounts; request: TokenCounts };
      s.sessionTokens = { ...u.session };
      s.lastRequestTotal = u.request.total;
      break;
    }
    case "compaction_begin":
      s.inCompaction = true;
      s.dangling = { reason: p.reason as CompactionReason, mode: p.mode as CompactionMode };
      s.danglingPendingFrom = s.pending.length;
      break;
    case "compaction_end":
      s.inCompaction = false;
      s.dangling = null;
      s.danglingPendingFrom = -1;
      break;
    case "abort":
      s.render.push(msg);
      break;
    case "workspace_moved":
      if (typeof p.to === "string" && p.to !== "") s.movedTo = p.to;
      break;
    case "model_switched":
      if (typeof p.provider === "string" && typeof p.model_id === "string") {
        s.pair = { provider: p.provider, model_id: p.model_id };
      }
      break;
  }
}

/** Feed the next record (see `Replay.push`). */
function pushRecord(s: ReplayState, msg: OmniMessage): void {
  if (s.finished) throw new Error("replay already finished");
  if (Array.isArray(msg.origin) && msg.origin.length > 0) return;
  if (msg.type === "session_meta") {
    if (s.meta === null) s.meta = msg;
    return;
  }
  s.last = msg;
  if (msg.type === "model_msg") {
    if (isComplete(msg.payload)) onModel(s, msg as ReplayMessage);
  } else if (msg.type === "event_msg") {
    onEvent(s, msg);
  }
}

/** The result for everything pushed so far (see `Replay.finish`). */
function finishReplay(s: ReplayState): ResumeReplay {
  s.finished = true;
  const closure = closeIfCompacted(s.last, s.lastCompletedText);
  if (closure) {
    return {
      ...closure,
      sessionTokens: s.sessionTokens,
      meta: s.meta,
      ...(s.movedTo ? { workspace: s.movedTo } : {}),
      ...(s.pair ? { pair: s.pair } : {}),
    };
  }

  const end = s.last?.timestamp ?? s.meta?.timestamp ?? "";
  if (s.inRequest) dropRound(s);
  if (s.dangling && s.danglingPendingFrom >= 0) {
    const from = s.danglingPendingFrom;
    s.pending = s.pending.filter((m, i) => i < from || m.payload.type !== "text");
  }
  const carried = eligible(s, s.pending);
  for (const id of s.committed) {
    if (!s.answered.has(id)) carried.push(placeholder(id, end));
  }
  const out: ResumeReplay = {
    history: s.history,
    carryOver: carried,
    contextClosed: false,
    sessionTokens: s.sessionTokens,
    lastRequestTotal: s.lastRequestTotal,
    sessionTurns: s.turns,
    renderMessages: s.render,
    meta: s.meta,
  };
  if (s.dangling) out.danglingCompaction = s.dangling;
  if (s.movedTo) out.workspace = s.movedTo;
  if (s.pair) out.pair = s.pair;
  return out;
}

/**
 * Start an incremental replay. {@linkcode resumeTrace} is this over an array;
 * a loader can stream records into it without holding them in a list.
 */
export function createReplay(): Replay {
  const s: ReplayState = {
    meta: null,
    sessionTokens: zeroCounts(),
    lastRequestTotal: 0,
    last: null,
    requestText: "",
    lastCompletedText: "",
    pending: [],
    snapshot: [],
    outputs: [],
    inRequest: false,
    inCompaction: false,
    dangling: null,
    danglingPendingFrom: -1,
    movedTo: undefined,
    pair: undefined,
    committed: new Set(),
    answered: new Set(),
    history: [],
    render: [],
    turns: 0,
    finished: false,
  };
  return {
    push: (msg) => pushRecord(s, msg),
    finish: () => finishReplay(s),
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
