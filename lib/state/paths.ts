/**
 * The on-disk layout under the data root (docs/traces.md, "Data root"). Pure functions:
 * ids are validated before any path is built, nothing touches the disk.
 *
 * ```
 * <root>/<project>/.project_config.toml
 * <root>/<project>/agents/<agent>/{agent_state, traces, scratchpad, shared_env,
 *                                  workspaces, benchmarks, snapshots, mcp_logs}
 * ```
 *
 * @module
 */
import { join } from "node:path";
import { validateAgentId, validateProjectId, validateSessionId } from "./ids.ts";

/** A project under a data root. */
export interface ProjectRef {
  /** Absolute data root. */
  root: string;
  /** Project id. */
  projectId: string;
}

/** An agent of a project under a data root. */
export interface AgentRef extends ProjectRef {
  /** Agent id. */
  agentId: string;
}

/** `<root>/<project>`: the project directory ("App Data Dir"). */
export function projectDir(ref: ProjectRef): string {
  return join(ref.root, validateProjectId(ref.projectId));
}

/** `<project>/.project_config.toml`. */
export function projectConfigPath(ref: ProjectRef): string {
  return join(projectDir(ref), ".project_config.toml");
}

/** `<project>/agents`. */
export function agentsDir(ref: ProjectRef): string {
  return join(projectDir(ref), "agents");
}

/** `<project>/agents/<agent>`. */
export function agentDir(ref: AgentRef): string {
  return join(agentsDir(ref), validateAgentId(ref.agentId));
}

/** `<agent>/agent_state`. */
export function agentStateDir(ref: AgentRef): string {
  return join(agentDir(ref), "agent_state");
}

/** `<state>/chat_history`: the agent's `penguin chat` input history (JSON lines, 0600). */
export function chatHistoryPath(ref: AgentRef): string {
  return join(agentStateDir(ref), "chat_history");
}

/** `<state>/system_config.yaml`; its existence marks an initialized agent. */
export function systemConfigPath(ref: AgentRef): string {
  return join(agentStateDir(ref), "system_config.yaml");
}

/** `<state>/AGENTS.md`. */
export function agentsMdPath(ref: AgentRef): string {
  return join(agentStateDir(ref), "AGENTS.md");
}

/** `<state>/.vault.toml`. */
export function vaultPath(ref: AgentRef): string {
  return join(agentStateDir(ref), ".vault.toml");
}

/** `<state>/tools` (created at init, reserved). */
export function toolsDir(ref: AgentRef): string {
  return join(agentStateDir(ref), "tools");
}

/** `<state>/skills`. */
export function skillsDir(ref: AgentRef): string {
  return join(agentStateDir(ref), "skills");
}

/** `<state>/memory`. */
export function memoryDir(ref: AgentRef): string {
  return join(agentStateDir(ref), "memory");
}

/** `<state>/memory/user`. */
export function userMemoryDir(ref: AgentRef): string {
  return join(memoryDir(ref), "user");
}

/** `<state>/memory/user/MEMORY.md`. */
export function userMemoryIndexPath(ref: AgentRef): string {
  return join(userMemoryDir(ref), "MEMORY.md");
}

/** `<state>/schedule`. */
export function scheduleDir(ref: AgentRef): string {
  return join(agentStateDir(ref), "schedule");
}

/** `<agent>/traces`. */
export function tracesDir(ref: AgentRef): string {
  return join(agentDir(ref), "traces");
}

/** `<agent>/scratchpad`. */
export function scratchpadDir(ref: AgentRef): string {
  return join(agentDir(ref), "scratchpad");
}

/** `<agent>/scratchpad/<sessionId>`. */
export function sessionScratchpadDir(ref: AgentRef, sessionId: string): string {
  return join(scratchpadDir(ref), validateSessionId(sessionId));
}

/** The scratchpad's directory of a tool's long output, saved whole by penguin. */
export const TRUNCATED_OUTPUT_DIR = "truncated-tool-output";

/** `<agent>/scratchpad/<sessionId>/truncated-tool-output` (mode 0700 when created). */
export function truncatedOutputDir(ref: AgentRef, sessionId: string): string {
  return join(sessionScratchpadDir(ref, sessionId), TRUNCATED_OUTPUT_DIR);
}

/**
 * `<agent>/mcp_logs/<sessionId>`: the stderr logs of the session's stdio MCP
 * servers (`<server>/stderr.log`). Not in the scratchpad: the model's
 * commands can read the scratchpad, and a server may log its token.
 */
export function sessionMcpLogDir(ref: AgentRef, sessionId: string): string {
  return join(agentDir(ref), "mcp_logs", validateSessionId(sessionId));
}

/**
 * A new `<agent>/mcp_logs/probe-<random>` (0700): the stderr logs of the
 * servers `mcp add` and `mcp test` start. In the data root, which every other
 * session's sandbox hides, as a session's own logs are; never in the host's
 * `/tmp`, where a session working in `/tmp` read a server's token (attack
 * round 28 e19).
 */
export async function makeProbeMcpLogDir(ref: AgentRef): Promise<string> {
  const parent = join(agentDir(ref), "mcp_logs");
  await Deno.mkdir(parent, { recursive: true, mode: 0o700 });
  return await Deno.makeTempDir({ dir: parent, prefix: "probe-" });
}

/** `<agent>/workspaces` (temporary workspaces live here). */
export function workspacesDir(ref: AgentRef): string {
  return join(agentDir(ref), "workspaces");
}

/** `<agent>/benchmarks`. */
export function benchmarksDir(ref: AgentRef): string {
  return join(agentDir(ref), "benchmarks");
}

/** `<agent>/snapshots`. */
export function snapshotsDir(ref: AgentRef): string {
  return join(agentDir(ref), "snapshots");
}

/**
 * `<agent>/shared_env`: where the model keeps environments and caches that
 * later sessions reuse (created when a session starts; writable by its commands).
 */
export function sharedEnvDir(ref: AgentRef): string {
  return join(agentDir(ref), "shared_env");
}

/** Every path of one agent, for callers that need several. */
export interface AgentPaths {
  /** See {@linkcode projectDir}. */
  project: string;
  /** See {@linkcode projectConfigPath}. */
  projectConfig: string;
  /** See {@linkcode agentDir}. */
  agent: string;
  /** See {@linkcode agentStateDir}. */
  agentState: string;
  /** See {@linkcode systemConfigPath}. */
  systemConfig: string;
  /** See {@linkcode agentsMdPath}. */
  agentsMd: string;
  /** See {@linkcode vaultPath}. */
  vault: string;
  /** See {@linkcode toolsDir}. */
  tools: string;
  /** See {@linkcode skillsDir}. */
  skills: string;
  /** See {@linkcode memoryDir}. */
  memory: string;
  /** See {@linkcode userMemoryDir}. */
  userMemory: string;
  /** See {@linkcode userMemoryIndexPath}. */
  userMemoryIndex: string;
  /** See {@linkcode scheduleDir}. */
  schedule: string;
  /** See {@linkcode tracesDir}. */
  traces: string;
  /** See {@linkcode scratchpadDir}. */
  scratchpad: string;
  /** See {@linkcode workspacesDir}. */
  workspaces: string;
  /** See {@linkcode benchmarksDir}. */
  benchmarks: string;
  /** See {@linkcode snapshotsDir}. */
  snapshots: string;
  /** See {@linkcode sharedEnvDir}. */
  sharedEnv: string;
}

/** All paths of the agent `ref`. */
export function agentPaths(ref: AgentRef): AgentPaths {
  return {
    project: projectDir(ref),
    projectConfig: projectConfigPath(ref),
    agent: agentDir(ref),
    agentState: agentStateDir(ref),
    systemConfig: systemConfigPath(ref),
    agentsMd: agentsMdPath(ref),
    vault: vaultPath(ref),
    tools: toolsDir(ref),
    skills: skillsDir(ref),
    memory: memoryDir(ref),
    userMemory: userMemoryDir(ref),
    userMemoryIndex: userMemoryIndexPath(ref),
    schedule: scheduleDir(ref),
    traces: tracesDir(ref),
    scratchpad: scratchpadDir(ref),
    workspaces: workspacesDir(ref),
    benchmarks: benchmarksDir(ref),
    snapshots: snapshotsDir(ref),
    sharedEnv: sharedEnvDir(ref),
  };
}
