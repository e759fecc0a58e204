/**
 * The default `tools.builtin` list as written into a new agent's
 * `system_config.yaml`: every built-in tool's definition (description,
 * parameters, permission, limits) in the config's key names, the list
 * PenguinHarness keeps in that file.
 *
 * @module
 */
import type { BuiltinToolConfig, InitOptions } from "../state/mod.ts";
import { resolveToolDefinitions } from "./toolset.ts";

/** Every default built-in tool definition, as `tools.builtin` entries. */
export function defaultBuiltinToolConfigs(): BuiltinToolConfig[] {
  return resolveToolDefinitions().map((d) => {
    const entry: BuiltinToolConfig = {
      name: d.name,
      description: d.description,
      parameters: structuredClone(d.parameters),
      permission: d.permission,
      timeoutMs: d.timeoutMs,
      maxOutputLength: d.maxOutputLength,
    };
    if (!d.callDescription) entry.call_description = false;
    if (d.forModel !== undefined) entry.forModel = d.forModel;
    return entry;
  });
}

/** Options for `loadOrInitAgent` that write a new agent's config with the full key set. */
export function agentInitOptions(): InitOptions {
  return { builtinTools: defaultBuiltinToolConfigs() };
}
