/**
 * One request of the agent loop: send the input, stream the
 * model's output, approve each complete tool call as it arrives (one at a
 * time) and run the allowed ones concurrently without blocking the stream.
 *
 * Everything produced goes out through one merge queue in arrival order and
 * is recorded as it goes. Record order: `request_begin`; the
 * model's complete messages; each `approval_decision` right after its
 * `tool_call` (outputs of other tools that finish while an approval is
 * pending are held back until the decision is out); `token_usage` then
 * `request_end`; tool outputs in completion order, possibly after
 * `request_end`. The turn returns only when every tool has finished. The
 * approvals and the tool runs are the tool phase (./_tool_phase.ts).
 *
 * @module
 */
import { eventMsg, modelMsg } from "../protocol/builders.ts";
import { errorMessage } from "../protocol/errors.ts";
import type { RequestEndEvent } from "../protocol/events.ts";
import { isComplete } from "../protocol/guards.ts";
import type {
  CompleteMessage,
  OmniMessage,
  TokenCounts,
  ToolCallMessage,
} from "../protocol/types.ts";
import type { ModelOutcome, ModelStreamItem } from "../models/outcome.ts";
import { createMergeQueue } from "./_queue.ts";
import type { TurnProducts } from "./carry_over.ts";
import { createToolPhase, type ToolPhaseDeps } from "./_tool_phase.ts";

export type { ToolExecutor } from "./_tool_phase.ts";

/** What one turn needs from its engine: the tool phase's needs, plus the request and its counters. */
export interface TurnContext extends ToolPhaseDeps {
  /** The model request, already bound to history and settings; yields model items, never throws. */
  stream: AsyncIterable<ModelStreamItem>;
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

/**
 * Run one request; yields every envelope (partials included) in arrival
 * order. About 90 lines: the request driver and the queue's consumer share
 * the turn's state; the approvals and tool runs are ./_tool_phase.ts.
 */
export async function* runTurn(ctx: TurnContext): AsyncGenerator<OmniMessage, TurnResult> {
  // Long because: one model request and its tool phase push to the same merge queue and the turn's
  // collected messages, which stay locals of one generator.
  const queue = createMergeQueue<OmniMessage>();
  const toolCalls: ToolCallMessage[] = [];
  const segments: CompleteMessage[] = [];
  const completes: CompleteMessage[] = [];
  let outcome: ModelOutcome = { status: "completed" };

  const emit = (msg: OmniMessage) => {
    queue.push(msg);
    ctx.record(msg);
  };
  const tools = createToolPhase(ctx, queue, emit);

  async function drive(): Promise<void> {
    let usage: OmniMessage | undefined;
    // Time to the first streamed message (penguin's additive `first_token_ms`).
    let began = 0;
    let firstChunkMs: number | undefined;
    try {
      emit(eventMsg({ type: "request_begin" }));
      // What the request sends (the prompt above all) is on disk before it goes: a process killed
      // while the model answers keeps the prompt it was answering (the stream starts on the
      // first read below).
      if (ctx.recorded) await ctx.recorded();
      began = performance.now();
      for await (const item of ctx.stream) {
        if (item.kind === "usage") {
          // Held until the end item (which comes next): no tool output may land between the two.
          const session = ctx.addUsage(item.usage);
          usage = eventMsg({
            type: "token_usage",
            session: { ...session },
            request: { ...item.usage },
          });
          continue;
        }
        if (item.kind === "end") {
          if (usage) emit(usage);
          usage = undefined;
          outcome = item.outcome;
          const p: RequestEndEvent = { type: "request_end", status: outcome.status };
          if (outcome.status !== "completed") {
            p.error_message = outcome.error_message ?? outcome.status;
          }
          if (outcome.status !== "completed" || ctx.reconnects > 0) p.attempt = ctx.reconnects + 1;
          if (firstChunkMs !== undefined) p.first_token_ms = firstChunkMs;
          const wait = ctx.plannedRetry(outcome);
          if (wait !== undefined) p.retry_in_ms = wait;
          emit(eventMsg(p));
          break;
        }
        const payload = item.message;
        firstChunkMs ??= Math.round(performance.now() - began);
        emit(modelMsg(payload));
        if (!isComplete(payload)) continue;
        completes.push(payload);
        if (payload.type === "thinking" || payload.type === "text") segments.push(payload);
        if (payload.type !== "tool_call" || payload.stop_reason !== "completed") continue;
        toolCalls.push(payload);
        await tools.take(payload);
      }
    } catch (err) {
      if (usage) emit(usage);
      // The model layer never throws; this is a last-resort guard.
      outcome = { status: "failed", error_message: errorMessage(err) };
      emit(
        eventMsg({ type: "request_end", status: "failed", error_message: outcome.error_message! }),
      );
    } finally {
      tools.release();
      queue.close();
    }
  }

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
      await tools.settled();
    }
  }
  await driving;

  const toolOutputs = tools.outputsFor(toolCalls);
  return { toolOutputs, toolCalls, segments, completes, outcome };
}
