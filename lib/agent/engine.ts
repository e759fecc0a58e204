/**
 * The turn loop of a session. A task
 * (`run`) sends requests until a turn calls no tool and nothing new was
 * injected, until `max_turns`, or until it is aborted or fails for good.
 *
 * The model layer is stateless, so the engine keeps the committed history:
 * a turn's input and the model's complete output join it only when the
 * request completed. Failed requests are retried with the original input
 * plus a `[turn_retried]` transcript; tools never re-run. Aborts leave a
 * carry-over (never traced) that the next `run` prepends. Steering and
 * background notices are delivered as user texts between turns.
 *
 * After every turn there is one checkpoint (`afterTurn`), where compaction
 * plugs in (lib/agent/compaction.ts); it reaches the context through
 * `requestFor`, `commit` and `resetContext`. A summary left by a compaction
 * at a task boundary (`state.pendingSummary`) leads the next input and is
 * written then.
 *
 * @module
 */
import { eventMsg, modelMsg, partialText, userText } from "../protocol/builders.ts";
import { PenguinError } from "../protocol/errors.ts";
import type { CompleteMessage, OmniMessage, PartialText, TokenCounts } from "../protocol/types.ts";
import type { ModelOutcome, ModelStreamItem } from "../models/outcome.ts";
import { MAX_RETRIES, shouldRetry } from "../models/retry.ts";
import { clampMaxTokens, estimateHistoryTokens, estimateMessageTokens } from "../models/shaping.ts";
import { outboundToolCallId } from "../models/tool_call_ids.ts";
import type { ThinkingLevel } from "../models/wire.ts";
import { type ApproveFn, DENIAL_REASONS } from "./approval.ts";
import { buildCarryOver } from "./carry_over.ts";
import {
  contextBesides,
  contextChars,
  contextTooLarge,
  holdContext,
  MAX_CONTEXT_CHARS,
  MAX_PROCESS_CONTEXT_CHARS,
  processContextTooLarge,
} from "./context_size.ts";
import { windowImages } from "./_image_window.ts";
import { holdImages } from "../tools/image_ledger.ts";
import { downgradeGoalRound, maxTurnsText, userSteeringText } from "./markers.ts";
import type { RunOutcome } from "./outcome.ts";
import { createRetryWaits, exhaustionReason, turnWithRetries } from "./_retry.ts";
import { runTurn, type ToolExecutor } from "./turn.ts";
import type { AfterTurn } from "./checkpoint.ts";

export { exhaustionReason };
export type { AfterTurn, CheckpointInfo, CheckpointVerdict } from "./checkpoint.ts";

/** The resumable state of an engine: the history and the counters. */
export interface EngineState {
  /** Committed context, oldest first (session tool-call ids, `#n` suffixes kept). */
  history: CompleteMessage[];
  /** Input owed to the model from an aborted task; prepended by the next run, never traced. */
  carryOver: CompleteMessage[];
  /** Token totals over all completed requests of the session. */
  sessionTokens: TokenCounts;
  /** `request.total` of the last completed request (the context size). */
  lastRequestTotal: number;
  /** Completed requests in the current context. */
  sessionTurns: number;
  /** The `[context_summary]` text a compaction left for the next input (written when sent). */
  pendingSummary?: CompleteMessage;
}

/** A fresh, empty state. */
export function emptyEngineState(): EngineState {
  return {
    history: [],
    carryOver: [],
    sessionTokens: { cache_read: 0, cache_write: 0, output: 0, total: 0 },
    lastRequestTotal: 0,
    sessionTurns: 0,
  };
}

/** One model request as the engine asks for it. */
export interface EngineRequest {
  /** Whole context: committed history plus this attempt's input, ids already outbound. */
  history: CompleteMessage[];
  /** Reasoning effort. */
  thinking_level?: ThinkingLevel;
  /** Output cap, already clamped. */
  max_tokens?: number;
}

/** What the engine is given. */
export interface EngineDeps {
  /** Send one request; yields model items and never throws. */
  request(req: EngineRequest, signal: AbortSignal | undefined): AsyncIterable<ModelStreamItem>;
  /** Execute one approved tool call. */
  execute: ToolExecutor;
  /** Trace sink; appends complete in the background. */
  record(msg: OmniMessage): void;
  /** Resolves once everything recorded so far is in the trace: false when the trace failed. */
  recorded?(): Promise<boolean>;
  /** Diagnostics (stderr). */
  warn(line: string): void;
  /** Background completion notices waiting for delivery (emptied by the call). */
  takeNotices?(): CompleteMessage[];
  /** The post-turn checkpoint. */
  afterTurn?: AfterTurn;
  /** For a model without vision: fold the images of a steering entry into its text. */
  foldImages?(input: CompleteMessage[]): Promise<CompleteMessage[]>;
}

/** Engine settings, fixed for the session. */
export interface EngineSettings {
  /** Max requests per task (retries excluded); ≤ 0 = unlimited. */
  maxTurns: number;
  /** Thinking level when a run gives none. */
  thinkingLevel?: ThinkingLevel;
  /** Configured output ceiling; ≤ 0 / undefined = send none. */
  maxTokens?: number;
  /** The model's context window, when known. */
  contextWindow?: number;
  /** Token estimate of the system prompt plus the tool list (the clamp's seed). */
  promptEstimate: number;
  /** Retries per turn (default 5). */
  maxRetries?: number;
  /**
   * Wait before retry `n` (1-based); default 2 s, 4 s, 8 s, 16 s, 30 s, or a
   * server's Retry-After up to 60 s.
   */
  retryDelayMs?: (n: number) => number;
}

/** Options of one task. */
export interface EngineRunOptions {
  /** Abort signal: cancels the request and the tools. */
  signal?: AbortSignal;
  /** Judges tool calls; absent → every call is denied. */
  approve?: ApproveFn;
  /** Thinking level for this task's requests. */
  thinkingLevel?: ThinkingLevel;
  /** Records written once, right after this run's input (e.g. `tool_list_ready`). */
  bootstrapRecords?: OmniMessage[];
}

/** A session's turn loop. */
export interface Engine {
  /** The live state (history, carry-over, counters). */
  readonly state: EngineState;
  /** Whether a task is running. */
  readonly running: boolean;
  /** Run one task: yields every envelope (partials included) except the caller's own input; returns how it ended. */
  run(input: CompleteMessage[], opts?: EngineRunOptions): AsyncGenerator<OmniMessage, RunOutcome>;
  /** Queue steering for the running task; false when no task runs. */
  steer(input: CompleteMessage[]): boolean;
  /** End a retry wait now ("retry now"); false when none is in progress. */
  skipRetryWait(): boolean;
  /** The request for `input` on top of the committed context (default thinking level unless given). */
  requestFor(input: readonly CompleteMessage[], thinkingLevel?: ThinkingLevel): EngineRequest;
  /** Add a completed request's input and output to the committed context. */
  commit(input: readonly CompleteMessage[], output: readonly CompleteMessage[]): void;
  /** Drop the committed context and its counters (a completed compaction); session tokens stay. */
  resetContext(): void;
  /** Let go of what the process-wide counts of images and context hold for this conversation (its end). */
  releaseHeld(): void;
  /** Characters the committed context keeps, as penguin measures them (./context_size.ts). */
  contextChars(): number;
  /** Wait `ms` before a retry ("retry now" ends it early); false when `signal` aborted it. */
  retryWait(ms: number, signal?: AbortSignal): Promise<boolean>;
}

function toWire(m: CompleteMessage): CompleteMessage {
  if (m.type !== "tool_call" && m.type !== "tool_call_output") return m;
  const id = outboundToolCallId(m.tool_call_id);
  return id === m.tool_call_id ? m : { ...m, tool_call_id: id };
}

const carriesSteering = (m: CompleteMessage) =>
  m.type === "image_url" || (m.type === "text" && m.text.trim() !== "");

/**
 * The committed context as it is sent (tool call ids made wire-safe) and
 * the estimate of its size the output-token clamp uses: commit, the
 * request for an input on top of it, and its reset after a compaction.
 */
function wireContext(
  state: EngineState,
  settings: EngineSettings,
  warn: (line: string) => void,
): {
  commit(input: readonly CompleteMessage[], output: readonly CompleteMessage[]): void;
  requestFor(input: readonly CompleteMessage[], thinkingLevel?: ThinkingLevel): EngineRequest;
  reset(): void;
  /** Let go of the images and context counted for this conversation (the session ends). */
  release(): void;
  /** Characters the committed context keeps (./context_size.ts). */
  chars(): number;
  /** Characters the process's other live conversations keep. */
  besides(): number;
} {
  // Long because: one closure over the committed context; commit, the request and the reset share
  // the wire copy, the two size counts and the image holder.
  let wire: CompleteMessage[] = state.history.map(toWire);
  // This conversation in the process-wide count of images held (lib/tools/image_ledger.ts).
  const holder = {};
  windowImages(wire, state.history, [], holder);
  // Computed when first needed: a resumed history can be large, and the
  // clamp uses it only while no request has completed.
  let historyEstimate: number | undefined = state.history.length === 0 ? 0 : undefined;
  // Likewise: counted as messages are committed once first asked for.
  let kept: number | undefined = state.history.length === 0 ? 0 : undefined;
  const clampWarned = new Set<number>();

  function commit(input: readonly CompleteMessage[], output: readonly CompleteMessage[]): void {
    for (const m of [...input, ...output]) {
      state.history.push(m);
      wire.push(toWire(m));
      if (historyEstimate !== undefined) historyEstimate += estimateMessageTokens(m);
      if (kept !== undefined) kept += contextChars(m);
    }
    windowImages(wire, state.history, [], holder);
    holdContext(holder, chars());
  }

  function chars(): number {
    return kept ??= state.history.reduce((n, m) => n + contextChars(m), 0);
  }

  function maxTokensFor(input: readonly CompleteMessage[]): number | undefined {
    const base = state.lastRequestTotal > 0
      ? state.lastRequestTotal
      : settings.promptEstimate + (historyEstimate ??= estimateHistoryTokens(state.history));
    const cap = clampMaxTokens(
      settings.maxTokens,
      settings.contextWindow,
      base + estimateHistoryTokens([...input]),
    );
    const configured = settings.maxTokens;
    if (cap !== undefined && configured !== undefined && cap < configured / 2) {
      if (!clampWarned.has(cap)) {
        clampWarned.add(cap);
        warn(
          `[penguin] output cap clamped hard: ${cap} of ${configured} tokens (context window ${settings.contextWindow})`,
        );
      }
    }
    return cap;
  }

  function requestFor(
    input: readonly CompleteMessage[],
    thinkingLevel?: ThinkingLevel,
  ): EngineRequest {
    const req: EngineRequest = {
      history: windowImages(wire, state.history, input.map(toWire), holder),
    };
    const level = thinkingLevel ?? settings.thinkingLevel;
    if (level !== undefined) req.thinking_level = level;
    const max_tokens = maxTokensFor(input);
    if (max_tokens !== undefined) req.max_tokens = max_tokens;
    return req;
  }

  return {
    commit,
    requestFor,
    reset() {
      state.history.length = 0;
      wire = [];
      holdImages(holder, 0);
      historyEstimate = 0;
      kept = 0;
      holdContext(holder, 0);
      state.lastRequestTotal = 0;
      state.sessionTurns = 0;
    },
    release() {
      holdImages(holder, 0);
      holdContext(holder, 0);
    },
    chars,
    besides: () => contextBesides(holder),
  };
}

/** The wait before retrying after `outcome` (undefined: no retry). */
function plannedRetryWait(
  outcome: ModelOutcome,
  reconnects: number,
  maxRetries: number,
  retryDelayMs: EngineSettings["retryDelayMs"],
): number | undefined {
  if (reconnects >= maxRetries) return undefined;
  const verdict = shouldRetry(outcome, reconnects + 1);
  if (!verdict.retry) return undefined;
  return retryDelayMs ? retryDelayMs(reconnects + 1) : verdict.delay_ms;
}

/** Record each message, then yield it. */
function* recordAll(
  record: (m: OmniMessage) => void,
  msgs: readonly OmniMessage[],
): Generator<OmniMessage> {
  for (const m of msgs) {
    record(m);
    yield m;
  }
}

/** End the task with an `abort` event carrying `reason`. */
function* stopTask(
  record: (m: OmniMessage) => void,
  kind: "aborted" | "failed",
  reason: string,
): Generator<OmniMessage, RunOutcome> {
  yield* recordAll(record, [eventMsg({ type: "abort", reason })]);
  return { kind, reason };
}

/** End the task with the max-turns notice (written into the conversation). */
function* maxTurnsStop(
  record: (m: OmniMessage) => void,
  maxTurns: number,
): Generator<OmniMessage, RunOutcome> {
  const text = maxTurnsText(maxTurns);
  const part = (event_type: PartialText["event_type"], t: string, stop: "completed" | "failed") =>
    modelMsg(partialText(event_type, t, stop));
  yield* recordAll(record, [
    part("start", "", "completed"),
    part("delta", text, "completed"),
    part("stop", "", "failed"),
    modelMsg({ type: "text", role: "assistant", text, stop_reason: "failed" }),
  ]);
  return { kind: "max_turns", maxTurns, reason: text };
}

/** Add a completed request's usage to the session's counters; returns the session totals. */
function addRequestUsage(state: EngineState, req: TokenCounts): TokenCounts {
  const s = state.sessionTokens;
  s.cache_read += req.cache_read;
  s.cache_write += req.cache_write;
  s.output += req.output;
  s.total += req.total;
  state.lastRequestTotal = req.total;
  state.sessionTurns += 1;
  return s;
}

/** The pending compaction summary, taken (recorded and yielded by the caller). */
function takePendingSummary(state: EngineState): CompleteMessage[] {
  const s = state.pendingSummary;
  delete state.pendingSummary;
  return s ? [s] : [];
}

/** What one task of an engine runs with: its dependencies, state and the engine's steps. */
interface TaskSteps {
  deps: EngineDeps;
  settings: EngineSettings;
  state: EngineState;
  waits: ReturnType<typeof createRetryWaits>;
  maxRetries: number;
  requestFor(input: readonly CompleteMessage[], thinkingLevel?: ThinkingLevel): EngineRequest;
  commit(input: readonly CompleteMessage[], output: readonly CompleteMessage[]): void;
  retryWait(outcome: ModelOutcome, reconnects: number): number | undefined;
  addUsage(req: TokenCounts): TokenCounts;
  takeSummary(): CompleteMessage[];
  emitRecorded(msgs: readonly OmniMessage[]): Generator<OmniMessage>;
  stop(kind: "aborted" | "failed", reason: string): Generator<OmniMessage, RunOutcome>;
  maxTurnsNotice(): Generator<OmniMessage, RunOutcome>;
  injected(): AsyncGenerator<OmniMessage, CompleteMessage[]>;
  /** Whether steering waits for the next turn. */
  steeringQueued(): boolean;
  /** Characters the committed context keeps (./context_size.ts). */
  contextChars(): number;
  /** Characters the process's other live conversations keep. */
  contextBesides(): number;
}

/** One task of an engine: its input recorded, then turns until it ends (see `Engine.run`). */
async function* runEngineTask(
  steps: TaskSteps,
  newMessages: CompleteMessage[],
  opts: EngineRunOptions,
  signal: AbortSignal,
  abandon: () => void,
): AsyncGenerator<OmniMessage, RunOutcome> {
  // Long because: one task's turn loop; recording the input, each turn, steering and the
  // max-turns stop share the turn counter and the next input.
  const { deps, settings, state, waits, maxRetries, requestFor, commit, retryWait, addUsage } =
    steps;
  const { takeSummary, emitRecorded, stop, maxTurnsNotice, injected } = steps;
  const approve: ApproveFn = opts.approve ??
    (() => ({ decision: "deny", reason: DENIAL_REASONS.noApprover }));
  const thinking_level = opts.thinkingLevel ?? settings.thinkingLevel;
  // A goal round carried over belongs to a goal run that has ended: its protocol is dropped.
  const carried = state.carryOver.map((m) =>
    m.type === "text" && m.role === "user" ? { ...m, text: downgradeGoalRound(m.text) } : m
  );
  state.carryOver = [];
  const summary = takeSummary();
  yield* emitRecorded(summary.map((m) => modelMsg(m)));
  for (const m of newMessages) deps.record(modelMsg(m));
  for (const r of opts.bootstrapRecords ?? []) deps.record(r);
  const notices = deps.takeNotices?.() ?? [];
  yield* emitRecorded(notices.map((m) => modelMsg(m)));
  const input = [...summary, ...carried, ...newMessages, ...notices];
  if (signal.aborted) {
    state.carryOver = input;
    return yield* stop("aborted", "aborted by user");
  }

  let turns = 0;
  let nextInput = input;
  for (;;) {
    if (settings.maxTurns > 0 && turns >= settings.maxTurns) {
      state.carryOver = nextInput;
      return yield* maxTurnsNotice();
    }
    turns++;
    const attempts = yield* turnWithRetries(nextInput, {
      attempt: (attemptInput, reconnects) =>
        runTurn({
          stream: deps.request(requestFor(attemptInput, thinking_level), signal),
          abandon,
          approve,
          execute: deps.execute,
          record: deps.record,
          ...(deps.recorded ? { recorded: deps.recorded } : {}),
          warn: deps.warn,
          signal,
          reconnects,
          plannedRetry: (o) => retryWait(o, reconnects),
          addUsage,
        }),
      commit,
      plannedRetry: retryWait,
      wait: (ms, s) => waits.wait(ms, s),
      maxRetries,
    }, signal);
    if (!attempts.ok) {
      state.carryOver = attempts.carryOver;
      return yield* stop(attempts.kind, attempts.reason);
    }
    const { turn, input: attemptInput } = attempts;

    let base: CompleteMessage[] = turn.toolOutputs;
    let stash: CompleteMessage[] = [];
    if (deps.afterTurn) {
      const info = { steeringQueued: steps.steeringQueued() };
      const verdict = yield* deps.afterTurn(turn, signal, info);
      if (verdict.action === "end") return { kind: "completed" };
      if (verdict.action === "abort") {
        if (verdict.carryOver) state.carryOver = verdict.carryOver;
        else if (turn.toolOutputs.length > 0) {
          state.carryOver = buildCarryOver(attemptInput, turn);
        }
        return yield* stop(signal.aborted ? "aborted" : "failed", verdict.reason);
      }
      if (verdict.action === "replace") base = verdict.input;
      if (verdict.action === "continue") stash = verdict.stash ?? [];
    }
    const extra = yield* injected();
    if (base.length === 0 && extra.length === 0) {
      if (stash.length > 0) state.carryOver = stash;
      return { kind: "completed" };
    }
    // Compaction had its turn: a context still past the bound is not sent again by this task.
    const chars = steps.contextChars();
    const all = chars + steps.contextBesides();
    if (chars > MAX_CONTEXT_CHARS || all > MAX_PROCESS_CONTEXT_CHARS) {
      state.carryOver = [...stash, ...base, ...extra];
      const why = chars > MAX_CONTEXT_CHARS ? contextTooLarge(chars) : processContextTooLarge(all);
      return yield* stop("failed", why);
    }
    nextInput = [...stash, ...base, ...extra];
  }
}

/**
 * Build an engine over `deps`, starting from `state` (a resumed session
 * passes its replay). A closure over the engine's task state; the
 * committed context is {@linkcode wireContext}, the task's stops and
 * counters are the functions above, and the retries of a turn are
 * ./_retry.ts.
 */
export function createEngine(
  deps: EngineDeps,
  settings: EngineSettings,
  state: EngineState = emptyEngineState(),
): Engine {
  // Long because: one closure-based engine whose methods share the running task and the steering
  // queue; the task itself is runEngineTask.
  const maxRetries = settings.maxRetries ?? MAX_RETRIES;
  const context = wireContext(state, settings, deps.warn);
  const { commit, requestFor } = context;
  let running = false;
  let steering: CompleteMessage[][] = [];
  const waits = createRetryWaits();

  const retryWait = (outcome: ModelOutcome, reconnects: number) =>
    plannedRetryWait(outcome, reconnects, maxRetries, settings.retryDelayMs);
  const emitRecorded = (msgs: readonly OmniMessage[]) => recordAll(deps.record, msgs);
  const stop = (kind: "aborted" | "failed", reason: string) => stopTask(deps.record, kind, reason);
  const maxTurnsNotice = () => maxTurnsStop(deps.record, settings.maxTurns);
  const addUsage = (req: TokenCounts) => addRequestUsage(state, req);
  const takeSummary = () => takePendingSummary(state);

  /** Drain notices, then steering, into user messages; yields and records them (a pending summary first). */
  async function* injected(): AsyncGenerator<OmniMessage, CompleteMessage[]> {
    const out: CompleteMessage[] = [...(deps.takeNotices?.() ?? [])];
    const queued = steering;
    steering = [];
    for (const raw of queued) {
      const hasImage = raw.some((m) => m.type === "image_url");
      const entry = hasImage && deps.foldImages ? await deps.foldImages(raw) : raw;
      const texts = entry.filter((m) => m.type === "text" && m.role === "user")
        .map((m) => (m as { text: string }).text);
      const rest = entry.filter((m) => !(m.type === "text" && m.role === "user"));
      out.push(userText(userSteeringText(texts.join("\n\n"))), ...rest);
    }
    if (out.length > 0) out.unshift(...takeSummary());
    yield* emitRecorded(out.map((m) => modelMsg(m)));
    return out;
  }

  const steps: TaskSteps = {
    deps,
    settings,
    state,
    waits,
    maxRetries,
    requestFor,
    commit,
    retryWait,
    addUsage,
    takeSummary,
    emitRecorded,
    stop,
    maxTurnsNotice,
    injected,
    steeringQueued: () => steering.length > 0,
    contextChars: () => context.chars(),
    contextBesides: () => context.besides(),
  };

  return {
    state,
    get running() {
      return running;
    },
    async *run(input, opts = {}) {
      if (running) {
        throw new PenguinError(
          "runtime",
          "Cannot start a task: this session is already running one",
        );
      }
      running = true;
      steering = [];
      // The task's own signal: the caller's, or this run being abandoned (iteration stopped early).
      const ctl = new AbortController();
      const signal = opts.signal ? AbortSignal.any([opts.signal, ctl.signal]) : ctl.signal;
      const abandon = () => ctl.abort(new DOMException("the run was abandoned", "AbortError"));
      let ended = false;
      try {
        const outcome = yield* runEngineTask(steps, input, opts, signal, abandon);
        ended = true;
        return outcome;
      } finally {
        if (!ended) abandon();
        running = false;
        steering = [];
      }
    },
    steer(input) {
      if (!running) return false;
      if (input.some(carriesSteering)) steering.push(input);
      return true;
    },
    skipRetryWait: () => waits.skip(),
    requestFor,
    commit,
    resetContext: () => context.reset(),
    releaseHeld: () => context.release(),
    contextChars: () => context.chars(),
    retryWait: (ms, signal) => waits.wait(ms, signal),
  };
}
