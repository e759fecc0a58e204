/**
 * The record mask `penguin sessions import` applies: every string of every
 * imported record masked with the secrets known at import time — the
 * agent's vault values and the env, header and inline values of its MCP
 * server entries — so an old trace (or another harness's session) holding
 * one does not keep it on disk, in `trace show` or in `trace export`.
 * Masking is deterministic: a tool-call id and its output's id mask alike
 * and stay paired. See lib/agent/_mask_history.ts for resume.
 *
 * @module
 */
import type { OmniMessage } from "../protocol/types.ts";
import { agentPaths, type AgentRef, projectConfigPath } from "../state/paths.ts";
import { loadProjectConfig } from "../state/project_config.ts";
import { PROVIDER_GROUPS } from "../models/catalog.ts";
import { loadSystemConfig } from "../state/system_config_parse.ts";
import { loadVault } from "../state/vault.ts";
import { envWithApiKeys } from "../sandbox/api_key_env.ts";
import { maskSecrets, type Secret, vaultSecrets } from "../tools/secret_mask.ts";
import { maskRecord } from "./_mask_history.ts";
import { agentMcpSecrets } from "./_secrets.ts";

/**
 * The vault values, MCP values and API keys of the agent `ref` (none of the
 * agent's when it is not initialized): the project's inline `api_key`s and
 * the provider `*_API_KEY` values of `env` (penguin's environment), as a
 * session masks them. Without the keys, an imported or older trace holding
 * one kept it on disk and printed it in every view (attack round 19 imports
 * B1).
 */
export async function importSecrets(
  ref: AgentRef,
  env?: Readonly<Record<string, string>>,
): Promise<Secret[]> {
  env ??= await envWithApiKeys();
  const paths = agentPaths(ref);
  const out = vaultSecrets(await loadVault(paths.vault));
  try {
    out.push(...await agentMcpSecrets(await loadSystemConfig(paths.systemConfig)));
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  out.push(...await projectKeySecrets(ref), ...envKeySecrets(env));
  return out;
}

/** The inline `api_key`s of the project of `ref` (none without a project config). */
async function projectKeySecrets(ref: AgentRef): Promise<Secret[]> {
  let models;
  try {
    models = (await loadProjectConfig(projectConfigPath(ref))).models;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
  return models.filter((m) => m.api_key).map((m) => ({
    kind: "api_key" as const,
    name: m.provider,
    value: m.api_key!,
  }));
}

const KEY_ENV = /_API_KEY$/;

/** The provider key values of `env`: each catalog key variable and any other `*_API_KEY`. */
function envKeySecrets(env: Readonly<Record<string, string>>): Secret[] {
  const names = new Set<string>();
  for (const g of PROVIDER_GROUPS) if (g.api_key_env) names.add(g.api_key_env);
  for (const name of Object.keys(env)) if (KEY_ENV.test(name)) names.add(name);
  return [...names].sort().filter((n) => env[n]).map((name) => ({
    kind: "api_key" as const,
    name,
    value: env[name]!,
  }));
}

/**
 * A record transform masking `secrets` (the same record when nothing
 * changed), or undefined when there is nothing to mask.
 */
export function importRecordMask(
  secrets: readonly Secret[],
): ((record: OmniMessage) => OmniMessage) | undefined {
  if (secrets.length === 0) return undefined;
  const mask = (s: string) => maskSecrets(s, secrets);
  return (record) => maskRecord(record, mask);
}

/**
 * `value` (plain JSON data: an import report) with every string in it
 * masked with `secrets`, for printing: a report names paths and ids read
 * from the imported files (`recorded_workspace`), which may hold one.
 */
export function maskReport<T>(value: T, secrets: readonly Secret[]): T {
  if (secrets.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return maskSecrets(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

/**
 * What `penguin sessions import` masks for the agent `ref`: its own secrets
 * ({@linkcode importSecrets}) and the vault values of the project's other
 * agents, as a session masks them: an import into `--agent-id other` of a
 * file holding the default agent's vault value kept it (attack round 23
 * secrets B9). Unlike {@linkcode knownSecrets}, a secret that cannot be read
 * fails the import.
 */
export async function projectImportSecrets(ref: AgentRef): Promise<Secret[]> {
  const { otherAgentSecrets } = await import("./_secrets.ts");
  return [...await importSecrets(ref), ...await otherAgentSecrets(ref)];
}

/**
 * Every secret penguin knows for the agent `ref`: its own ({@linkcode importSecrets}) and the
 * vault values of the project's other agents. What the CLI prints of files a model's commands
 * can write (memory, skills) is masked with them (attack round 22 secrets A04, A05).
 */
export async function knownSecrets(ref: AgentRef): Promise<Secret[]> {
  const { otherAgentSecrets } = await import("./_secrets.ts");
  try {
    return [...await importSecrets(ref), ...await otherAgentSecrets(ref)];
  } catch {
    return await otherAgentSecrets(ref).catch(() => []);
  }
}
