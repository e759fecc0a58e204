/**
 * What lib/tools derives from its list of built-in tools (./builtin.ts): the
 * factory table, the default definitions and limits, and the instantiation of
 * a list of definitions. Its own module, apart from the `mod.ts` barrel, so a
 * session's start imports it without every other module of the layer.
 *
 * @module
 */
import { BUILTIN_TOOLS } from "./builtin.ts";
import type { Tool, ToolDefinition, ToolFactory, ToolPermission } from "./tool.ts";
import type { ToolContext } from "./context.ts";

/** The built-in factory table: only these names can be instantiated from config. */
export const BUILTIN_TOOL_FACTORIES: Readonly<Record<string, ToolFactory<ToolContext>>> = Object
  .freeze(Object.fromEntries(BUILTIN_TOOLS.map((t) => [t.name, t.create])));

/** The default built-in definitions, in the order offered to the model. */
export const DEFAULT_TOOL_DEFINITIONS: readonly ToolDefinition[] = Object.freeze(
  BUILTIN_TOOLS.map((t) => t.definition),
);

/** The default permission and limits of each built-in tool. */
export const BUILTIN_TOOL_LIMITS: Readonly<
  Record<
    string,
    Readonly<{
      permission: ToolPermission;
      timeoutMs: number;
      maxOutputLength: number;
      callDescription: boolean;
    }>
  >
> = Object.freeze(Object.fromEntries(
  BUILTIN_TOOLS.map(({ name, definition: d }) => [name, {
    permission: d.permission,
    timeoutMs: d.timeoutMs,
    maxOutputLength: d.maxOutputLength,
    callDescription: d.callDescription,
  }]),
));

/**
 * Instantiate the tools of `definitions` (default: the built-in list), keyed
 * by name. Names without a factory are dropped silently, as in the reference.
 */
export function builtinTools(
  definitions: readonly ToolDefinition[] = DEFAULT_TOOL_DEFINITIONS,
): Map<string, Tool<ToolContext>> {
  const tools = new Map<string, Tool<ToolContext>>();
  for (const def of definitions) {
    const factory = BUILTIN_TOOL_FACTORIES[def.name];
    if (factory && !tools.has(def.name)) tools.set(def.name, factory(def));
  }
  return tools;
}
