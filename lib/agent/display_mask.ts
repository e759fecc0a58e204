/**
 * The record mask of `trace show`, `trace export` and `sessions show` (and
 * the value mask of `sessions list` and `sessions tree`): every
 * record read is masked with the secrets known now, not only those known
 * when it was written or imported. A trace imported before a value was in
 * the vault, then shown after `config vault set`, shows it masked. The
 * secrets are those of the agent each trace file lies under
 * (`<root>/<project>/agents/<agent>/traces/…`) and of the data root's
 * default agent: their vault values and MCP values, as `sessions import`
 * reads them ({@linkcode importSecrets}). A vault or configuration that
 * cannot be read is named in `problems`, for the command to say so.
 *
 * @module
 */
import { basename, dirname, sep } from "node:path";
import { errorMessage } from "../protocol/errors.ts";
import type { OmniMessage } from "../protocol/types.ts";
import type { AgentRef } from "../state/paths.ts";
import { validateAgentId, validateProjectId } from "../state/ids.ts";
import type { Secret } from "../tools/secret_mask.ts";
import { importRecordMask, importSecrets, maskReport } from "./import_mask.ts";

/** What {@linkcode displayRecordMask} found. */
export interface DisplayMask {
  /** The record transform, or undefined when no secret is known. */
  mask: ((record: OmniMessage) => OmniMessage) | undefined;
  /** One sentence per agent whose secrets could not be read. */
  problems: string[];
}

/** The agent whose traces directory holds `file`, or undefined when it lies in none. */
export function agentOfTrace(file: string): AgentRef | undefined {
  const parts = file.split(sep);
  const at = parts.lastIndexOf("traces");
  if (at < 4 || parts[at - 2] !== "agents") return undefined;
  try {
    const project = parts.slice(0, at - 2).join(sep);
    return {
      root: dirname(project),
      projectId: validateProjectId(basename(project)),
      agentId: validateAgentId(parts[at - 1]!),
    };
  } catch {
    return undefined;
  }
}

/**
 * The mask for showing or exporting `files` (trace paths): the secrets of
 * the agents they lie under and of `agents` (the data root's default agent,
 * and the one a command names).
 */
export async function displayRecordMask(
  files: readonly string[],
  agents: readonly AgentRef[],
): Promise<DisplayMask> {
  const { secrets, problems } = await displaySecrets(files, agents);
  return { mask: importRecordMask(secrets), problems };
}

/**
 * For listings built from trace files (`sessions list`, `sessions tree`):
 * `value` (plain JSON data) with every string masked with the secrets of
 * the agents `files` lie under and of `agents`; and the problems met.
 */
export async function displayMaskValue<T>(
  value: T,
  files: readonly string[],
  agents: readonly AgentRef[],
): Promise<{ value: T; problems: string[] }> {
  const { secrets, problems } = await displaySecrets(files, agents);
  return { value: maskReport(value, secrets), problems };
}

/** The secrets of the agents `files` lie under and of `agents`, and the agents that could not be read. */
async function displaySecrets(
  files: readonly string[],
  agents: readonly AgentRef[],
): Promise<{ secrets: Secret[]; problems: string[] }> {
  const refs = new Map<string, AgentRef>();
  for (const ref of [...agents, ...files.map(agentOfTrace)]) {
    if (ref) refs.set(JSON.stringify([ref.root, ref.projectId, ref.agentId]), ref);
  }
  const secrets: Secret[] = [];
  const problems: string[] = [];
  for (const ref of refs.values()) {
    try {
      secrets.push(...await importSecrets(ref));
    } catch (err) {
      problems.push(
        `could not read the secrets of agent "${ref.agentId}" (project "${ref.projectId}", ` +
          `${ref.root}) to mask them: ${errorMessage(err)}; values set there since the trace ` +
          `was written may show unmasked`,
      );
    }
  }
  return { secrets, problems };
}
