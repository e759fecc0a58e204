/**
 * Compaction: when the context grows past the
 * configured size or turn count, or when asked, the session replaces its
 * context with a summary (`summarize`) or with nothing (`discard`).
 *
 * Checked after every completed turn (the engine's `afterTurn`):
 * `context` when `lastRequestTotal ≥ maxContextLength`, else `turns` when
 * `sessionTurns ≥ maxSessionTurns`. The effective context threshold is
 * `min(max_context_length, window − 2048)`, window = the model's context
 * window (128000 when unknown); ≤ 0 disables it.
 *
 * - `summarize`: `compaction_begin`, then summarize requests on the same
 *   model with the same tool list (see `_summarize.ts`), then
 *   `compaction_end`. On success the context is dropped, the counters reset,
 *   and the trace rotates to the next file before its next record. The
 *   `[context_summary]` text leads the next input: at a task boundary it is
 *   kept for the next run; mid-task it is written now and the task goes on.
 *   On failure the context and the trace file are kept; mid-task the task
 *   aborts with `compaction failed`.
 * - `discard`: only at a task boundary (deferred otherwise): the begin/end
 *   pair, the context dropped, the task ends.
 *
 * @module
 */
import { eventMsg, modelMsg, userText } from "../protocol/builders.ts";
import type {
  CompactionEndEvent,
  CompactionMode,
  CompactionReason,
  CompleteMessage,
  OmniMessage,
} from "../protocol/types.ts";
import type { ModelStreamItem } from "../models/outcome.ts";
import { MAX_RETRIES } from "../models/retry.ts";
import { DEFAULT_COMPACTION_RETRY_PROMPT } from "../state/default_prompts.ts";
import { contextSummaryText } from "../session/summary.ts";
import { buildCarryOver } from "./carry_over.ts";
import {
  type AfterTurn,
  type CheckpointVerdict,
  type Engine,
  type EngineRequest,
  type EngineState,
} from "./engine.ts";
import { summarize, type SummarizeOutcome } from "./_summarize.ts";

export { COMPACTION_TOOL_ERROR } from "./_summarize.ts";

/** Tokens kept free below the context window by the context threshold. */
export const CONTEXT_HEADROOM = 2048;
/** The window assumed when the model's is unknown (or below 4096). */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

/** The `compaction` section of an agent's config, defaults applied. */
export interface CompactionConfig {
  /** Context-token threshold; ≤ 0 disables. */
  max_context_length: number;
  /** Completed-request threshold; ≤ 0 disables. */
  max_session_turns: number;
  /** What a compaction does with the old context. */
  mode: CompactionMode;
  /** The summarize prompt. */
  prompt: string;
}

/** A session's compaction settings. */
export interface CompactionSettings {
  /** Effective context threshold (≤ 0: disabled). */
  maxContextLength: number;
  /** Turn threshold (≤ 0: disabled). */
  maxSessionTurns: number;
  /** Mode. */
  mode: CompactionMode;
  /** The summarize prompt. */
  prompt: string;
}

/**
 * Whether a session has anything to compact: `ok` once a turn has run since
 * the context was last reset, else `just_compacted` when a compaction closed
 * it, else `empty`; `unsupported` when compaction is not configured.
 */
export type Compactability = "unsupported" | "empty" | "just_compacted" | "ok";

/** The result of a manual compaction. */
export interface CompactionResult {
  /** `skipped` when there was nothing to compact (nothing was written). */
  status: "completed" | "failed" | "aborted" | "skipped";
  /** Why it was skipped (a {@linkcode Compactability} other than `ok`). */
  skipped?: Exclude<Compactability, "ok">;
  /** Attempts made (summarize). */
  attempt?: number;
  /** Why it failed. */
  error_message?: string;
}

/** Settings from the config and the model's context window (when known and ≥ 4096). */
export function compactionSettings(
  config: CompactionConfig,
  contextWindow?: number,
): CompactionSettings {
  const window = contextWindow !== undefined && contextWindow >= 4096
    ? contextWindow
    : DEFAULT_CONTEXT_WINDOW;
  const configured = config.max_context_length;
  return {
    maxContextLength: configured > 0 ? Math.min(configured, window - CONTEXT_HEADROOM) : 0,
    maxSessionTurns: config.max_session_turns,
    mode: config.mode,
    prompt: config.prompt,
  };
}

/** Which threshold the counters reach (`context` first), or null. */
export function compactionTrigger(
  s: CompactionSettings,
  counters: { lastRequestTotal: number; sessionTurns: number },
): "context" | "turns" | null {
  if (s.maxContextLength > 0 && counters.lastRequestTotal >= s.maxContextLength) return "context";
  if (s.maxSessionTurns > 0 && counters.sessionTurns >= s.maxSessionTurns) return "turns";
  return null;
}

/** What a compactor needs from its session. */
export interface CompactorDeps {
  /** The session's engine. */
  engine: Engine;
  /** Send one request on the session's model (tool list included). */
  request(req: EngineRequest, signal: AbortSignal | undefined): AsyncIterable<ModelStreamItem>;
  /** Best-effort trace sink. */
  record(msg: OmniMessage): void;
  /** Rotate the trace before its next record (a completed compaction closes the file). */
  rotate(): void;
  /** Whether background notices wait for delivery. */
  noticesQueued(): boolean;
  /** Retries after the first attempt (default 5). */
  maxRetries?: number;
  /**
   * Wait before retry `n` (default 2 s, 4 s, 8 s, 16 s, 30 s, or a server's
   * Retry-After up to 60 s).
   */
  retryDelayMs?: (n: number) => number;
  /** The context was closed by a completed compaction before this session object (resume). */
  closed?: boolean;
}

/** A session's compaction. */
export interface Compactor {
  /** The engine checkpoint. */
  afterTurn: AfterTurn;
  /** Compact now (`manual`); a no-op (`skipped`) unless there is something to compact. */
  compact(signal?: AbortSignal): AsyncGenerator<OmniMessage, CompactionResult>;
  /** Whether there is something to compact. */
  compactability(): Compactability;
}

/** The `compaction_end` event of a summarize that ended with `out`. */
function summarizeEnd(reason: CompactionReason, out: SummarizeOutcome): CompactionEndEvent {
  const end: CompactionEndEvent = {
    type: "compaction_end",
    reason,
    mode: "summarize",
    status: out.status,
  };
  if (out.status !== "aborted") end.attempt = out.attempt;
  if (out.error_message !== undefined) end.error_message = out.error_message;
  return end;
}

/**
 * How the turn goes on after a summarize it triggered ended with `out`: at
 * a task boundary the summary waits for the next task; mid-task it replaces
 * the next input, and a failed or aborted one ends the task.
 */
function* verdictAfterSummary(
  out: SummarizeOutcome,
  turn: Parameters<AfterTurn>[0],
  boundary: boolean,
  state: EngineState,
  record: (m: OmniMessage) => void,
): Generator<OmniMessage, CheckpointVerdict> {
  if (out.status === "completed") {
    const summary = userText(contextSummaryText(out.summary!));
    if (boundary) {
      state.pendingSummary = summary;
      return { action: "continue" };
    }
    const msg = modelMsg(summary);
    record(msg);
    yield msg;
    return { action: "replace", input: [summary] };
  }
  if (boundary) {
    if (out.status === "aborted") {
      if (out.stash.length > 0) state.carryOver = out.stash;
      return { action: "end" };
    }
    return { action: "continue", stash: out.stash };
  }
  const carry: CompleteMessage[] = out.committed ? [] : buildCarryOver([], turn);
  const verdict: CheckpointVerdict = {
    action: "abort",
    reason: out.status === "aborted" ? "aborted during compaction" : "compaction failed",
    carryOver: [...out.stash, ...carry],
  };
  return verdict;
}

/** A compactor; `settings` undefined = compaction not configured. */
export function createCompactor(
  settings: CompactionSettings | undefined,
  deps: CompactorDeps,
): Compactor {
  // Long because: one closure-based compactor whose methods share the engine state and the
  // settings; each method is short.
  const { engine } = deps;
  const state = engine.state;
  let justCompacted = deps.closed ?? false;

  function* emit(payload: Parameters<typeof eventMsg>[0]): Generator<OmniMessage> {
    const msg = eventMsg(payload);
    deps.record(msg);
    yield msg;
  }

  function closeContext(): void {
    engine.resetContext();
    deps.rotate();
    justCompacted = true;
  }

  function* begin(reason: CompactionReason, mode: CompactionMode): Generator<OmniMessage> {
    yield* emit({
      type: "compaction_begin",
      reason,
      mode,
      context: state.lastRequestTotal,
      turns: state.sessionTurns,
    });
  }

  function* discard(reason: CompactionReason): Generator<OmniMessage> {
    yield* begin(reason, "discard");
    yield* emit({ type: "compaction_end", reason, mode: "discard", status: "completed" });
    closeContext();
  }

  async function* runSummarize(
    s: CompactionSettings,
    reason: CompactionReason,
    lead: readonly CompleteMessage[],
    signal: AbortSignal | undefined,
  ): AsyncGenerator<OmniMessage, SummarizeOutcome> {
    yield* begin(reason, "summarize");
    const out = yield* summarize(
      {
        engine,
        request: deps.request,
        record: deps.record,
        prompt: s.prompt,
        retryNote: DEFAULT_COMPACTION_RETRY_PROMPT,
        maxRetries: deps.maxRetries ?? MAX_RETRIES,
        ...(deps.retryDelayMs ? { retryDelayMs: deps.retryDelayMs } : {}),
      },
      lead,
      signal,
    );
    yield* emit(summarizeEnd(reason, out));
    if (out.status === "completed") closeContext();
    return out;
  }

  const afterTurn: AfterTurn = async function* (turn, signal, info) {
    const s = settings;
    const reason = s ? compactionTrigger(s, state) : null;
    if (!s || reason === null) return { action: "continue" };
    const boundary = turn.toolOutputs.length === 0 && !info.steeringQueued &&
      !deps.noticesQueued();
    if (s.mode === "discard") {
      if (!boundary) return { action: "continue" }; // deferred to a task boundary
      yield* discard(reason);
      return { action: "end" };
    }
    const out = yield* runSummarize(s, reason, turn.toolOutputs, signal);
    return yield* verdictAfterSummary(out, turn, boundary, state, deps.record);
  };

  function compactability(): Compactability {
    if (!settings) return "unsupported";
    if (state.sessionTurns > 0) return "ok";
    return justCompacted ? "just_compacted" : "empty";
  }

  async function* compact(signal?: AbortSignal): AsyncGenerator<OmniMessage, CompactionResult> {
    const now = compactability();
    if (now !== "ok" || !settings) return { status: "skipped", skipped: now as "empty" };
    if (settings.mode === "discard") {
      state.carryOver = state.carryOver.filter((m) => m.type !== "tool_call_output");
      yield* discard("manual");
      return { status: "completed" };
    }
    const lead = state.carryOver;
    state.carryOver = [];
    const out = yield* runSummarize(settings, "manual", lead, signal);
    if (out.status === "completed") {
      state.pendingSummary = userText(contextSummaryText(out.summary!));
      return { status: "completed", attempt: out.attempt };
    }
    state.carryOver = out.committed ? out.stash : [...lead];
    const result: CompactionResult = { status: out.status };
    if (out.status === "failed") result.attempt = out.attempt;
    if (out.error_message !== undefined) result.error_message = out.error_message;
    return result;
  }

  return { afterTurn, compact, compactability };
}
