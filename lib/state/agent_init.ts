/**
 * Loading an agent's state, initializing it on first use.
 *
 * Initialization creates the directories, an empty user `MEMORY.md` and
 * `AGENTS.md`, and writes `system_config.yaml` LAST: its existence marks an
 * initialized agent, so a crash mid-way simply re-runs the init next time.
 * No skills library and no example benchmark are provisioned. An agent
 * without `system_config.yaml` is first checked, under the agent's state
 * lock, for an `agent import` interrupted between its renames (repaired:
 * see agent_state_swap.ts). An unchanged `system_config.yaml` is read
 * from its parsed-config cache (system_config_cache.ts).
 *
 * @module
 */
import { mkdirPrivate, readBytesIfExists, readTextIfExists, writeFileAtomic } from "./_fs.ts";
import { readAgentsMd } from "./agents_md.ts";
import { lockAgentState, recoverAgentStateSwap } from "./agent_state_swap.ts";
import { DEFAULT_AGENT_ID } from "./ids.ts";
import { type AgentPaths, agentPaths, type AgentRef } from "./paths.ts";
import { defaultSystemConfig, type SystemConfig } from "./system_config.ts";
import { systemConfigOf } from "./system_config_cache.ts";
import type { BuiltinToolConfig } from "./system_config.ts";

/** Built-in identity of `default_agent`. */
export const DEFAULT_AGENT_PRESET: { name: string; description: string } = {
  name: "General Agent",
  description: "An all-purpose agent for coding, research and everyday tasks on this machine.",
};

/** An agent's loaded state. */
export interface LoadedAgent {
  /** Which agent. */
  ref: AgentRef;
  /** Its paths. */
  paths: AgentPaths;
  /** `system_config.yaml` as written (defaults not applied; see `resolveSystemConfig`). */
  systemConfig: SystemConfig;
  /** `AGENTS.md` text ("" when absent). */
  agentsMd: string;
  /** True when this call initialized the agent. */
  created: boolean;
  /** Repairs of an interrupted `agent import` made first (lines for the user; usually none). */
  recovered: string[];
}

/** Options for {@linkcode loadOrInitAgent}. */
export interface InitOptions {
  /** The full default `tools.builtin` list written into a new agent's config (the agent layer's). */
  builtinTools?: readonly BuiltinToolConfig[];
  /** Called after initialization creates each directory or file, in order. */
  onCreate?: (path: string) => void;
}

/** Create the agent's directories and files, `system_config.yaml` last. */
async function initAgent(
  ref: AgentRef,
  paths: AgentPaths,
  opts: InitOptions,
): Promise<SystemConfig> {
  const created = (path: string) => opts.onCreate?.(path);
  const dirs = [paths.agentState, paths.tools, paths.userMemory, paths.skills, paths.scratchpad];
  for (const dir of dirs) {
    await mkdirPrivate(dir);
    created(dir);
  }
  for (const file of [paths.userMemoryIndex, paths.agentsMd]) {
    if ((await readTextIfExists(file)) !== undefined) continue; // kept from an interrupted init
    await writeFileAtomic(file, "", 0o644);
    created(file);
  }
  const identity = ref.agentId === DEFAULT_AGENT_ID ? DEFAULT_AGENT_PRESET : { name: ref.agentId };
  const cfg = defaultSystemConfig(identity, opts.builtinTools);
  // The YAML writer is loaded only here, when an agent is created.
  const { saveSystemConfig } = await import("./system_config_parse.ts");
  await saveSystemConfig(paths.systemConfig, cfg);
  created(paths.systemConfig);
  return cfg;
}

/**
 * Load the agent `ref`, initializing it first when `system_config.yaml` does
 * not exist. A malformed config is a config error (with path and line) and
 * is left untouched.
 */
export async function loadOrInitAgent(ref: AgentRef, opts: InitOptions = {}): Promise<LoadedAgent> {
  const paths = agentPaths(ref);
  let bytes = await readBytesIfExists(paths.systemConfig);
  let systemConfig: SystemConfig | undefined;
  let created = false;
  let recovered: string[] = [];
  if (bytes === undefined) {
    // A new agent, or an `agent import` between its renames (or one that
    // died there): under the state lock, repaired first, then read again.
    const release = await lockAgentState(paths);
    try {
      recovered = await recoverAgentStateSwap(paths);
      bytes = await readBytesIfExists(paths.systemConfig);
      if (bytes === undefined) {
        systemConfig = await initAgent(ref, paths, opts);
        created = true;
        // The parsed-config cache filled now: the agent's next start reads it (and a later
        // command that only reads changes nothing on disk).
        await systemConfigOf(await Deno.readFile(paths.systemConfig), paths.systemConfig);
      }
    } finally {
      release();
    }
  }
  systemConfig ??= await systemConfigOf(bytes!, paths.systemConfig);
  return {
    ref,
    paths,
    systemConfig,
    agentsMd: await readAgentsMd(paths.agentsMd),
    created,
    recovered,
  };
}
