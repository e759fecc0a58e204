/**
 * input_subagent: poll a registered subagent, or give an idle one a
 * follow-up task, and return what it produces during the yield window.
 *
 * A prompt while the subagent runs is an error. An empty poll of an idle
 * subagent returns its undelivered text and `[subagent idle with
 * subagent_id <id>; send a follow-up prompt to continue]`. A subagent
 * restored after a restart (its process died mid-task) is resumed from its
 * trace first: with a prompt, that prompt is its next task; without one it
 * is told to continue the interrupted task. Still running at the window end
 * → `[subagent running with subagent_id …]`. An abort only ends the poll.
 *
 * @module
 */
import { z } from "zod";
import { modelMsg, userText } from "../../protocol/builders.ts";
import { errorMessage } from "../../protocol/errors.ts";
// The declaration pieces come from their own modules, not the tools barrel, so the offline
// views that only need this tool's preview stay light (see tool_previews.ts).
import { ANY_ARGS, type DefinedTool, defineTool } from "../../tools/define.ts";
import { clampYield } from "../../tools/yield_window.ts";
import type { ToolCallContext, ToolDefinition, ToolEvent } from "../../tools/tool.ts";
import { checkInputArgs } from "./_args.ts";
import { maskForChild } from "./_mask_input.ts";
import { endResult, failure, windowSink } from "./_window.ts";
import {
  descriptionArg,
  SUBAGENT_DEFAULT_YIELD_MS,
  SUBAGENT_POLL_YIELD_MS,
  subagentIdArg,
  subagentRunningNote,
} from "./definitions.ts";
import type { ChildRegistry, SubagentToolContext } from "./registry.ts";
import { type ChildToolFactory, childToolFactory } from "./_bind.ts";
import { inputPreview, singleLine } from "../../display/tool_preview.ts";

/** The harness text that resumes a subagent whose task a restart interrupted. */
export const RESUME_TASK_TEXT =
  "[resumed after a restart] penguin exited while you were working on your task, and your session was restored from its trace. Continue the task from where it stopped and finish it; tool calls that were cut off show an interrupted output.";

/** The failure text for an id the registry does not hold. */
export function unknownSubagentMessage(id: string, registry: ChildRegistry): string {
  const live = registry.ids();
  const known = live.length === 0
    ? "this session has no registered subagents"
    : `registered: ${live.join(", ")}`;
  return `no subagent has subagent_id "${id}" (it may have been killed or evicted); ${known}`;
}

async function* inputSubagent(
  definition: ToolDefinition,
  registry: ChildRegistry,
  rawArgs: Record<string, unknown>,
  ctx: ToolCallContext,
): AsyncGenerator<ToolEvent> {
  const fail = (message: string) => failure("input_subagent", message);
  const checked = checkInputArgs(rawArgs);
  if (!checked.ok) return yield* fail(checked.message);
  const args = checked.value.prompt === undefined
    ? checked.value
    : { ...checked.value, prompt: maskForChild(checked.value.prompt, ctx) };
  const child = registry.get(args.subagentId);
  if (!child) return yield* fail(unknownSubagentMessage(args.subagentId, registry));
  if (args.prompt !== undefined && child.state === "running") {
    return yield* fail(
      `subagent ${child.id} is still running, so it cannot take a follow-up prompt; poll it without a prompt, or stop it with kill_subagent`,
    );
  }
  if (child.followed) {
    return yield* fail(
      `another tool call is already following subagent ${child.id}; wait for it to return`,
    );
  }
  const run = registry.currentRun();
  let started = false;
  const interrupted = child.state === "interrupted";
  if (!child.session && (interrupted || args.prompt !== undefined)) {
    // Restored after a restart: reopen its session from its trace first.
    const spawner = registry.spawner;
    if (!spawner) return yield* fail("this session cannot resume subagents");
    try {
      const level = child.thinkingLevel ?? run?.thinkingLevel;
      child.attach(await spawner.resume(child.sessionId, child.agentId, level));
    } catch (err) {
      return yield* fail(
        `subagent ${child.id} (session ${child.sessionId}) could not be resumed from its trace: ${
          errorMessage(err)
        }`,
      );
    }
  }
  if (interrupted || args.prompt !== undefined) {
    const input = args.prompt !== undefined
      ? userText(args.prompt, "parent_agent")
      : userText(RESUME_TASK_TEXT, "harness");
    if (args.prompt !== undefined) child.label = args.prompt;
    yield { type: "forward", message: modelMsg(input, [child.sessionId]) };
    child.start([input]);
    started = true;
  }
  const windowMs = clampYield(
    args.yieldMs,
    started ? SUBAGENT_DEFAULT_YIELD_MS : SUBAGENT_POLL_YIELD_MS,
    definition.timeoutMs,
  );
  const end = yield* child.follow(windowMs, ctx.signal, windowSink(run));
  if (end === "aborted") return yield { type: "result", status: "aborted" };
  if (end === "window") {
    return yield {
      type: "result",
      status: "completed",
      note: subagentRunningNote(child.id, child.pendingApprovals),
    };
  }
  yield* endResult(child, { idle: true });
}

/** input_subagent, declared once; its arguments are checked by the tool itself. */
export const inputSubagentTool: DefinedTool<SubagentToolContext> = defineTool({
  name: "input_subagent",
  description: "Talk to a subagent that run_subagent left running or idle (identified by its " +
    "subagent_id): poll it for new output and its status, or, once it is idle, give it a " +
    "follow-up task in the same session. A subagent interrupted by a restart is resumed from its " +
    "trace by this tool.",
  shape: z.object({
    description: descriptionArg,
    subagent_id: subagentIdArg,
    prompt: z.string().describe(
      "A follow-up task, delivered as a new message in the subagent's session; only accepted " +
        "while it is idle. Empty or absent: send nothing, just poll.",
    ).optional(),
    yield_time_ms: z.number().describe(
      `How long to wait for output or completion before returning, in ms: default ${SUBAGENT_DEFAULT_YIELD_MS} ` +
        `when work starts, ${SUBAGENT_POLL_YIELD_MS} for an empty poll. At least 250; capped 1 s below the tool timeout.`,
    ).optional(),
  }),
  permission: "rw",
  timeoutMs: 600_000,
  maxOutputLength: 16_000,
  callDescription: true,
  args: ANY_ARGS,
  // `<subagent_id>`, or `<subagent_id> << <prompt>` when it sends a task.
  preview: inputPreview("subagent_id", "prompt", singleLine),
  run: (args, ctx, definition) => inputSubagent(definition, ctx.children, args, ctx),
});

/** Build input_subagent over `registry` from a (possibly config-overridden) definition. */
export const createInputSubagentTool: ChildToolFactory = childToolFactory(inputSubagentTool);

/** The default input_subagent definition. */
export const INPUT_SUBAGENT_DEFINITION: ToolDefinition = inputSubagentTool.definition;
