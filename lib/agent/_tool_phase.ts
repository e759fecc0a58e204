/**
 * The tool phase of one turn: each complete tool call is
 * approved as it arrives (one at a time), and an allowed call runs at once,
 * concurrently with the model stream and the other tools. Its items go out
 * through the turn's merge queue; while an approval is pending, tool items
 * are held back so the decision lands right after its call. A call runs only
 * once its `tool_call` and `approval_decision` are in the trace.
 *
 * @module
 */
import { eventMsg, modelMsg, toolCallOutput } from "../protocol/builders.ts";
import { errorMessage } from "../protocol/errors.ts";
import type {
  ModelPayload,
  OmniMessage,
  ToolCallMessage,
  ToolCallOutputMessage,
} from "../protocol/types.ts";
import { denialOutput } from "../tools/command_policy.ts";
import type { ResponseImages, ToolExecutionItem } from "../tools/environment.ts";
import type { MergeQueue } from "./_queue.ts";
import { type ApproveFn, decide } from "./approval.ts";
import { createFileCallOrder } from "./_file_call_order.ts";
import { holdImages } from "../tools/image_ledger.ts";
import { largeGarbage } from "../state/_gc.ts";

/**
 * Copies of a call's arguments left as garbage once it has run: its parse, what went to the tool
 * host and back (text and bytes), the checks' views.
 */
const CALL_COPIES = 4;

/**
 * Runs one approved tool call: its partials, forwarded child messages, then
 * its complete output. `responseImages` is shared by the calls of one model
 * response: the images they return together are bounded (`executeTool`).
 */
export type ToolExecutor = (
  call: ToolCallMessage,
  signal: AbortSignal | undefined,
  responseImages: ResponseImages,
) => AsyncIterable<ToolExecutionItem>;

/** What the tool phase is given. */
export interface ToolPhaseDeps {
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
}

/** A tool item waiting for a pending approval: a payload to wrap, or a forwarded envelope. */
interface Held {
  payload?: ModelPayload;
  envelope?: OmniMessage;
}

/** The tool calls of one turn. */
export interface ToolPhase {
  /** Approve `call` and, when allowed, start it; resolves once it is decided (not finished). */
  take(call: ToolCallMessage): Promise<void>;
  /** Let held tool items out (the stream ended, or stopped, while an approval was pending). */
  release(): void;
  /** Resolves when every started call has finished. */
  settled(): Promise<void>;
  /** The first output of each of `calls`, in call order (calls without one are skipped). */
  outputsFor(calls: readonly ToolCallMessage[]): ToolCallOutputMessage[];
}

/**
 * The tool phase of a turn: items go to `queue` and (through `emit`) the trace.
 * Long as a whole because it is a closure over the phase's state (held
 * items, outputs, running calls); each function inside is short.
 */
export function createToolPhase(
  ctx: ToolPhaseDeps,
  queue: MergeQueue<OmniMessage>,
  emit: (msg: OmniMessage) => void,
): ToolPhase {
  // Long because: one closure over the queue, held items, outputs and calls; each part is short.
  const { signal } = ctx;
  const outputs = new Map<string, ToolCallOutputMessage>();
  const executions = new Set<Promise<void>>();
  const fileOrder = createFileCallOrder();
  const responseImages: ResponseImages = { id: crypto.randomUUID(), bytes: 0 };
  let approving = false;
  let held: Held[] = [];

  const emitTool = (item: Held) => {
    if (approving) {
      held.push(item);
      return;
    }
    const m = item.envelope ?? modelMsg(item.payload!);
    // A direct child's session_meta: the parent records a `subagent` pointer to the child's session here.
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
      for await (const item of ctx.execute(call, signal, responseImages)) {
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
    } finally {
      largeGarbage(CALL_COPIES * call.arguments.length);
    }
  }

  return {
    async take(call) {
      if (signal?.aborted) return;
      approving = true;
      const { decision, reason, ...extras } = await decide(ctx.approve, call, ctx.warn);
      if (signal?.aborted) {
        release();
        return;
      }
      emit(eventMsg({
        type: "approval_decision",
        decision,
        tool_call_id: call.tool_call_id,
        ...(decision !== "allow" && reason !== undefined ? { reason } : {}),
        ...extras,
      }));
      if (decision !== "allow") {
        const refused = denialOutput(call, decision, reason, extras.note);
        emit(modelMsg(refused));
        answer(refused);
        release();
        return;
      }
      release();
      // Record before execute: a call the trace cannot show never runs.
      if (ctx.recorded && !(await ctx.recorded())) return;
      if (signal?.aborted) return;
      queue.open();
      // Calls on files run in the order the model made them (two edits of one file must not race).
      const { ready, done } = fileOrder.turn(call);
      const running = ready.then(() => executeOne(call)).finally(() => {
        done();
        queue.close();
      });
      executions.add(running);
      running.finally(() => executions.delete(running));
    },
    release,
    async settled() {
      await Promise.all([...executions]);
    },
    outputsFor(calls) {
      holdImages(responseImages, 0); // the turn is over: its images go to the history's count
      return outputsInOrder(calls, outputs);
    },
  };
}

/** The output of each of `calls` that has one, in the calls' order, each call once. */
function outputsInOrder(
  calls: readonly ToolCallMessage[],
  outputs: ReadonlyMap<string, ToolCallOutputMessage>,
): ToolCallOutputMessage[] {
  const out: ToolCallOutputMessage[] = [];
  const seen = new Set<string>();
  for (const call of calls) {
    if (seen.has(call.tool_call_id)) continue;
    seen.add(call.tool_call_id);
    const o = outputs.get(call.tool_call_id);
    if (o) out.push(o);
  }
  return out;
}
