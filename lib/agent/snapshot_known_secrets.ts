/**
 * The secrets `penguin agent snapshot` masks in the files it packs
 * (lib/state/snapshot_mask.ts), with the masker of the trace views
 * (lib/tools/secret_mask.ts, `[redacted:vault:<KEY>]`): every value penguin
 * knows for the agent when the snapshot is taken —
 *
 * - the vault values and MCP values of the agent and of the data root's
 *   default agent (as `trace show` reads them, lib/agent/display_mask.ts);
 * - every inline `api_key` of the project's `.project_config.toml`;
 * - the API keys in penguin's environment: each provider's key variable
 *   and any other `*_API_KEY`.
 *
 * A vault or configuration that cannot be read throws: a snapshot is not
 * packed unmasked.
 *
 * @module
 */
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../state/ids.ts";
import type { AgentRef } from "../state/paths.ts";
import { maskSecrets, type Secret } from "../tools/secret_mask.ts";
import { importSecrets } from "./import_mask.ts";

/** Every secret value known for a snapshot of agent `ref`, with penguin's environment `env`. */
export async function snapshotSecrets(
  ref: AgentRef,
  env: Readonly<Record<string, string>>,
): Promise<Secret[]> {
  const out = await importSecrets(ref, env);
  if (ref.projectId !== DEFAULT_PROJECT_ID || ref.agentId !== DEFAULT_AGENT_ID) {
    out.push(
      ...await importSecrets({
        root: ref.root,
        projectId: DEFAULT_PROJECT_ID,
        agentId: DEFAULT_AGENT_ID,
      }, env),
    );
  }
  return out;
}

/** The text mask of a snapshot of agent `ref`, or undefined when no secret is known. */
export async function snapshotTextMask(
  ref: AgentRef,
  env: Readonly<Record<string, string>>,
): Promise<((text: string) => string) | undefined> {
  const secrets = await snapshotSecrets(ref, env);
  return secrets.length === 0 ? undefined : (text) => maskSecrets(text, secrets);
}
