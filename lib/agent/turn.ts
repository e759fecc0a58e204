/**
 * One request of the agent loop (reference §5.4): send the input, stream the
 * model's output, approve each complete tool call as it arrives (one at a
 * time) and run the allowed ones concurrently without blocking the stream.
 *
 * Everything produced goes out through one merge queue in arrival order and
 * is recorded as it goes. Record order per §4.3: `request_begin`; the
 * model's complete messages; each `approval_decision` right after its
 * `tool_call` (outputs of other tools that finish while an approval is
 * pending are held back until the decision is out); `token_usage` then
 * `request_end`; tool outputs in completion order, possibly after
 * `request_end`. The turn returns only when every tool has finished.
 *
 * @module
 */
import { eventMsg, modelMsg, toolCallOutput } from "../protocol/builders.ts";
import { denialOutput } from "../tools/command_policy.ts";
import { errorMessage } from "../protocol/errors.ts";
import { isComplete } from "../protocol/guards.ts";
import type {
  CompleteMessage,
  ModelPayload,
  OmniMessage,
  TokenCounts,
  ToolCallMessage,
  ToolCallOutputMessage,
} from "../protocol/types.ts";
import type { ModelOutcome, ModelStreamItem } from "../models/outcome.ts";
import type { ToolExecutionItem } from "../tools/environment.ts";
import { createMergeQueue } from "./_queue.ts";
import { type ApproveFn, decide } from "./approval.ts";
import type { TurnProducts } from "./carry_over.ts";

/** Runs one approved tool call: its partials, forwarded child messages, then its complete output. */
export type ToolExecutor = (
  call: ToolCallMessage,
  signal: AbortSignal | undefined,
) => AsyncIterable<ToolExecutionItem>;

/** What one turn needs from its engine. */
export interface TurnContext {
  /** The model request, already bound to history and settings; yields model items, never throws. */
  stream: AsyncIterable<ModelStreamItem>;
  /** Approval of each call. */
  approve: ApproveFn;
  /** Tool execution. */
  execute: ToolExecutor;
  /** Trace sink (skips what is not recordable); appends complete in the background. */
  record: (msg: OmniMessage) => void;
  /**
   * Resolves once everything recorded so far is in the trace: false when
   * the trace could not be written (the task is being stopped). A tool runs
   * only after its `tool_call` and `approval_decision` are recorded.
   */
  recorded?: () => Promise<boolean>;
  /** Diagnostics. */
  warn: (line: string) => void;
  /** User abort. */
  signal?: AbortSignal;
  /** Called when the consumer stops iterating early: must abort `signal` so the turn can wind down. */
  abandon?: () => void;
  /** Retries already made for this turn (stamps `attempt`). */
  reconnects: number;
  /** The wait before the next retry when this outcome will be retried, else undefined. */
  plannedRetry: (outcome: ModelOutcome) => number | undefined;
  /** Adds a completed request's usage to the session total and returns the new total. */
  addUsage: (request: TokenCounts) => TokenCounts;
}

/** What a turn returns: its products plus every complete model message, in order. */
export interface TurnResult extends TurnProducts {
  /** Complete assistant messages of the request, in stream order (what a commit adds to history). */
  completes: CompleteMessage[];
}

/** A tool item waiting for a pending approval: a payload to wrap, or a forwarded envelope. */
interface Held {
  payload?: ModelPayload;
  envelope?: OmniMessage;
}

/** Run one request; yields every envelope (partials included) in arrival order. */
export async function* runTurn(ctx: TurnContext): AsyncGenerator<OmniMessage, TurnResult> {
  const queue = createMergeQueue<OmniMessage>();
  const outputs = new Map<string, ToolCallOutputMessage>();
  const toolCalls: ToolCallMessage[] = [];
  const segments: CompleteMessage[] = [];
  const completes: CompleteMessage[] = [];
  let outcome: ModelOutcome = { status: "completed" };
  const { signal } = ctx;

  const emit = (msg: OmniMessage) => {
    queue.push(msg);
    ctx.record(msg);
  };
  // While an approval is pending, tool items wait here so the decision lands right after its call.
  let approving = false;
  let held: Held[] = [];
  const emitTool = (item: Held) => {
    if (approving) {
      held.push(item);
      return;
    }
    const m = item.envelope ?? modelMsg(item.payload!);
    // A direct child's session_meta: the parent records its `subagent` pointer here (§5.4).
    if (m.type === "session_meta" && m.origin?.length === 1) {
      ctx.record(eventMsg({ type: "subagent", session_id: m.origin[0]! }));
    }
    emit(m);
  };
  const release = () => {
    approving = false;
    const items = held;
    held = [];
    for (const item of items) emitTool(item);
  };

  const answer = (out: ToolCallOutputMessage) => {
    if (!outputs.has(out.tool_call_id)) outputs.set(out.tool_call_id, out);
  };

  async function executeOne(call: ToolCallMessage): Promise<void> {
    let done = false;
    try {
      for await (const item of ctx.execute(call, signal)) {
        if (item.type === "forwarded") {
          emitTool({ envelope: item.message });
          continue;
        }
        emitTool({ payload: item });
        if (item.type === "tool_call_output") {
          answer(item);
          done = true;
        }
      }
    } catch (err) {
      if (done) {
        ctx.warn(`[penguin] tool "${call.name}" threw after its output: ${errorMessage(err)}`);
        return;
      }
      const failed = toolCallOutput(
        call.tool_call_id,
        `[tool error] ${errorMessage(err)}`,
        "failed",
      );
      emitTool({ payload: failed });
      answer(failed);
    }
  }

  async function drive(): Promise<void> {
    try {
      emit(eventMsg({ type: "request_begin" }));
      for await (const item of ctx.stream) {
        if (item.kind === "usage") {
          const session = ctx.addUsage(item.usage);
          emit(
            eventMsg({ type: "token_usage", session: { ...session }, request: { ...item.usage } }),
          );
          continue;
        }
        if (item.kind === "end") {
          outcome = item.outcome;
          const end: OmniMessage = eventMsg({ type: "request_end", status: outcome.status });
          const p = end.payload as Record<string, unknown>;
          if (outcome.status !== "completed") {
            p.error_message = outcome.error_message ?? outcome.status;
          }
          if (outcome.status !== "completed" || ctx.reconnects > 0) p.attempt = ctx.reconnects + 1;
          const wait = ctx.plannedRetry(outcome);
          if (wait !== undefined) p.retry_in_ms = wait;
          emit(end);
          break;
        }
        const payload = item.message;
        emit(modelMsg(payload));
        if (!isComplete(payload)) continue;
        completes.push(payload);
        if (payload.type === "thinking" || payload.type === "text") segments.push(payload);
        if (payload.type !== "tool_call" || payload.stop_reason !== "completed") continue;
        toolCalls.push(payload);
        if (signal?.aborted) continue;
        approving = true;
        const { decision, reason } = await decide(ctx.approve, payload, ctx.warn);
        if (signal?.aborted) {
          release();
          continue;
        }
        emit(eventMsg({
          type: "approval_decision",
          decision,
          tool_call_id: payload.tool_call_id,
          ...(decision !== "allow" && reason !== undefined ? { reason } : {}),
        }));
        if (decision !== "allow") {
          const refused = denialOutput(payload, decision, reason);
          emit(modelMsg(refused));
          answer(refused);
          release();
          continue;
        }
        release();
        // Record before execute: a call the trace cannot show never runs.
        if (ctx.recorded && !(await ctx.recorded())) continue;
        if (signal?.aborted) continue;
        queue.open();
        const running = executeOne(payload).finally(() => queue.close());
        executions.add(running);
        running.finally(() => executions.delete(running));
      }
    } catch (err) {
      // The model layer never throws; this is a last-resort guard.
      outcome = { status: "failed", error_message: errorMessage(err) };
      emit(
        eventMsg({ type: "request_end", status: "failed", error_message: outcome.error_message! }),
      );
    } finally {
      release();
      queue.close();
    }
  }

  const executions = new Set<Promise<void>>();
  queue.open();
  const driving = drive();
  let drained = false;
  try {
    for (;;) {
      const msg = await queue.next();
      if (msg === null) break;
      yield msg;
    }
    drained = true;
  } finally {
    if (!drained) {
      // Iteration stopped early: abort, and let the request and the tools wind down first.
      ctx.abandon?.();
      await driving;
      await Promise.all([...executions]);
    }
  }
  await driving;

  const toolOutputs: ToolCallOutputMessage[] = [];
  const seen = new Set<string>();
  for (const call of toolCalls) {
    if (seen.has(call.tool_call_id)) continue;
    seen.add(call.tool_call_id);
    const out = outputs.get(call.tool_call_id);
    if (out) toolOutputs.push(out);
  }
  return { toolOutputs, toolCalls, segments, completes, outcome };
}
