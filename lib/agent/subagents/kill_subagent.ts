/**
 * kill_subagent (§6.6): stop a registered subagent — deny the tool calls it
 * waits to have approved, abort its running task, close its session — and
 * return the text the parent has not seen yet. It is removed from the
 * registry (its trace stays on disk). Notes: `[subagent <id> killed: its
 * task was aborted]`, or `[subagent <id> was idle; removed]`.
 *
 * @module
 */
import type { Tool, ToolDefinition, ToolEvent } from "../../tools/mod.ts";
import type { ToolCallContext } from "../../tools/tool.ts";
import { checkKillArgs } from "./_args.ts";
import { failure } from "./_window.ts";
import { KILL_SUBAGENT_DEFINITION } from "./definitions.ts";
import { unknownSubagentMessage } from "./input_subagent.ts";
import type { ChildRegistry } from "./registry.ts";

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

/** Build kill_subagent over `registry` from a (possibly config-overridden) definition. */
export function createKillSubagentTool(
  registry: ChildRegistry,
  definition: ToolDefinition = KILL_SUBAGENT_DEFINITION,
): Tool {
  return { definition, run: (args, ctx) => killSubagent(registry, args, ctx) };
}
