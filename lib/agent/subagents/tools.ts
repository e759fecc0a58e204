/**
 * The subagent tool factories of one session, bound to its children
 * registry: what the tool set instantiates `run_subagent`, `input_subagent`
 * and `kill_subagent` with (config-overridden definitions included).
 *
 * @module
 */
import type { ToolFactory } from "../../tools/mod.ts";
import { createInputSubagentTool } from "./input_subagent.ts";
import { createKillSubagentTool } from "./kill_subagent.ts";
import type { ChildRegistry } from "./registry.ts";
import { createRunSubagentTool } from "./run_subagent.ts";

/** Factories of the three subagent tools over `registry`; empty when the session may not spawn. */
export function subagentToolFactories(registry: ChildRegistry): Record<string, ToolFactory> {
  if (!registry.canSpawn) return {};
  return {
    run_subagent: (def) => createRunSubagentTool(registry, def),
    input_subagent: (def) => createInputSubagentTool(registry, def),
    kill_subagent: (def) => createKillSubagentTool(registry, def),
  };
}
