/**
 * One tool call as its runner (the worker pool, the tool host) sees it: the
 * run signature both offer, the messages that come back for the call, held
 * in order until the call takes them, and the call's events read from them.
 *
 * @module
 */
import type { ToolDefinition, ToolEvent } from "../tool.ts";
import { fromWireError, type WireError, type WorkerMessage } from "./_protocol.ts";

/** Run tool `definition.name` with `args` in context `ctx`, streaming its events. */
export type RunToolCall<C> = (
  definition: ToolDefinition,
  args: Record<string, unknown>,
  ctx: C,
) => AsyncGenerator<ToolEvent, void, undefined>;

/** A message for a call: what the worker or host sent, or the crash of its runner. */
export type CallMessage = WorkerMessage | { type: "crash"; error: WireError };

/** The messages of one call: pushed as they come, taken in order. */
export interface CallInbox {
  /** Hold `m` for the call (wakes a waiting `next`). */
  push(m: CallMessage): void;
  /** The oldest message held, waiting for one when none is. */
  next(): Promise<CallMessage>;
}

/** An empty {@linkcode CallInbox}. */
export function callInbox(): CallInbox {
  const queue: CallMessage[] = [];
  let wake: (() => void) | undefined;
  return {
    push(m) {
      queue.push(m);
      wake?.();
    },
    async next() {
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      return queue.shift()!;
    },
  };
}

/**
 * The call's events from `inbox`: `done` ends them, an `error` or a crash is
 * thrown (as an `Error` with its name and message); `ended` is told which
 * of the three came first. Other messages are passed over.
 */
export async function* callEvents(
  inbox: CallInbox,
  ended: (how: "done" | "error" | "crash") => void,
): AsyncGenerator<ToolEvent, void, undefined> {
  for (;;) {
    const m = await inbox.next();
    if (m.type === "event") yield m.event;
    else if (m.type === "done") return ended("done");
    else if (m.type === "error" || m.type === "crash") {
      ended(m.type);
      throw fromWireError(m.error);
    }
  }
}
