/**
 * Spans from trace records, with the OpenTelemetry GenAI semantic
 * conventions. One builder turns the records of one or more sessions (a
 * parent and its subagent children) into finished OTLP spans as the records
 * arrive, so a file export and a live export run the same code:
 *
 * - one trace per session tree: the trace id comes from the top session's id;
 * - a root span per session (`session <agent>`); a subagent session's root is
 *   a child of the tool call span that spawned it (from its meta's `parent`
 *   link, else from the parent's `subagent` pointer);
 * - a task span per task (`invoke_agent <agent>`): a task starts at a user
 *   text the user or a parent agent wrote, outside a compaction;
 * - a span per model request (`chat <model>`, request_begin to request_end)
 *   with provider, model, tokens, finish reason and time to first chunk;
 * - a span per tool call (`execute_tool <name>`, from the call to its output)
 *   with approval and status;
 * - a span per compaction (compaction_begin to compaction_end).
 *
 * Span ids derive from the session id and each span's opening record (its
 * time, or the tool call id), so the same records give the same spans.
 * Message contents (prompts, answers, tool arguments and outputs, the system
 * prompt) are left out unless `includeContent`; whatever text goes in is
 * redacted unless `redact: false`.
 *
 * @module
 */
import type { OmniMessage, SessionMeta } from "../protocol/types.ts";
import { redactSecrets } from "../inspect/redact.ts";
import { wholeBlockTag } from "../session/outline.ts";
import {
  attributes,
  type AttrInput,
  isoToUnixNano,
  type OtlpSpan,
  SPAN_KIND,
  spanIdOf,
  STATUS_CODE,
  traceIdOf,
} from "./otlp_json.ts";
import { forgetOldest } from "../protocol/forget_oldest.ts";
import { cutText } from "../protocol/short_text.ts";

/** Options of {@linkcode createSpanBuilder}. */
export interface SpanBuilderOptions {
  /** Put message contents on the spans (the GenAI opt-in); default false. */
  includeContent?: boolean;
  /** Redact secret-shaped values in whatever text goes on a span; default true. */
  redact?: boolean;
}

/** Turns trace records into finished spans. */
export interface SpanBuilder {
  /**
   * Start a session at `time` (its first record's). Records of a session
   * that was not opened open it themselves when they start with its
   * session_meta. Opening an open session does nothing.
   */
  open(meta: SessionMeta, time: string): void;
  /** One record of session `sessionId`; returns the spans it finished. */
  record(sessionId: string, msg: OmniMessage): OtlpSpan[];
  /** The session's records ended: close what is open (at its last record's time). */
  close(sessionId: string): OtlpSpan[];
  /** Close every open session. */
  closeAll(): OtlpSpan[];
}

type Attrs = Record<string, AttrInput | undefined | null>;

interface Open {
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  start: string;
  attrs: Attrs;
  error?: { type: string; message?: string };
}

interface RequestOpen extends Open {
  toolCalls: number;
  parts: Record<string, unknown>[];
}

interface ToolOpen extends Open {
  toolName: string;
}

interface TaskOpen extends Open {
  requests: number;
  input: number;
  output: number;
  prompts: string[];
}

interface SessionState {
  meta: SessionMeta;
  /** The pair the session runs on: `session_meta`'s, then each `model_switched` event's. */
  model: { provider: string; modelId: string };
  agent: string;
  traceId: string;
  root: Open;
  /** The time of the latest record, and of the one before it. */
  last: string;
  previous: string;
  task: TaskOpen | null;
  request: RequestOpen | null;
  compaction: Open | null;
  tools: Map<string, ToolOpen>;
  toolSpanIds: Map<string, string>;
  usedIds: Set<string>;
  subagentCalls: string[];
  requests: number;
  toolCallCount: number;
  input: number;
  output: number;
}

// Providers named differently by the GenAI conventions' well-known values.
const PROVIDER_NAMES: Record<string, string> = {
  google: "gcp.gemini",
  gemini: "gcp.gemini",
  moonshot: "moonshot_ai",
  mistral: "mistral_ai",
  xai: "x_ai",
};

/** The `gen_ai.provider.name` of a penguin provider group. */
export function genAiProviderName(provider: string): string {
  return PROVIDER_NAMES[provider] ?? provider;
}

/** The agent id from an Agent State path (`…/agents/<id>/agent_state`), else "penguin". */
export function agentNameOf(meta: SessionMeta): string {
  const m = String(meta.agent_state ?? "").match(/agents[\\/]([^\\/]+)[\\/]agent_state[\\/]?$/);
  return m ? m[1]! : "penguin";
}

// Harness blocks in user texts that continue a task rather than start one.
const NOT_A_TASK = new Set(["context_summary", "user_steering", "turn_aborted", "turn_retried"]);

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function later(a: string, b: string): string {
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/** What a span builder carries across sessions: its options and the open sessions. */
interface BuilderState {
  /** Message contents go on the spans. */
  content: boolean;
  /** Text as it may go on a span (redacted unless turned off). */
  clean: (s: string) => string;
  sessions: Map<string, SessionState>;
  /** Where a child session hangs, learned from its parent's `subagent` pointer. */
  childLinks: Map<string, { traceId: string; parentSpanId: string }>;
}

function finish(b: BuilderState, s: SessionState, o: Open, end: string): OtlpSpan {
  return {
    traceId: s.traceId,
    spanId: o.spanId,
    ...(o.parentSpanId !== undefined ? { parentSpanId: o.parentSpanId } : {}),
    name: o.name,
    kind: o.kind,
    startTimeUnixNano: isoToUnixNano(o.start),
    endTimeUnixNano: isoToUnixNano(later(o.start, end)),
    attributes: attributes({ ...o.attrs, "error.type": o.error?.type }),
    status: o.error
      ? {
        code: STATUS_CODE.error,
        ...(o.error.message !== undefined ? { message: b.clean(o.error.message) } : {}),
      }
      : { code: STATUS_CODE.unset },
  };
}

/** A span error of `type`, with `message` when the record gave one. */
function errorOf(type: string, message: unknown): { type: string; message?: string } {
  return { type, ...(typeof message === "string" ? { message } : {}) };
}

/** A span id for `parts` not yet used in this session (equal times get a counter). */
function freshId(s: SessionState, ...parts: string[]): string {
  let id = spanIdOf(s.meta.session_id, ...parts);
  for (let n = 2; s.usedIds.has(id); n++) id = spanIdOf(s.meta.session_id, ...parts, String(n));
  s.usedIds.add(id);
  return id;
}

function common(s: SessionState): Attrs {
  return { "gen_ai.conversation.id": s.meta.session_id };
}

/** Where a new session's root span hangs: under its parent's tool call, else at a trace's top. */
function placeOf(
  b: BuilderState,
  meta: SessionMeta,
): { traceId: string; parentSpanId: string | undefined } {
  const parentLink = meta.parent as { session_id?: unknown; tool_call_id?: unknown } | undefined;
  if (
    parentLink && typeof parentLink.session_id === "string" &&
    typeof parentLink.tool_call_id === "string"
  ) {
    const p = b.sessions.get(parentLink.session_id);
    return {
      traceId: p?.traceId ?? traceIdOf(parentLink.session_id),
      parentSpanId: p?.toolSpanIds.get(parentLink.tool_call_id) ??
        spanIdOf(parentLink.session_id, "tool", parentLink.tool_call_id),
    };
  }
  return b.childLinks.get(meta.session_id) ??
    { traceId: traceIdOf(meta.session_id), parentSpanId: undefined };
}

function openSession(b: BuilderState, meta: SessionMeta, time: string): void {
  if (b.sessions.has(meta.session_id)) return;
  const { traceId, parentSpanId } = placeOf(b, meta);
  const agent = agentNameOf(meta);
  const rootId = spanIdOf(meta.session_id, "session", time);
  const root: Open = {
    spanId: rootId,
    ...(parentSpanId !== undefined ? { parentSpanId } : {}),
    name: `session ${agent}`,
    kind: SPAN_KIND.internal,
    start: time,
    attrs: {
      "gen_ai.conversation.id": meta.session_id,
      "gen_ai.agent.name": agent,
      "gen_ai.provider.name": genAiProviderName(meta.provider),
      "gen_ai.request.model": meta.model_id,
      "penguin.session.id": meta.session_id,
      "penguin.session.source": typeof meta.source === "string" ? meta.source : undefined,
      "penguin.provider": meta.provider,
      "gen_ai.system_instructions": b.content && typeof meta.system_prompt === "string"
        ? JSON.stringify([{ type: "text", content: b.clean(meta.system_prompt) }])
        : undefined,
    },
  };
  b.sessions.set(meta.session_id, {
    meta,
    model: { provider: meta.provider, modelId: meta.model_id },
    agent,
    traceId,
    root,
    last: time,
    previous: time,
    task: null,
    request: null,
    compaction: null,
    tools: new Map(),
    toolSpanIds: new Map(),
    usedIds: new Set([rootId]),
    subagentCalls: [],
    requests: 0,
    toolCallCount: 0,
    input: 0,
    output: 0,
  });
}

function endTask(b: BuilderState, s: SessionState, end: string, out: OtlpSpan[]): void {
  const t = s.task;
  if (!t) return;
  s.task = null;
  t.attrs["gen_ai.usage.input_tokens"] = t.input;
  t.attrs["gen_ai.usage.output_tokens"] = t.output;
  t.attrs["penguin.task.requests"] = t.requests;
  if (b.content && t.prompts.length > 0) {
    t.attrs["gen_ai.input.messages"] = JSON.stringify([{
      role: "user",
      parts: t.prompts.map((p) => ({ type: "text", content: b.clean(p) })),
    }]);
  }
  out.push(finish(b, s, t, end));
}

function startTask(s: SessionState, time: string, text: string, sender: unknown): void {
  const n = s.root.attrs["penguin.session.tasks"] as number | undefined;
  s.root.attrs["penguin.session.tasks"] = (n ?? 0) + 1;
  s.task = {
    spanId: freshId(s, "task", time),
    parentSpanId: s.root.spanId,
    name: `invoke_agent ${s.agent}`,
    kind: SPAN_KIND.internal,
    start: time,
    attrs: {
      ...common(s),
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": s.agent,
      "gen_ai.provider.name": genAiProviderName(s.model.provider),
      "gen_ai.request.model": s.model.modelId,
      "penguin.task.sender": typeof sender === "string" ? sender : "user",
    },
    requests: 0,
    input: 0,
    output: 0,
    prompts: [text],
  };
}

type Payload = Record<string, unknown>;

/** A user text: a prompt from a human (or the parent agent) starts a task, unless it continues one. */
function onUserText(b: BuilderState, s: SessionState, t: string, p: Payload, out: OtlpSpan[]) {
  const human = p.sender === undefined || p.sender === "parent_agent";
  if (!human || s.compaction || NOT_A_TASK.has(wholeBlockTag(String(p.text)) ?? "")) return;
  if (s.task && s.task.requests === 0) s.task.prompts.push(String(p.text));
  else {
    endTask(b, s, s.previous, out); // it ended with the record before this prompt
    startTask(s, t, String(p.text), p.sender);
  }
}

/**
 * Tool spans open at once, span ids and run_subagent calls a session keeps at most: past them the
 * oldest open call's span ends `unfinished` and the oldest ids are forgotten. A trace of 300,000
 * calls never answered kept a span open for each: 622 MB (attack round 24 bounded R16).
 */
const MAX_OPEN_TOOLS = 4096;
const MAX_KEPT_IDS = 65_536;

/**
 * Characters of a tool's name or a call id a span keeps (copied when cut): kept whole in every
 * span, megabyte names took the OTLP export to 1056 MB (attack round 25 bounded C15).
 */
const SPAN_NAME_CHARS = 256;

function onToolCall(b: BuilderState, s: SessionState, t: string, p: Payload, out: OtlpSpan[]) {
  const id = cutText(String(p.tool_call_id), SPAN_NAME_CHARS);
  const name = cutText(String(p.name), SPAN_NAME_CHARS);
  s.toolCallCount++;
  if (s.request) {
    s.request.toolCalls++;
    if (b.content) {
      s.request.parts.push({
        type: "tool_call",
        id,
        name,
        arguments: b.clean(String(p.arguments)),
      });
    }
  }
  const preferred = spanIdOf(s.meta.session_id, "tool", id);
  const spanId = s.usedIds.has(preferred) ? freshId(s, "tool", id, t) : preferred;
  s.usedIds.add(spanId);
  forgetOldest(s.usedIds, MAX_KEPT_IDS);
  s.toolSpanIds.set(id, spanId);
  forgetOldest(s.toolSpanIds, MAX_KEPT_IDS);
  if (name === "run_subagent" || name === "input_subagent") {
    s.subagentCalls.push(id);
    if (s.subagentCalls.length > MAX_OPEN_TOOLS) s.subagentCalls.shift();
  }
  if (s.tools.size >= MAX_OPEN_TOOLS) {
    const [oldId, old] = s.tools.entries().next().value!;
    s.tools.delete(oldId);
    old.attrs["penguin.tool.status"] = "unfinished";
    old.error ??= {
      type: "unfinished",
      message: `more than ${MAX_OPEN_TOOLS} tool calls open at once; this one's span ended here`,
    };
    out.push(finish(b, s, old, t));
  }
  s.tools.set(id, {
    spanId,
    parentSpanId: (s.task ?? s.root).spanId,
    name: `execute_tool ${name}`,
    kind: SPAN_KIND.internal,
    start: t,
    toolName: name,
    attrs: {
      ...common(s),
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": name,
      "gen_ai.tool.call.id": id,
      "gen_ai.tool.type": "function",
      "gen_ai.tool.call.arguments": b.content ? b.clean(String(p.arguments)) : undefined,
    },
  });
}

function onToolOutput(b: BuilderState, s: SessionState, t: string, p: Payload, out: OtlpSpan[]) {
  const id = cutText(String(p.tool_call_id), SPAN_NAME_CHARS);
  const tool = s.tools.get(id);
  if (!tool) return;
  s.tools.delete(id);
  const stop = String(p.stop_reason ?? "completed");
  tool.attrs["penguin.tool.status"] = stop;
  if (b.content) tool.attrs["gen_ai.tool.call.result"] = b.clean(String(p.output));
  const proc = p.penguin_process as { exit_code?: unknown } | undefined;
  if (proc && typeof proc.exit_code === "number") {
    tool.attrs["process.exit.code"] = proc.exit_code;
  }
  if (stop !== "completed" && !tool.error) tool.error = { type: stop };
  out.push(finish(b, s, tool, t));
}

function onModel(b: BuilderState, s: SessionState, t: string, p: Payload, out: OtlpSpan[]) {
  const type = p.type;
  if (type === "text" && p.role === "user") return onUserText(b, s, t, p, out);
  if (type === "tool_call") return onToolCall(b, s, t, p, out);
  if (type === "tool_call_output") return onToolOutput(b, s, t, p, out);
  if ((type === "text" || type === "thinking") && p.role === "assistant" && s.request) {
    if (b.content) {
      const text = String(type === "text" ? p.text : p.thinking);
      s.request.parts.push({
        type: type === "text" ? "text" : "reasoning",
        content: b.clean(text),
      });
    }
  }
}

function onRequestBegin(s: SessionState, t: string): void {
  s.requests++;
  if (s.task) s.task.requests++;
  s.request = {
    spanId: freshId(s, "request", t),
    parentSpanId: (s.compaction ?? s.task ?? s.root).spanId,
    name: `chat ${s.model.modelId}`,
    kind: SPAN_KIND.client,
    start: t,
    attrs: {
      ...common(s),
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": genAiProviderName(s.model.provider),
      "gen_ai.request.model": s.model.modelId,
      "gen_ai.request.stream": true,
      "penguin.request.compaction": s.compaction ? true : undefined,
    },
    toolCalls: 0,
    parts: [],
  };
}

function onTokenUsage(s: SessionState, p: Payload): void {
  const r = p.request as Record<string, unknown> | undefined;
  if (!r || !s.request) return;
  const input = num(r.cache_read) + num(r.cache_write);
  const output = num(r.output);
  Object.assign(s.request.attrs, {
    "gen_ai.usage.input_tokens": input,
    "gen_ai.usage.output_tokens": output,
    "gen_ai.usage.cache_read.input_tokens": num(r.cache_read),
  });
  s.input += input;
  s.output += output;
  if (s.task) {
    s.task.input += input;
    s.task.output += output;
  }
}

function onRequestEnd(b: BuilderState, s: SessionState, t: string, p: Payload, out: OtlpSpan[]) {
  const r = s.request;
  if (!r) return;
  s.request = null;
  const status = String(p.status);
  const finish_reason = status !== "completed" ? status : r.toolCalls > 0 ? "tool_calls" : "stop";
  Object.assign(r.attrs, {
    "gen_ai.response.finish_reasons": [finish_reason],
    "penguin.request.status": status,
    "penguin.request.attempt": typeof p.attempt === "number" ? p.attempt : undefined,
    "penguin.request.retry_in_ms": typeof p.retry_in_ms === "number" ? p.retry_in_ms : undefined,
    "gen_ai.response.time_to_first_chunk": typeof p.first_token_ms === "number"
      ? p.first_token_ms / 1000
      : undefined,
  });
  if (b.content && r.parts.length > 0) {
    r.attrs["gen_ai.output.messages"] = JSON.stringify([
      { role: "assistant", parts: r.parts, finish_reason },
    ]);
  }
  if (status !== "completed") r.error = errorOf(status, p.error_message);
  out.push(finish(b, s, r, t));
}

function onApproval(s: SessionState, p: Payload): void {
  const tool = s.tools.get(cutText(String(p.tool_call_id), SPAN_NAME_CHARS));
  if (!tool) return;
  tool.attrs["penguin.tool.approval"] = String(p.decision);
  if (p.decision !== "allow") tool.error = errorOf(`approval_${String(p.decision)}`, p.reason);
}

function onCompactionBegin(s: SessionState, t: string, p: Payload): void {
  s.compaction = {
    spanId: freshId(s, "compaction", t),
    parentSpanId: (s.task ?? s.root).spanId,
    name: `compaction ${String(p.mode)}`,
    kind: SPAN_KIND.internal,
    start: t,
    attrs: {
      ...common(s),
      "penguin.compaction.reason": String(p.reason),
      "penguin.compaction.mode": String(p.mode),
      "penguin.compaction.context": typeof p.context === "number" ? p.context : undefined,
      "penguin.compaction.turns": typeof p.turns === "number" ? p.turns : undefined,
    },
  };
}

function onCompactionEnd(
  b: BuilderState,
  s: SessionState,
  t: string,
  p: Payload,
  out: OtlpSpan[],
): void {
  const c = s.compaction;
  if (!c) return;
  s.compaction = null;
  const status = String(p.status);
  c.attrs["penguin.compaction.status"] = status;
  if (typeof p.attempt === "number") c.attrs["penguin.compaction.attempt"] = p.attempt;
  if (status !== "completed") c.error = errorOf(status, p.error_message);
  out.push(finish(b, s, c, t));
}

/** A `subagent` pointer: the child's spans hang under the call that spawned it. */
function onSubagent(b: BuilderState, s: SessionState, p: Payload): void {
  const child = String(p.session_id);
  // The spawning call: the latest subagent tool call still waiting for its output.
  const callId = s.subagentCalls.findLast((id) => s.tools.has(id));
  const spanId = callId !== undefined ? s.toolSpanIds.get(callId)! : undefined;
  if (callId !== undefined) s.tools.get(callId)!.attrs["penguin.subagent.session_id"] = child;
  if (!b.childLinks.has(child)) {
    b.childLinks.set(child, {
      traceId: s.traceId,
      parentSpanId: spanId ?? (s.task ?? s.root).spanId,
    });
  }
}

function onEvent(b: BuilderState, s: SessionState, t: string, p: Payload, out: OtlpSpan[]) {
  switch (p.type) {
    case "model_switched":
      // An explicit switch on resume: later requests run on the new pair.
      if (typeof p.provider === "string" && typeof p.model_id === "string") {
        s.model = { provider: p.provider, modelId: p.model_id };
      }
      return;
    case "request_begin":
      return onRequestBegin(s, t);
    case "token_usage":
      return onTokenUsage(s, p);
    case "request_end":
      return onRequestEnd(b, s, t, p, out);
    case "approval_decision":
      return onApproval(s, p);
    case "abort":
      if (s.task) s.task.error = errorOf("aborted", p.reason);
      return;
    case "compaction_begin":
      return onCompactionBegin(s, t, p);
    case "compaction_end":
      return onCompactionEnd(b, s, t, p, out);
    case "subagent":
      return onSubagent(b, s, p);
  }
}

function record(b: BuilderState, sessionId: string, msg: OmniMessage): OtlpSpan[] {
  const out: OtlpSpan[] = [];
  if (msg.origin !== undefined) return out; // a child's message as its parent streamed it
  let s = b.sessions.get(sessionId);
  if (!s) {
    if (msg.type !== "session_meta") return out;
    openSession(b, msg.payload, msg.timestamp);
    s = b.sessions.get(sessionId)!;
  }
  s.previous = s.last;
  s.last = later(s.last, msg.timestamp);
  if (msg.type === "session_meta") return out;
  const p = msg.payload as Payload;
  if (msg.type === "model_msg") onModel(b, s, msg.timestamp, p, out);
  else onEvent(b, s, msg.timestamp, p, out);
  return out;
}

function closeSession(b: BuilderState, sessionId: string): OtlpSpan[] {
  const s = b.sessions.get(sessionId);
  if (!s) return [];
  b.sessions.delete(sessionId);
  const out: OtlpSpan[] = [];
  for (const tool of s.tools.values()) {
    tool.attrs["penguin.tool.status"] = "unfinished";
    tool.error ??= { type: "unfinished", message: "the trace ends before the tool's output" };
    out.push(finish(b, s, tool, s.last));
  }
  if (s.request) {
    s.request.error = { type: "unfinished", message: "the trace ends inside the request" };
    out.push(finish(b, s, s.request, s.last));
  }
  if (s.compaction) {
    s.compaction.error = { type: "unfinished", message: "the trace ends inside the compaction" };
    out.push(finish(b, s, s.compaction, s.last));
  }
  endTask(b, s, s.last, out);
  Object.assign(s.root.attrs, {
    "gen_ai.usage.input_tokens": s.input,
    "gen_ai.usage.output_tokens": s.output,
    "penguin.session.requests": s.requests,
    "penguin.session.tool_calls": s.toolCallCount,
  });
  out.push(finish(b, s, s.root, s.last));
  return out;
}

/** Create a span builder: the open sessions' state, and one handler per record kind. */
export function createSpanBuilder(options: SpanBuilderOptions = {}): SpanBuilder {
  const b: BuilderState = {
    content: options.includeContent === true,
    clean: (s) => (options.redact === false ? s : redactSecrets(s)),
    sessions: new Map(),
    childLinks: new Map(),
  };
  return {
    open: (meta, time) => openSession(b, meta, time),
    record: (sessionId, msg) => record(b, sessionId, msg),
    close: (sessionId) => closeSession(b, sessionId),
    closeAll: () => [...b.sessions.keys()].flatMap((id) => closeSession(b, id)),
  };
}
