// A subagent tool bound to one session's children registry: what the tool
// set runs with the ordinary tool context.
import type { DefinedTool } from "../../tools/define.ts";
import type { Tool, ToolCallContext, ToolDefinition } from "../../tools/tool.ts";
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

/** Builds a subagent tool over `registry` from a (possibly config-overridden) definition. */
export type ChildToolFactory = (
  registry: ChildRegistry,
  definition?: ToolDefinition,
) => Tool<ToolCallContext>;

/** The {@linkcode ChildToolFactory} of the subagent tool `defined`. */
export function childToolFactory(defined: DefinedTool<SubagentToolContext>): ChildToolFactory {
  return (registry, definition) => bindChildren(defined.create(definition), registry);
}
