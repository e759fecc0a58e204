/**
 * A live session: the fixed configuration of a conversation (model pair,
 * workspace, assembled system prompt, tool set), its trace writer, its
 * command registry and its turn loop. Built from {@linkcode SessionParts},
 * so a new session and a resumed one (meta, history, carry-over and
 * counters replayed from the trace) go through the same constructor.
 *
 * Trace order at a session's first run: `session_meta` (unless a
 * resumed trace already has it), the prompt, `tool_list_ready`, then the
 * turns. After a completed compaction the trace rotates lazily: the next
 * record goes to the next file, after a `session_meta` and a
 * `tool_list_ready`.
 *
 * The trace is the record of what ran, so a trace that cannot be written
 * (a full disk, an I/O error) stops the session: the first failed append
 * aborts the running task, nothing more is written, no tool starts unless
 * its `tool_call` and `approval_decision` are in the trace, and `run` (or
 * `compact`) rejects with that one error naming the trace file, as does
 * every later `run` ({@linkcode Session.traceFailure}).
 *
 * @module
 */
import { eventMsg, sessionMetaMsg, userText } from "../protocol/builders.ts";
import { isRecordable } from "../protocol/guards.ts";
import { defaultWarn, errorMessage, PenguinError } from "../protocol/errors.ts";
import type {
  CompleteMessage,
  EventPayload,
  OmniMessage,
  SessionMeta,
  SessionMetaEnvelope,
  ToolSpec,
} from "../protocol/types.ts";
import type { TraceWriter } from "../trace/writer.ts";
import { toolCallPreview } from "../display/tool_preview.ts";
import type { ResolvedModel } from "../models/resolve.ts";
import { streamModel } from "../models/stream.ts";
import type { ModelStreamItem } from "../models/outcome.ts";
import { createToolCallIds, type ToolCallIds } from "../models/tool_call_ids.ts";
import { estimatePromptTokens } from "../models/shaping.ts";
import type { ThinkingLevel } from "../models/wire.ts";
import type { SandboxPolicy } from "../sandbox/policy.ts";
import { keepStandIns, type StandInKeeping } from "../sandbox/_placeholders.ts";
import { type CommandWarmUp, warmUpCommands } from "../tools/command_warm_up.ts";
import { type BackgroundNotice, noticeMessage } from "../tools/background_notice.ts";
import type { CommandPolicy } from "../tools/command_policy.ts";
import { executeTool, secretsOf } from "../tools/environment.ts";
import type { ProcessRegistry } from "../tools/processes.ts";
import { maskSecrets, type Secret } from "../tools/secret_mask.ts";
import type { ToolPermission } from "../tools/tool.ts";
import {
  type ApprovalMode,
  type ApproveFn,
  approverForMode,
  type AskFn,
  withCommandPolicy,
} from "./approval.ts";
import { createEngine, type Engine, type EngineRequest, type EngineState } from "./engine.ts";
import { type RunOutcome, trackOutcome } from "./outcome.ts";
import {
  type Compactability,
  type CompactionResult,
  type CompactionSettings,
  type Compactor,
  createCompactor,
} from "./compaction.ts";
import type { Toolset } from "./toolset.ts";
import { createModelMasking } from "./_mask_model.ts";
import { maskEngineState, maskRecord } from "./_mask_history.ts";
import { foldImages } from "./attachments.ts";
import { type ChildRegistry, createChildRegistry } from "./subagents/registry.ts";
import {
  type BackgroundTask,
  backgroundTasks,
  onAnyNotice,
  takeAllNotices,
  withBackgroundMessages,
} from "./subagents/family.ts";

/** Everything a session is made of. A resumed session passes `state`, `metaWritten` and the writer it reopened. */
export interface SessionParts {
  /** The session's fixed configuration, as recorded at the head of its trace. */
  meta: SessionMeta;
  /** True when the trace already starts with this meta (a resumed session). */
  metaWritten: boolean;
  /** The trace writer (holds the session lock). */
  writer: TraceWriter;
  /** The model endpoint and entry settings. */
  model: ResolvedModel;
  /** The tools. */
  toolset: Toolset;
  /** Real path of the workspace. */
  workspace: string;
  /** Real path of the session scratchpad. */
  scratchpad: string;
  /** Directories the file tools may read but never change (the agent's installed skills). */
  readOnlyRoots?: string[];
  /** Sandbox policy for commands. */
  sandbox: SandboxPolicy;
  /** Vault values for commands (never shown to the model). */
  vault: Record<string, string>;
  /** Other values masked in every tool output and notice (the API keys); vault values always are. */
  secrets?: readonly Secret[];
  /** The command policy snapshot. */
  commandPolicy: CommandPolicy;
  /** The command registry (disposed with the session). */
  processes: ProcessRegistry;
  /** The children registry: subagents and restored reports (default: one that cannot spawn). */
  children?: ChildRegistry;
  /** Default thinking level. */
  thinkingLevel?: ThinkingLevel;
  /** Max requests per task; ≤ 0 = unlimited. */
  maxTurns: number;
  /** Output ceiling (entry `max_tokens` over the agent's `model.max_tokens`). */
  maxTokens?: number;
  /** Idle timeout between upstream events (ms). */
  idleTimeoutMs: number;
  /** Replayed engine state (history, carry-over, counters). */
  state?: EngineState;
  /** Records written at the start of the first run, before its input (e.g. a `workspace_moved` event). */
  pendingRecords?: OmniMessage[];
  /** Compaction settings (absent: never compacts). */
  compaction?: CompactionSettings;
  /** The trace file ends with a completed compaction: rotate before the next record (resume). */
  rotateFirst?: boolean;
  /** A resumed session's recorded messages, for hosts that re-render them. */
  resumedHistory?: readonly OmniMessage[];
  /** Set when the session runs on another pair than its session_meta records: named in `tool_list_ready`. */
  switchedPair?: { provider: string; model_id: string };
  /** Session tool-call ids (pre-registered with historical ids on resume). */
  toolCallIds?: ToolCallIds;
  /**
   * Retry wait override (tests and embedders); default 2 s, 4 s, 8 s, 16 s,
   * 30 s, or a server's Retry-After up to 60 s.
   */
  retryDelayMs?: (n: number) => number;
  /** Diagnostics sink (default stderr). */
  warn?: (line: string) => void;
}

/** Options of one {@linkcode Session.run}. */
export interface RunOptions {
  /** Abort: cancels the in-flight request and the running tools; the run ends with an `abort` event. */
  signal?: AbortSignal;
  /**
   * Approval: a mode or a function. The project command policy always wraps
   * it. Absent → every tool call is denied.
   */
  approve?: ApproveFn | ApprovalMode;
  /** Asked for the calls a mode leaves open (`read-only`, `always-ask`); absent → denied. */
  ask?: AskFn;
  /** Thinking level for this run's requests. */
  thinkingLevel?: ThinkingLevel;
}

/** Token and turn counters of a session. */
export interface SessionUsage {
  /** Totals over every completed request. */
  sessionTokens: { cache_read: number; cache_write: number; output: number; total: number };
  /** `request.total` of the last completed request (the context size). */
  lastRequestTotal: number;
  /** Completed requests in the current context. */
  sessionTurns: number;
}

/** A live session. */
export interface Session {
  /** `session-YYYY-MM-DD-HH-mm-ss-<8hex>`. */
  readonly sessionId: string;
  /** Provider group of the model pair. */
  readonly provider: string;
  /** Model id of the model pair. */
  readonly modelId: string;
  /** Absolute workspace path (as recorded). */
  readonly workspaceDir: string;
  /** The `session_meta` envelope. */
  readonly metaMessage: SessionMetaEnvelope;
  /** The tools offered to the model. */
  readonly tools: readonly ToolSpec[];
  /** The current trace file (it may not exist before the first run). */
  readonly tracePath: string;
  /** Real path of the session scratchpad (`<agent>/scratchpad/<session id>`), which the model can reach. */
  readonly scratchpad: string;
  /** Whether a task is running. */
  readonly running: boolean;
  /** Set once the trace could not be written: the session runs nothing more. */
  readonly traceFailure?: PenguinError | undefined;
  /** For a reopened session: its recorded messages, for re-rendering. */
  readonly resumedHistory?: readonly OmniMessage[];
  /** A call's permission (`r`/`rw`; some tools decide from the arguments), undefined for unknown tools. */
  toolPermission(name: string, args?: Record<string, unknown>): ToolPermission | undefined;
  /**
   * Why a call would fail before its tool does anything (unknown tool,
   * arguments that are not a JSON object or do not fit the tool's schema),
   * or null: hosts check it before putting a call to a person.
   */
  toolArgumentError(name: string, rawArguments: string): string | null;
  /**
   * The line renderers show for a complete call of one of this session's tools
   * (`exec_command <- $ ls`; the generic `<name> <arguments>` for a tool
   * without a preview); undefined for a name the session does not have.
   */
  toolPreview(name: string, args: Record<string, unknown>): string | undefined;
  /**
   * `text` with the session's secrets (vault values, API keys) masked, as in
   * tool outputs: for text penguin reads from where the model writes.
   */
  maskSecrets(text: string): string;
  /**
   * Run one task. Yields the OmniMessage stream (partials, completes, events;
   * never the caller's own prompt) until the task ends, and returns how it
   * ended ({@linkcode RunOutcome}): `completed` (a turn without tool calls),
   * `max_turns`, `aborted` or `failed` (both after an `abort` event). Never
   * throws for model or tool failures; rejects with
   * {@linkcode Session.traceFailure} when the trace cannot be written.
   */
  run(
    input: string | CompleteMessage[],
    opts?: RunOptions,
  ): AsyncGenerator<OmniMessage, RunOutcome>;
  /** Queue steering for the running task (delivered as `[user_steering]`); false when idle. */
  steer(input: string | CompleteMessage[]): boolean;
  /** End a retry wait now; false when none is in progress. */
  skipRetryWait(): boolean;
  /** Token and turn counters. */
  usage(): SessionUsage;
  /**
   * Write an event to the trace between tasks (a host's own record, such
   * as `goal_finished`). Rejects while a task runs, and with
   * {@linkcode Session.traceFailure} when the trace cannot be written.
   */
  recordEvent(payload: EventPayload): Promise<void>;
  /**
   * Compact the context now (reason `manual`), yielding the compaction's
   * messages. Skipped (nothing written) unless {@linkcode compactability} is `ok`.
   */
  compact(opts?: { signal?: AbortSignal }): AsyncGenerator<OmniMessage, CompactionResult>;
  /** Whether there is something to compact. */
  compactability(): Compactability;
  /** Background notices queued while idle (emptied). They otherwise ride the next run. */
  takeBackgroundNotices(): BackgroundNotice[];
  /** Be told when a background notice arrives; returns the unsubscribe. */
  onBackgroundNotice(fn: (notice: BackgroundNotice) => void): () => void;
  /** Receive the origin-tagged messages of background subagents while no task runs (a task streams them); returns the unsubscribe. */
  onBackgroundMessage(fn: (message: OmniMessage) => void): () => void;
  /** The registered background work: command sessions and subagents. */
  backgroundTasks(): BackgroundTask[];
  /** Whether a subagent started with `run_in_background` is still working. */
  hasRunningBackgroundSubagents(): boolean;
  /** Abort a running task, kill every command the session started, close the trace. Idempotent. */
  dispose(): Promise<void>;
}

function toMessages(input: string | CompleteMessage[], what: string): CompleteMessage[] {
  const messages = typeof input === "string" ? [userText(input)] : input;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new PenguinError("usage", `Cannot ${what}: the input is empty`);
  }
  for (const m of messages) {
    const ok = m?.role === "user" &&
      (m.type === "text" || m.type === "image_url" || m.type === "inline_data");
    if (!ok) {
      throw new PenguinError(
        "usage",
        `Cannot ${what}: expected user messages (text or images), found ${
          JSON.stringify(m?.type)
        } from ${JSON.stringify(m?.role)}`,
      );
    }
  }
  return messages;
}

/** The mutable state of a live session, shared by its steps. */
interface LiveState {
  metaWritten: boolean;
  bootstrapped: boolean;
  disposed: boolean;
  compacting: boolean;
  /** A completed compaction closed the file: the next record starts a new one. */
  rotatePending: boolean;
  /** The running task's (or compaction's) controller. */
  current: AbortController | undefined;
  lastWrite: Promise<unknown>;
  /** The first failed trace write. */
  traceFailure: PenguinError | undefined;
}

/** A live session's parts and state, as its steps see them. */
interface Live {
  parts: SessionParts;
  st: LiveState;
  warn: (line: string) => void;
  metaMessage: SessionMetaEnvelope;
  children: ChildRegistry;
  /** Record one message (rotating the file first when a compaction asked for it). */
  record(msg: OmniMessage): void;
  /** Whether everything recorded so far reached the file. */
  recorded(): Promise<boolean>;
  toolListReady(): OmniMessage;
}

/** How commands are confined (additive field): in a new session's session_meta and every tool_list_ready. */
function sandboxRecordOf(parts: SessionParts) {
  return {
    mode: parts.sandbox.mode,
    network: parts.sandbox.network,
    ...(parts.sandbox.extraWritable.length > 0
      ? { extra_writable: [...parts.sandbox.extraWritable] }
      : {}),
    git: parts.sandbox.git ?? "read-only",
  };
}

/** The trace side of a live session: appends, rotation after a compaction, the first failure stops all. */
function liveRecorder(parts: SessionParts, warn: (line: string) => void): Live {
  const { writer, toolset, meta } = parts;
  const sandboxRecord = sandboxRecordOf(parts);
  const metaMessage = sessionMetaMsg(
    parts.metaWritten || meta.sandbox !== undefined ? meta : { ...meta, sandbox: sandboxRecord },
  );
  const st: LiveState = {
    metaWritten: parts.metaWritten,
    bootstrapped: false,
    disposed: false,
    compacting: false,
    rotatePending: parts.rotateFirst ?? false,
    current: undefined,
    lastWrite: Promise.resolve(),
    traceFailure: undefined,
  };
  const toolListReady = () =>
    eventMsg({
      type: "tool_list_ready",
      tools: toolset.specs,
      sandbox: sandboxRecord,
      ...(parts.switchedPair ? { model: { ...parts.switchedPair } } : {}),
    });
  /** The first failed write stops everything: a trace with a hole in it would lie. */
  const failed = (err: unknown) => {
    if (st.traceFailure) return;
    st.traceFailure = new PenguinError(
      "runtime",
      `${
        errorMessage(err)
      }; session ${meta.session_id} was stopped so that nothing runs unrecorded`,
      { cause: err },
    );
    st.current?.abort(st.traceFailure);
  };
  const append = (msg: OmniMessage) => {
    if (st.traceFailure) return;
    st.lastWrite = writer.append(msg).catch(failed);
  };
  return {
    parts,
    st,
    warn,
    metaMessage,
    children: parts.children ??
      createChildRegistry({ parentSessionId: meta.session_id, depth: 1, warn }),
    toolListReady,
    record(msg) {
      if (st.rotatePending && isRecordable(msg) && !st.traceFailure) {
        // A completed compaction closed the file: the next one starts with meta and tool list.
        st.rotatePending = false;
        st.lastWrite = writer.rotate().catch(failed);
        append(sessionMetaMsg(metaMessage.payload));
        append(toolListReady());
      }
      append(msg);
    },
    async recorded() {
      await st.lastWrite;
      return st.traceFailure === undefined;
    },
  };
}

/** `items` as they come; `onCall` runs at the first fragment of a tool call among them. */
async function* noticingCalls(
  items: AsyncIterable<ModelStreamItem>,
  onCall: () => void,
): AsyncGenerator<ModelStreamItem> {
  let seen = false;
  for await (const item of items) {
    const type = !seen && item.kind === "message" ? item.message.type : undefined;
    if (type === "partial_tool_call" || type === "tool_call") {
      seen = true;
      onCall();
    }
    yield item;
  }
}

/**
 * The engine and the compactor of a live session, over its model, tools and trace; `onCall`
 * runs as the model streams a tool call.
 */
function liveEngine(
  live: Live,
  onCall: () => void,
): { engine: Engine; compactor: Compactor } {
  const { parts, children, record, warn } = live;
  const { toolset, meta } = parts;
  const secrets = secretsOf(parts);
  const toolCallIds = parts.toolCallIds ?? createToolCallIds();
  // The model's own output (text, reasoning, calls, errors) is masked like tool output (./_mask_model.ts).
  const modelMasking = createModelMasking(secrets, toolCallIds);
  // `onCall` is wanted once: the streams after the first call are not looked at.
  let waiting = true;
  const notice = () => {
    waiting = false;
    onCall();
  };
  const request = (req: EngineRequest, signal: AbortSignal | undefined) => {
    const stream = modelMasking.mask(streamModel({
      endpoint: parts.model.endpoint,
      system_prompt: meta.system_prompt,
      tools: toolset.specs,
      history: req.history,
      ...(req.thinking_level !== undefined ? { thinking_level: req.thinking_level } : {}),
      ...(req.max_tokens !== undefined ? { max_tokens: req.max_tokens } : {}),
    }, { signal, idleTimeoutMs: parts.idleTimeoutMs, toolCallIds }));
    return waiting ? noticingCalls(stream, notice) : stream;
  };
  const engine: Engine = createEngine({
    request,
    execute: (call, signal, responseImages) =>
      executeTool(toolset.tools.get(call.name), modelMasking.realCall(call), {
        workspace: parts.workspace,
        scratchpad: parts.scratchpad,
        ...(parts.readOnlyRoots?.length ? { readOnlyRoots: parts.readOnlyRoots } : {}),
        sessionId: meta.session_id,
        signal,
        processes: parts.processes,
        sandbox: parts.sandbox,
        vault: parts.vault,
        ...(parts.secrets ? { secrets: parts.secrets } : {}),
      }, { warn, responseImages }),
    record,
    recorded: () => live.recorded(),
    warn,
    ...(parts.model.vision ? {} : { foldImages: (input) => foldImages(input, parts.scratchpad) }),
    takeNotices: () =>
      takeAllNotices(parts.processes, children).map((n) =>
        noticeMessage(n, maskSecrets(n.text, secrets)) as CompleteMessage
      ),
    afterTurn: (turn, signal, info) => compactor.afterTurn(turn, signal, info),
  }, {
    maxTurns: parts.maxTurns,
    ...(parts.thinkingLevel !== undefined ? { thinkingLevel: parts.thinkingLevel } : {}),
    ...(parts.maxTokens !== undefined ? { maxTokens: parts.maxTokens } : {}),
    ...(parts.model.context_window !== undefined
      ? { contextWindow: parts.model.context_window }
      : {}),
    promptEstimate: estimatePromptTokens(meta.system_prompt, toolset.specs),
    ...(parts.retryDelayMs ? { retryDelayMs: parts.retryDelayMs } : {}),
    // A resumed history is masked with today's secrets (an old or imported trace may hold one).
  }, parts.state ? maskEngineState(parts.state, secrets) : undefined);
  const compactor = createCompactor(parts.compaction, {
    engine,
    request,
    record,
    rotate: () => (live.st.rotatePending = true),
    noticesQueued: () => parts.processes.pendingNotices > 0 || children.pendingNotices > 0,
    ...(parts.retryDelayMs ? { retryDelayMs: parts.retryDelayMs } : {}),
    closed: parts.rotateFirst ?? false,
  });
  return { engine, compactor };
}

/** The approver of a run's options: the mode or function, the command policy on top. */
function approverOf(parts: SessionParts, opts: RunOptions): ApproveFn | undefined {
  const a = opts.approve;
  if (a === undefined) return undefined;
  const base = typeof a === "function"
    ? a
    : approverForMode(a, { ask: opts.ask, permissionOf: parts.toolset.permissionOf });
  return withCommandPolicy(base, parts.commandPolicy);
}

/** Throw unless the session can start work now (not disposed, trace intact, nothing running). */
function requireIdle(live: Live, engine: Engine, busy: string): void {
  const { st } = live;
  const id = live.parts.meta.session_id;
  if (st.disposed) throw new PenguinError("runtime", `Session ${id} is disposed`);
  if (st.traceFailure) throw st.traceFailure;
  if (engine.running || st.compacting) throw new PenguinError("runtime", busy);
}

/**
 * The records a session's first run starts with (the sources' own records,
 * then the tool list), yielded to the host; those the engine writes with the
 * run's input are returned.
 */
async function* bootstrap(live: Live): AsyncGenerator<OmniMessage, OmniMessage[]> {
  const { st, parts } = live;
  const bootstrapRecords: OmniMessage[] = [];
  if (!st.bootstrapped) {
    st.bootstrapped = true;
    // Lazy sources (MCP servers) open now, at the first run: their records precede the tool list.
    await parts.toolset.ready();
    // The sources' own records (the MCP connect pair) come first, as in PenguinHarness.
    for (const payload of parts.toolset.records) {
      const msg = eventMsg(payload);
      if (!st.rotatePending) bootstrapRecords.push(msg);
      yield msg;
    }
    const ready = live.toolListReady();
    // A pending rotation writes the tool list at the head of the new file.
    if (!st.rotatePending) bootstrapRecords.push(ready);
    yield ready;
  }
  return bootstrapRecords;
}

/** One task on a live session (see {@linkcode Session.run}). */
async function* runLive(
  live: Live,
  engine: Engine,
  pendingRecords: OmniMessage[],
  input: string | CompleteMessage[],
  opts: RunOptions,
): AsyncGenerator<OmniMessage, RunOutcome> {
  const { st, parts, children } = live;
  const id = parts.meta.session_id;
  requireIdle(live, engine, `Session ${id} is already running a task`);
  let messages = toMessages(input, `run session ${id}`);
  if (!parts.model.vision) messages = await foldImages(messages, parts.scratchpad);
  // Aborted by the caller, or by the session (a failed trace write, dispose, an abandoned run).
  const ctl = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, ctl.signal]) : ctl.signal;
  st.current = ctl;
  let finished = false;
  let outcome: RunOutcome | undefined;
  try {
    writeMeta(live);
    const bootstrapRecords = yield* bootstrap(live);
    // After the tool list was planned: a rotation they trigger writes it at the new file's head.
    for (const r of pendingRecords.splice(0)) {
      live.record(r);
      // Hosts see the event; the note for the model is recorded only.
      if (r.type === "event_msg") yield r;
    }
    const approve = approverOf(parts, opts);
    children.bindRun({ approve, thinkingLevel: opts.thinkingLevel ?? parts.thinkingLevel });
    const stream = withBackgroundMessages(
      engine.run(messages, {
        signal,
        ...(approve ? { approve } : {}),
        ...(opts.thinkingLevel !== undefined ? { thinkingLevel: opts.thinkingLevel } : {}),
        bootstrapRecords,
      }),
      children,
    );
    const tracked = trackOutcome(stream);
    for await (const msg of tracked) {
      if (st.traceFailure) break; // the task is being stopped: show nothing it did not record
      yield msg;
    }
    outcome = tracked.outcome;
    finished = true;
  } finally {
    // A consumer that stops early must not leave the request or tools running.
    if (!finished) ctl.abort(new DOMException("the run was abandoned", "AbortError"));
    if (st.current === ctl) st.current = undefined;
    children.bindRun(undefined);
    await st.lastWrite;
  }
  if (st.traceFailure) throw st.traceFailure;
  if (outcome === undefined) {
    throw new PenguinError("runtime", "the task ended without an outcome");
  }
  return outcome;
}

/** Record the session_meta once, before the first record of the session. */
function writeMeta(live: Live): void {
  if (live.st.metaWritten) return;
  live.record(live.metaMessage);
  live.st.metaWritten = true;
}

/** Compact a live session now (see {@linkcode Session.compact}). */
async function* compactLive(
  live: Live,
  engine: Engine,
  compactor: Compactor,
  opts: { signal?: AbortSignal },
): AsyncGenerator<OmniMessage, CompactionResult> {
  const { st } = live;
  requireIdle(
    live,
    engine,
    `Cannot compact session ${live.parts.meta.session_id}: a task is running`,
  );
  st.compacting = true;
  const ctl = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, ctl.signal]) : ctl.signal;
  st.current = ctl;
  let result: CompactionResult;
  try {
    result = yield* compactor.compact(signal);
  } finally {
    if (st.current === ctl) st.current = undefined;
    st.compacting = false;
    await st.lastWrite;
  }
  if (st.traceFailure) throw st.traceFailure;
  return result;
}

/** Record one event between tasks (see {@linkcode Session.recordEvent}). */
async function recordLiveEvent(live: Live, engine: Engine, payload: EventPayload): Promise<void> {
  const { st } = live;
  requireIdle(
    live,
    engine,
    `Cannot record ${payload.type} in session ${live.parts.meta.session_id}: a task is running`,
  );
  writeMeta(live);
  live.record(eventMsg(payload));
  await st.lastWrite;
  if (st.traceFailure) throw st.traceFailure;
}

/**
 * Dispose of a live session: stop the task, the children, the tools and commands, let go of the
 * sandbox's stand-ins, close the trace.
 */
async function disposeLive(
  live: Live,
  standIns: StandInKeeping,
  warmUp: CommandWarmUp | undefined,
): Promise<void> {
  const { st, parts, warn } = live;
  if (st.disposed) return;
  st.disposed = true;
  st.current?.abort(new DOMException("the session was disposed", "AbortError"));
  await live.children.dispose();
  try {
    await parts.toolset.dispose();
  } catch (err) {
    warn(`[penguin] closing the session's tools failed: ${errorMessage(err)}`);
  }
  try {
    await parts.processes.disposeAll();
  } catch (err) {
    warn(`[penguin] stopping background commands failed: ${errorMessage(err)}`);
  }
  // Nor the login shell of a warm-up still under way, which holds stand-ins too.
  await warmUp?.stop();
  // No command runs any more: the stand-ins kept for the session go (see _placeholders.ts).
  await standIns.end().catch((err) => warn(`[penguin] ${errorMessage(err)}`));
  await st.lastWrite;
  try {
    await parts.writer.close();
  } catch (err) {
    // After a failed write the run already reported the trace; one line is enough.
    if (!st.traceFailure) warn(`[trace] close failed: ${errorMessage(err)}`);
  }
  // Those whose directory was moved meanwhile are tried again, and named when still there.
  await standIns.settle(warn).catch(() => {});
}

/**
 * Assemble a live session from its parts: its recorder, its engine and
 * compactor, and the methods over them (each a named step above).
 */
export function openSession(parts: SessionParts): Session {
  const warn = parts.warn ?? defaultWarn;
  const { writer, toolset, meta } = parts;
  const secrets = secretsOf(parts);
  const live = liveRecorder(parts, warn);
  // The first command's set-up waits for the model's first tool call (see command_warm_up.ts).
  const called = Promise.withResolvers<void>();
  const { engine, compactor } = liveEngine(live, called.resolve);
  const { children, metaMessage, st } = live;
  // Stand-ins made for its commands stay until it ends, not made and removed per command.
  const standIns = keepStandIns();
  // The first command's set-up, in the background once the model begins a tool call.
  const warmUp = toolset.tools.has("exec_command")
    ? warmUpCommands({
      workspace: parts.workspace,
      scratchpad: parts.scratchpad,
      sandbox: parts.sandbox,
      vault: parts.vault,
    }, { after: called.promise })
    : undefined;
  const pendingRecords = [...(parts.pendingRecords ?? [])];
  return {
    sessionId: meta.session_id,
    provider: meta.provider,
    modelId: meta.model_id,
    workspaceDir: meta.workspace,
    metaMessage,
    tools: toolset.specs,
    get tracePath() {
      return writer.path;
    },
    scratchpad: parts.scratchpad,
    get running() {
      return engine.running;
    },
    get traceFailure() {
      return st.traceFailure;
    },
    // Masked with today's secrets as the context is: a value set since the session ran was drawn
    // in clear by `chat --resume` (attack round 25 secrets B7).
    ...(parts.resumedHistory
      ? {
        resumedHistory: secrets.length === 0
          ? parts.resumedHistory
          : parts.resumedHistory.map((r) => maskRecord(r, (t) => maskSecrets(t, secrets))),
      }
      : {}),
    toolPermission: toolset.permissionOf,
    toolArgumentError: toolset.argumentError,
    maskSecrets: (text) => maskSecrets(text, secrets),
    toolPreview(name, args) {
      if (!toolset.tools.has(name)) return undefined;
      const json = JSON.stringify(args);
      return toolCallPreview(name, json, { final: true, previews: toolset.previewOf }) ?? undefined;
    },
    run: (input, opts = {}) => runLive(live, engine, pendingRecords, input, opts),
    steer(input) {
      if (!engine.running) return false;
      return engine.steer(typeof input === "string" ? [userText(input)] : input);
    },
    skipRetryWait: () => engine.skipRetryWait(),
    compact: (opts = {}) => compactLive(live, engine, compactor, opts),
    compactability: () => compactor.compactability(),
    recordEvent: (payload) => recordLiveEvent(live, engine, payload),
    usage: () => ({
      sessionTokens: { ...engine.state.sessionTokens },
      lastRequestTotal: engine.state.lastRequestTotal,
      sessionTurns: engine.state.sessionTurns,
    }),
    takeBackgroundNotices: () => takeAllNotices(parts.processes, children),
    onBackgroundNotice: (fn) => onAnyNotice(parts.processes, children, fn),
    onBackgroundMessage: (fn) => children.onMessage(fn),
    backgroundTasks: () => backgroundTasks(parts.processes, children),
    hasRunningBackgroundSubagents: () => children.hasRunningBackground(),
    dispose: async () => {
      await disposeLive(live, standIns, warmUp);
      engine.releaseHeld();
    },
  };
}
