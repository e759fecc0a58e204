/**
 * kill_subagent (§6.6): stop a registered subagent — deny the tool calls it
 * waits to have approved, abort its running task, close its session — and
 * return the text the parent has not seen yet. It is removed from the
 * registry (its trace stays on disk). Notes: `[subagent <id> killed: its
 * task was aborted]`, or `[subagent <id> was idle; removed]`.
 *
 * @module
 */
import {
  ANY_ARGS,
  type DefinedTool,
  defineTool,
  type Tool,
  type ToolDefinition,
  type ToolEvent,
} from "../../tools/mod.ts";
import type { ToolCallContext } from "../../tools/tool.ts";
import { checkKillArgs } from "./_args.ts";
import { failure } from "./_window.ts";
import { KILL_SUBAGENT_DEFINITION } from "./definitions.ts";
import { unknownSubagentMessage } from "./input_subagent.ts";
import type { ChildRegistry, SubagentToolContext } from "./registry.ts";
import { bindChildren } from "./_bind.ts";
import { stringArg } from "../../tools/mod.ts";

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
  const rest = child.take();
  if (rest) yield { type: "delta", text: rest };
  const note = was === "running"
    ? `[subagent ${id} killed: its task was aborted${
      denied > 0 ? ` and ${denied} tool call(s) awaiting approval were denied` : ""
    }]`
    : `[subagent ${id} was ${was}; removed]`;
  yield { type: "result", status: "completed", note };
}

/**
 * kill_subagent, declared once (its definition is in definitions.ts, shared with
 * the tool set's default order). Its arguments are checked by the tool.
 */
export const killSubagentTool: DefinedTool<SubagentToolContext> = defineTool({
  ...KILL_SUBAGENT_DEFINITION,
  args: ANY_ARGS,
  preview: (args) => stringArg(args, "subagent_id")?.trim() || undefined,
  run: (args, ctx) => killSubagent(ctx.children, args, ctx),
});

/** Build kill_subagent over `registry` from a (possibly config-overridden) definition. */
export function createKillSubagentTool(
  registry: ChildRegistry,
  definition?: ToolDefinition,
): Tool<ToolCallContext> {
  return bindChildren(killSubagentTool.create(definition), registry);
}
