// The values a session masks in every tool output besides its vault: the
// configured API keys and the values of the agent's MCP server entries (see
// lib/tools/secret_mask.ts for the marker format).
import { PROVIDER_GROUPS } from "../models/catalog.ts";
import type { ResolvedModel } from "../models/resolve.ts";
import type { ProjectConfig } from "../state/project_config_types.ts";
import type { SystemConfig } from "../state/system_config.ts";
import { type Secret, vaultSecrets } from "../tools/secret_mask.ts";
import { agentPaths, type AgentRef, agentsDir } from "../state/paths.ts";
import { loadVault } from "../state/vault.ts";

const KEY_ENV = /_API_KEY$/;

/**
 * The API keys a session knows: the session model's key, every provider
 * key env var of the catalog (and any other `*_API_KEY` in `env`), and every
 * inline `api_key` of the project's model entries. A key read from an env
 * var is named by that var; an inline or `--api-key` key by its provider
 * group. The first name of a value wins.
 */
export function apiKeySecrets(
  model: ResolvedModel,
  projectConfig: ProjectConfig,
  env: Readonly<Record<string, string>>,
): Secret[] {
  const out: Secret[] = [];
  const add = (name: string, value: string | undefined) => {
    if (value !== undefined && value !== "") out.push({ kind: "api_key", name, value });
  };
  const own = model.endpoint.api_key;
  add(model.key_source === "env" && model.key_env ? model.key_env : model.endpoint.provider, own);
  const names = new Set<string>();
  for (const g of PROVIDER_GROUPS) if (g.api_key_env) names.add(g.api_key_env);
  for (const name of Object.keys(env)) if (KEY_ENV.test(name)) names.add(name);
  for (const name of [...names].sort()) add(name, env[name]);
  for (const entry of projectConfig.models) add(entry.provider, entry.api_key);
  return out;
}

/**
 * The `env` and header values of every MCP server entry of the agent's
 * configuration, used by the session or not (a server a workspace turns off
 * still holds the user's token). Invalid entries are left out. The entries'
 * readers load only for an agent that has entries.
 */
export async function agentMcpSecrets(systemConfig: SystemConfig): Promise<Secret[]> {
  const entries = systemConfig.tools?.mcpServers ?? [];
  if (entries.length === 0) return [];
  const [{ mcpSecrets }, { mcpServerConfigs }] = await Promise.all([
    import("../mcp/secrets.ts"),
    import("../state/mcp_servers.ts"),
  ]);
  return mcpSecrets(mcpServerConfigs(entries));
}

/**
 * The vault values of the project's other agents: a subagent may run as one
 * of them (`run_subagent` with `agent_id`), whose commands get its vault and
 * write what they like into the shared workspace, which the parent reads
 * (attack round 20 mcpsecrets #2). Their MCP values are not read here: that
 * takes parsing their configurations at every start. One whose vault cannot
 * be read adds nothing.
 */
export async function otherAgentSecrets(ref: AgentRef): Promise<Secret[]> {
  const out: Secret[] = [];
  let names: string[] = [];
  try {
    for await (const e of Deno.readDir(agentsDir(ref))) {
      if (e.isDirectory && e.name !== ref.agentId) names.push(e.name);
    }
  } catch {
    return out;
  }
  names = names.sort().slice(0, MAX_OTHER_AGENTS);
  for (const agentId of names) {
    try {
      out.push(...vaultSecrets(await loadVault(agentPaths({ ...ref, agentId }).vault)));
    } catch {
      // unreadable, or not an agent: nothing known
    }
  }
  return out;
}

/** Other agents whose secrets a session masks at most (a bound on its start). */
const MAX_OTHER_AGENTS = 64;
