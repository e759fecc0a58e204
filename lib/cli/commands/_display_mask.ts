/**
 * The current-secrets mask of the commands that show or export a trace
 * (`trace show`, `trace export`, `trace diff`, `sessions show`) and of the listings
 * (`sessions list`, `sessions tree`): see
 * lib/agent/display_mask.ts. A secret that could not be read is said on
 * stderr, not skipped silently.
 *
 * @module
 */
import type { OmniMessage } from "../../protocol/types.ts";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../state/ids.ts";
import type { AgentRef } from "../../state/paths.ts";
import { resolveDataRoot } from "../../state/root.ts";
import type { CommandContext } from "../command.ts";

/**
 * The record mask for showing `files`, with the secrets of the agents they
 * lie under, of the data root's default agent and of `agent`; each
 * secret that could not be read is named on stderr under `command`.
 */
export async function currentSecretsMask(
  command: string,
  files: readonly string[],
  ctx: CommandContext,
  agent?: AgentRef,
): Promise<((message: OmniMessage) => OmniMessage) | undefined> {
  // Loaded when used: the MCP secrets' module is no part of the offline views' startup.
  const { displayRecordMask } = await import("../../agent/display_mask.ts");
  const { mask, problems } = await displayRecordMask(files, agentsToMask(ctx, agent));
  for (const p of problems) ctx.io.err(`${command}: ${p}\n`);
  return mask;
}

/**
 * `value` (a listing's rows) with every string masked with the secrets of
 * the agents `files` lie under, of the data root's default agent and of
 * `agent`; each secret that could not be read is named on stderr under
 * `command`.
 */
export async function currentSecretsMaskValue<T>(
  command: string,
  value: T,
  files: readonly string[],
  ctx: CommandContext,
  agent?: AgentRef,
): Promise<T> {
  const { displayMaskValue } = await import("../../agent/display_mask.ts");
  const masked = await displayMaskValue(value, files, agentsToMask(ctx, agent));
  for (const p of masked.problems) ctx.io.err(`${command}: ${p}\n`);
  return masked.value;
}

/**
 * The data root's default agent, and `agent` when a command names one: a
 * named agent's secrets are added to the default agent's, never in their
 * place (attack round 24 secrets B1: `sessions list --agent-id other`
 * printed a value of the default agent's vault).
 */
export function agentsToMask(ctx: CommandContext, agent?: AgentRef): AgentRef[] {
  const fallback = {
    root: resolveDataRoot({ root: ctx.root }),
    projectId: DEFAULT_PROJECT_ID,
    agentId: DEFAULT_AGENT_ID,
  };
  return agent ? [fallback, agent] : [fallback];
}
