/**
 * Replacing an agent's whole `agent_state/` safely (`penguin agent import`).
 *
 * The new state is staged beside the old one as `.agent_state.import-<tag>`,
 * then two renames swap it in: `agent_state` → `.agent_state.old-<tag>`,
 * stage → `agent_state`, and the old tree is removed. A process that dies
 * between the two renames leaves no `agent_state` at all, only the old tree
 * under its `.old-` name; one that dies after them leaves the old tree
 * behind.
 *
 * The swap and its repair are serialized by an advisory lock on
 * `<agent>/.import.lock` (held by the import for its whole run, and by
 * an agent load that finds no `system_config.yaml`, which is what the gap
 * between the renames looks like). Under that lock
 * {@linkcode recoverAgentStateSwap} repairs what a dead import left:
 *
 * - no `agent_state` and an `.agent_state.old-<tag>`: the import died
 *   between its renames and never reported success, so it is rolled back:
 *   the old tree is renamed back to `agent_state`;
 * - `agent_state` present and an `.agent_state.old-<tag>`: the import had
 *   swapped the new state in; removing the old tree was its last step;
 * - an `.agent_state.import-<tag>` stage: an import that died (or failed)
 *   before its swap; removed.
 *
 * Each repair is returned as a line for the user.
 *
 * @module
 */
import { join } from "node:path";
import { exists, lockFile, mkdirPrivate } from "./_fs.ts";
import type { AgentPaths } from "./paths.ts";

/** The name prefix of a staged new state. */
export const STAGE_PREFIX = ".agent_state.import-";
/** The name prefix of the old state while it is swapped out. */
export const OLD_PREFIX = ".agent_state.old-";

/**
 * Take the agent's state lock (waiting while another process holds it);
 * returns the release.
 */
export async function lockAgentState(paths: AgentPaths): Promise<() => void> {
  await mkdirPrivate(paths.agent);
  const file = await lockFile(join(paths.agent, ".import.lock"));
  return () => {
    try {
      file.close(); // closing drops the lock
    } catch {
      // already closed
    }
  };
}

/** Leftovers of a swap in the agent directory, sorted by name. */
async function leftovers(paths: AgentPaths): Promise<{ old: string[]; stages: string[] }> {
  const old: string[] = [];
  const stages: string[] = [];
  try {
    for await (const e of Deno.readDir(paths.agent)) {
      if (!e.isDirectory) continue;
      if (e.name.startsWith(OLD_PREFIX)) old.push(e.name);
      else if (e.name.startsWith(STAGE_PREFIX)) stages.push(e.name);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { old, stages };
    throw err;
  }
  return { old: old.sort(), stages: stages.sort() };
}

/**
 * Repair what an interrupted swap left (see the module doc); call it holding
 * {@linkcode lockAgentState}. Returns one line per repair (none when there
 * was nothing to repair).
 */
export async function recoverAgentStateSwap(paths: AgentPaths): Promise<string[]> {
  const { old, stages } = await leftovers(paths);
  const done: string[] = [];
  for (const name of old) {
    const path = join(paths.agent, name);
    if (!(await exists(paths.agentState, { followLinks: false, strict: true }))) {
      await Deno.rename(path, paths.agentState);
      done.push(
        `restored "${paths.agentState}" from "${path}", left by an agent import that was ` +
          `interrupted between its renames (the import did not happen)`,
      );
    } else {
      await Deno.remove(path, { recursive: true });
      done.push(`removed "${path}", the previous state left by a finished agent import`);
    }
  }
  for (const name of stages) {
    const path = join(paths.agent, name);
    await Deno.remove(path, { recursive: true });
    done.push(`removed "${path}", the unfinished stage of an interrupted agent import`);
  }
  return done;
}
