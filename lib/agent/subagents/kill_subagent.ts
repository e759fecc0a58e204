/**
 * kill_subagent: stop a registered subagent — deny the tool calls it
 * waits to have approved, abort its running task, close its session — and
 * return the text the parent has not seen yet. It is removed from the
 * registry (its trace stays on disk). Notes: `[subagent <id> killed: its
 * task was aborted]`, or `[subagent <id> was idle; removed]`.
 *
 * @module
 */
// The declaration pieces come from their own modules, not the tools barrel, so the offline
// views that only need this tool's preview stay light (see tool_previews.ts).
import { z } from "zod";
import { ANY_ARGS, type DefinedTool, defineTool } from "../../tools/define.ts";
import type { ToolCallContext, ToolDefinition, ToolEvent } from "../../tools/tool.ts";
import { checkKillArgs } from "./_args.ts";
import { failure } from "./_window.ts";
import { descriptionArg, subagentIdArg } from "./definitions.ts";
import { unknownSubagentMessage } from "./input_subagent.ts";
import type { ChildRegistry, SubagentToolContext } from "./registry.ts";
import { type ChildToolFactory, childToolFactory } from "./_bind.ts";
import { pendingOutput } from "../../tools/_args.ts";

async function* killSubagent(
  registry: ChildRegistry,
  rawArgs: Record<string, unknown>,
  _ctx: ToolCallContext,
): AsyncGenerator<ToolEvent> {
  const checked = checkKillArgs(rawArgs);
  if (!checked.ok) return yield* failure("kill_subagent", checked.message);
  const id = checked.value.subagentId;
  const child = registry.get(id);
  if (!child) return yield* failure("kill_subagent", unknownSubagentMessage(id, registry));
  registry.remove(id);
  const was = child.state;
  const denied = child.pendingApprovals;
  await child.dispose("killed by the parent agent");
  yield* pendingOutput(child.take());
  const note = was === "running"
    ? `[subagent ${id} killed: its task was aborted${
      denied > 0 ? ` and ${denied} tool call(s) awaiting approval were denied` : ""
    }]`
    : `[subagent ${id} was ${was}; removed]`;
  yield { type: "result", status: "completed", note };
}

/** kill_subagent, declared once; its arguments are checked by the tool itself. */
export const killSubagentTool: DefinedTool<SubagentToolContext> = defineTool({
  name: "kill_subagent",
  description:
    "Stop a subagent (identified by its subagent_id): its running task is aborted, tool calls " +
    "waiting for approval are denied, and it is removed. Returns the output you have not seen yet.",
  shape: z.object({ description: descriptionArg, subagent_id: subagentIdArg }),
  permission: "rw",
  timeoutMs: 30_000,
  maxOutputLength: 16_000,
  callDescription: true,
  args: ANY_ARGS,
  run: (args, ctx) => killSubagent(ctx.children, args, ctx),
});

/** Build kill_subagent over `registry` from a (possibly config-overridden) definition. */
export const createKillSubagentTool: ChildToolFactory = childToolFactory(killSubagentTool);

/** The default kill_subagent definition. */
export const KILL_SUBAGENT_DEFINITION: ToolDefinition = killSubagentTool.definition;
