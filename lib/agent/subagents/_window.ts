// Pieces shared by the subagent tools: the failure output, the approval
// sink of a tool call's window, and the result of a window that saw the
// child's task end.
import type { ToolEvent } from "../../tools/tool.ts";
import type { ApproveFn } from "../approval.ts";
import type { Child } from "./_child.ts";
import {
  NO_TEXT_ANSWER_NOTE,
  subagentAbortedNote,
  subagentIdleNote,
  subagentToolError,
} from "./definitions.ts";
import type { RunBinding } from "./registry.ts";
import { pendingOutput } from "../../tools/_args.ts";

/** The events of a failed call: `[<tool> error: <message>]`, status failed. */
export function failure(tool: string, message: string): ToolEvent[] {
  return [
    { type: "delta", text: subagentToolError(tool, message) },
    { type: "result", status: "failed" },
  ];
}

const denyAll: ApproveFn = () => ({
  decision: "deny",
  reason: "no tool call of the parent is following this subagent to ask about it",
});

/** The approve function child calls get while `run`'s tool call follows the child (deny without one). */
export function windowSink(run: RunBinding | undefined): ApproveFn {
  return run?.approve ?? denyAll;
}

/**
 * The result after a window saw the child's task end: failed with
 * `[subagent aborted: …]` when it aborted, else completed (noting a missing
 * text answer); `idle` adds the idle note of a registered child. An end
 * already reported (by an earlier window or a notice) is not reported again.
 */
export function* endResult(child: Child, opts: { idle: boolean }): Generator<ToolEvent> {
  yield* pendingOutput(child.take());
  const end = child.endReported ? { sawText: true } : child.lastEnd ?? { sawText: false };
  child.endReported = true;
  const notes: string[] = [];
  if (end.aborted !== undefined) notes.push(subagentAbortedNote(end.aborted));
  else if (!end.sawText) notes.push(NO_TEXT_ANSWER_NOTE);
  if (opts.idle) notes.push(subagentIdleNote(child.id));
  const status = end.aborted !== undefined ? "failed" : "completed";
  yield notes.length > 0 ? { type: "result", status, note: notes.join("\n") } : {
    type: "result",
    status,
  };
}
