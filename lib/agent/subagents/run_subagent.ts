/**
 * run_subagent: start a child session on a task and wait for its
 * answer for a yield window.
 *
 * The child is a Session of its own (its own trace, `session_meta.source:
 * "subagent"` and `parent: {session_id, tool_call_id}`), with the parent's
 * workspace, sandbox and model pair (unless the call names a complete
 * pair). Its first forwarded message is its `session_meta` (the parent
 * writes its `subagent` pointer then), the second its prompt as a
 * `parent_agent` text; then everything it streams, one origin hop added.
 *
 * Foreground: the child's own text deltas are this call's output. It ends
 * `completed`, or `failed` with `[subagent aborted: <reason>]` when the
 * child's task aborted, noting `[subagent finished without a text answer]`
 * when there was no text. Still running at the window end → registered as
 * `subagent-<8>`, `[subagent running with subagent_id …]`. An abort of the
 * call aborts the child's task. `run_in_background` registers at once; each
 * task end then becomes a `[background_task_done]` notice.
 *
 * @module
 */
import { z } from "zod";
import { modelMsg, userText } from "../../protocol/builders.ts";
import { errorMessage } from "../../protocol/errors.ts";
import type { OmniMessage, ToolSubagentFacts } from "../../protocol/types.ts";
// The declaration pieces come from their own modules, not the tools barrel, so the offline
// views that only need this tool's preview stay light (see tool_previews.ts).
import { ANY_ARGS, type DefinedTool, defineTool } from "../../tools/define.ts";
import { clampYield } from "../../tools/yield_window.ts";
import type { ToolCallContext, ToolDefinition, ToolEvent } from "../../tools/tool.ts";
import { checkRunArgs } from "./_args.ts";
import { maskForChild } from "./_mask_input.ts";
import { endResult, failure, windowSink } from "./_window.ts";
import {
  descriptionArg,
  MAX_SUBAGENT_DEPTH,
  SUBAGENT_DEFAULT_YIELD_MS,
  SUBAGENT_THINKING_LEVELS,
  subagentBackgroundNote,
  subagentRunningNote,
} from "./definitions.ts";
import type { ChildRegistry, SubagentToolContext } from "./registry.ts";
import { type ChildToolFactory, childToolFactory } from "./_bind.ts";
import type { Child } from "./_child.ts";
import {
  cap,
  NO_PAYLOAD,
  readField,
  singleLine,
  type ToolPreviewFn,
} from "../../display/tool_preview.ts";
import { pendingOutput } from "../../tools/_args.ts";

/** A child message with one origin hop (`sessionId`) added. */
export function withOrigin(message: OmniMessage, sessionId: string): OmniMessage {
  return { ...message, origin: [sessionId, ...(message.origin ?? [])] };
}

/** The `penguin_subagent` facts of the call that spawned `child`, in `state` after it. */
function subagentFacts(
  child: Child,
  toolCallId: string,
  state: ToolSubagentFacts["state"],
): ToolSubagentFacts {
  return {
    id: child.id,
    session_id: child.sessionId,
    kind: child.background ? "background" : "foreground",
    state,
    parent_tool_call_id: toolCallId,
  };
}

async function* runSubagent(
  definition: ToolDefinition,
  registry: ChildRegistry,
  rawArgs: Record<string, unknown>,
  ctx: ToolCallContext,
): AsyncGenerator<ToolEvent> {
  // Long because: the call in its order (check the arguments and limits, spawn, register, then wait
  // or go to the background); the steps share the child and the registry.
  const fail = (message: string) => failure("run_subagent", message);
  const checked = checkRunArgs(rawArgs);
  if (!checked.ok) return yield* fail(checked.message);
  // The child starts from the prompt with the parent's secrets masked (./_mask_input.ts).
  const args = { ...checked.value, prompt: maskForChild(checked.value.prompt, ctx) };
  if (registry.depth >= MAX_SUBAGENT_DEPTH) {
    return yield* fail(
      `subagent depth limit ${MAX_SUBAGENT_DEPTH} reached: a subagent cannot start subagents of its own; do this work yourself`,
    );
  }
  const spawner = registry.spawner;
  if (!spawner || registry.disposed) {
    return yield* fail("this session cannot start subagents");
  }
  if (!(await registry.makeRoom())) {
    return yield* fail(
      `${registry.maxChildren} subagents are registered and none of them is idle; wait for one to finish, or stop one with kill_subagent`,
    );
  }
  if (ctx.signal.aborted) return yield { type: "result", status: "aborted" };

  const run = registry.currentRun();
  let session;
  try {
    session = await spawner.spawn({
      toolCallId: ctx.toolCallId,
      ...(args.agentId !== undefined ? { agentId: args.agentId } : {}),
      ...(args.provider !== undefined ? { provider: args.provider, modelId: args.modelId } : {}),
      ...((args.thinkingLevel ?? run?.thinkingLevel) !== undefined
        ? { thinkingLevel: args.thinkingLevel ?? run?.thinkingLevel }
        : {}),
    });
  } catch (err) {
    return yield* fail(`the subagent could not be started: ${errorMessage(err)}`);
  }
  const sid = session.sessionId;
  const child = await registry.createChild({
    id: registry.newId(sid),
    sessionId: sid,
    agentId: args.agentId ?? spawner.agentId,
    label: args.prompt,
    background: args.background,
    session,
  });
  const release = registry.track(child);
  const facts = (state: ToolSubagentFacts["state"]) => subagentFacts(child, ctx.toolCallId, state);
  let registered = false;
  try {
    const prompt = userText(args.prompt, "parent_agent");
    if (args.background) registry.expect(sid);
    // The child's session_meta first: the parent records its `subagent` pointer on it.
    yield { type: "forward", message: withOrigin(session.metaMessage, sid) };
    yield { type: "forward", message: modelMsg(prompt, [sid]) };

    if (args.background) {
      registry.register(child);
      registered = true;
      child.setStandingSink(windowSink(run));
      child.start([prompt]);
      return yield {
        type: "result",
        status: "completed",
        note: subagentBackgroundNote(child.id),
        subagent: facts("running"),
      };
    }

    child.start([prompt]);
    const windowMs = clampYield(args.yieldMs, SUBAGENT_DEFAULT_YIELD_MS, definition.timeoutMs);
    const end = yield* child.follow(windowMs, ctx.signal, windowSink(run));
    if (end === "done") {
      for (const e of endResult(child, { idle: false })) {
        yield e.type === "result" ? { ...e, subagent: facts("ended") } : e;
      }
      return;
    }
    if (end === "aborted") {
      await child.abort("the parent's tool call was aborted");
      yield* pendingOutput(child.take());
      return yield { type: "result", status: "aborted", subagent: facts("ended") };
    }
    if (registry.disposed || !(await registry.makeRoom())) {
      // No room to keep it (or the parent is closing): stop it rather than lose track of it.
      await child.abort("no room to keep the subagent running");
      yield* pendingOutput(child.take());
      return yield {
        type: "result",
        status: "failed",
        note:
          `[subagent stopped at the end of its ${windowMs} ms window: ${registry.maxChildren} busy subagents are registered]`,
        subagent: facts("ended"),
      };
    }
    registry.register(child);
    registered = true;
    yield {
      type: "result",
      status: "completed",
      note: subagentRunningNote(child.id, child.pendingApprovals),
      subagent: facts(child.state === "idle" ? "idle" : "running"),
    };
  } finally {
    release();
    // A child that is not registered never outlives its call.
    if (!registered) await child.dispose("the run_subagent call ended");
  }
}

/** `run_subagent <- <prompt>` (capped), streamed as the prompt arrives. */
const previewRun: ToolPreviewFn = ({ json, settled }) => {
  const prompt = readField(json, "prompt");
  if (!prompt) return settled ? NO_PAYLOAD : null;
  return { payload: cap(singleLine(prompt.value)), complete: prompt.complete };
};

/** run_subagent, declared once; its arguments are checked by the tool itself. */
export const runSubagentTool: DefinedTool<SubagentToolContext> = defineTool({
  name: "run_subagent",
  description:
    "Hand a self-contained task to a subagent: a fresh session with the same workspace, tools " +
    "and sandbox (it cannot start subagents itself). It sees nothing of this conversation, so " +
    "the prompt must carry every fact it needs and say what answer to return. Its final text " +
    "answer comes back as this tool's output. A subagent still working after yield_time_ms " +
    "keeps running under a subagent_id; with run_in_background it starts under one at once and " +
    "its result arrives as an automatic message when it finishes.",
  shape: z.object({
    description: descriptionArg,
    prompt: z.string().describe(
      "The whole task for the subagent: context, constraints, and the exact answer expected back.",
    ),
    agent_id: z.string().describe(
      "Run the subagent as another agent of this project (its own instructions, memory and vault). Default: this agent.",
    ).optional(),
    model_id: z.string().describe(
      "Model for the subagent, as the upstream model id; only together with provider. Omit both to use this session's model.",
    ).optional(),
    provider: z.string().describe(
      "The provider group of model_id; required whenever model_id is given.",
    ).optional(),
    thinking_level: z.enum(SUBAGENT_THINKING_LEVELS).describe(
      "Reasoning effort of the subagent. Default: this session's level. Lower it for mechanical work, raise it for hard analysis.",
    ).optional(),
    yield_time_ms: z.number().describe(
      `How long to wait for the subagent before returning, in ms (default ${SUBAGENT_DEFAULT_YIELD_MS}; ` +
        "at least 250; capped 1 s below the tool timeout). If it is still working then, you get " +
        "its output so far and a subagent_id, and it keeps working.",
    ).optional(),
    run_in_background: z.boolean().describe(
      "Return a subagent_id at once instead of waiting. Its result arrives as an automatic " +
        "message when it finishes, so there is no need to poll. Default false.",
    ).optional(),
  }),
  permission: "rw",
  timeoutMs: 600_000,
  maxOutputLength: 16_000,
  callDescription: true,
  args: ANY_ARGS,
  preview: previewRun,
  run: (args, ctx, definition) => runSubagent(definition, ctx.children, args, ctx),
});

/** Build run_subagent over `registry` from a (possibly config-overridden) definition. */
export const createRunSubagentTool: ChildToolFactory = childToolFactory(runSubagentTool);

/** The default run_subagent definition. */
export const RUN_SUBAGENT_DEFINITION: ToolDefinition = runSubagentTool.definition;
