// A subagent tool bound to one session's children registry: what the tool
// set runs with the ordinary tool context.
import type { Tool, ToolCallContext } from "../../tools/tool.ts";
import type { ChildRegistry, SubagentToolContext } from "./registry.ts";

/** `tool`, run with `registry` as its `ctx.children`. */
export function bindChildren(
  tool: Tool<SubagentToolContext>,
  registry: ChildRegistry,
): Tool<ToolCallContext> {
  const bound: Tool<ToolCallContext> = {
    definition: tool.definition,
    run: (args, ctx) => tool.run(args, { ...ctx, children: registry }),
  };
  if (tool.preview) bound.preview = tool.preview;
  if (tool.permissionFor) bound.permissionFor = tool.permissionFor;
  return bound;
}
