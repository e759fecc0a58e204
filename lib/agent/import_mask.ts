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
import { agentPaths, type AgentRef } from "../state/paths.ts";
import { loadSystemConfig } from "../state/system_config_parse.ts";
import { loadVault } from "../state/vault.ts";
import { maskSecrets, type Secret, vaultSecrets } from "../tools/secret_mask.ts";
import { maskRecord } from "./_mask_history.ts";
import { agentMcpSecrets } from "./_secrets.ts";

/** The vault values and MCP values of the agent `ref` (none when it is not initialized). */
export async function importSecrets(ref: AgentRef): Promise<Secret[]> {
  const paths = agentPaths(ref);
  const out = vaultSecrets(await loadVault(paths.vault));
  try {
    out.push(...await agentMcpSecrets(await loadSystemConfig(paths.systemConfig)));
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return out;
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
