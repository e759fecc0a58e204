/**
 * The subagent tools: run_subagent, input_subagent and kill_subagent in the
 * order offered to the model, and their factories bound to one session's
 * children registry (what the tool set instantiates them with,
 * config-overridden definitions included).
 *
 * @module
 */
import type { DefinedTool } from "../../tools/define.ts";
import type { ToolDefinition, ToolFactory } from "../../tools/tool.ts";
import { createInputSubagentTool, inputSubagentTool } from "./input_subagent.ts";
import { createKillSubagentTool, killSubagentTool } from "./kill_subagent.ts";
import type { ChildRegistry, SubagentToolContext } from "./registry.ts";
import { createRunSubagentTool, runSubagentTool } from "./run_subagent.ts";

/** The subagent tools, in the order offered to the model (after kill_command). */
export const SUBAGENT_TOOLS: readonly DefinedTool<SubagentToolContext>[] = Object.freeze([
  runSubagentTool,
  inputSubagentTool,
  killSubagentTool,
]);

/** The default subagent definitions, in the order offered to the model. */
export const SUBAGENT_TOOL_DEFINITIONS: readonly ToolDefinition[] = Object.freeze(
  SUBAGENT_TOOLS.map((t) => t.definition),
);

/** The names of the subagent tools. */
export const SUBAGENT_TOOL_NAMES: readonly string[] = Object.freeze(
  SUBAGENT_TOOLS.map((t) => t.name),
);

/** Factories of the three subagent tools over `registry`; empty when the session may not spawn. */
export function subagentToolFactories(registry: ChildRegistry): Record<string, ToolFactory> {
  if (!registry.canSpawn) return {};
  return {
    run_subagent: (def) => createRunSubagentTool(registry, def),
    input_subagent: (def) => createInputSubagentTool(registry, def),
    kill_subagent: (def) => createKillSubagentTool(registry, def),
  };
}
