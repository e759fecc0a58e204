/**
 * Agents and new sessions (reference §1, §2.1, §2.7, §8.3).
 *
 * `createAgent` loads (or first initializes) one agent of one project under
 * the data root. `agent.createSession` locks in the model pair, the
 * workspace and the assembled system prompt, validates the credentials
 * before anything is written, and opens the trace writer (taking the
 * session lock). The trace file itself appears at the first run.
 *
 * @module
 */
import type { SessionMeta } from "../protocol/types.ts";
import { type EnvSource, resolveModel } from "../models/resolve.ts";
import type { ThinkingLevel } from "../models/wire.ts";
import { openTraceWriter } from "../trace/writer.ts";
import { createPolicy, type SandboxMode } from "../sandbox/policy.ts";
import { createProcessRegistry, effectivePolicy } from "../tools/mod.ts";
import {
  type AgentPaths,
  type AgentRef,
  createTempWorkspace,
  DEFAULT_AGENT_ID,
  DEFAULT_PROJECT_ID,
  isTempWorkspace,
  loadOrInitAgent,
  loadProjectConfig,
  loadVault,
  newSessionId,
  type ProjectConfig,
  projectConfigPath,
  projectDir,
  resolveDataRoot,
  type ResolvedSystemConfig,
  resolveSystemConfig,
  resolveWorkspace,
  sessionScratchpadDir,
  type SystemConfig,
  validateAgentId,
  validateProjectId,
} from "../state/mod.ts";
import { dateDirName } from "../trace/paths.ts";
import { assembleSystemPrompt, osVersion, platformName, shellName } from "./prompt.ts";
import { prepareMemory, renderPromptSections } from "./prompt_sections.ts";
import { openSession, type Session } from "./session.ts";
import { createToolset, resolveToolDefinitions } from "./toolset.ts";

/** Options of {@linkcode createAgent}. */
export interface AgentOptions {
  /** Data root; default `PENGUIN_HOME`, else `~/.penguin/data`. */
  root?: string;
  /** Project id (default `default_project`). */
  projectId?: string;
  /** Agent id (default `default_agent`). */
  agentId?: string;
  /** Environment for the data root, provider keys and commands (default: the process env). */
  env?: Record<string, string>;
}

/** Options of {@linkcode Agent.createSession}. */
export interface SessionOptions {
  /** Workspace; must exist. Absent → a new temporary workspace `workspaces/tmp-<8hex>`. */
  workspaceDir?: string;
  /** Provider group; always together with `modelId` (neither → the project's default model). */
  provider?: string;
  /** Model id; always together with `provider`. */
  modelId?: string;
  /** Default thinking level (else the agent's, else the project's `[default_chat]`, else `medium`). */
  thinkingLevel?: ThinkingLevel;
  /** Sandbox mode for commands (default `workspace-write`). */
  sandbox?: SandboxMode;
  /** Whether commands may use the network (default false). */
  network?: boolean;
  /** Max requests per task; ≤ 0 = unlimited (default: the agent's `max_turns`). */
  maxTurns?: number;
  /** API key for this session only (over the entry's and the env var). */
  apiKey?: string;
  /** Base URL for this session only. */
  baseUrl?: string;
  /** Wait before retry `n` (default the §5.5 ladder: 2 s, 4 s, 8 s, 16 s, 30 s). */
  retryDelayMs?: (n: number) => number;
  /** Diagnostics sink (default stderr). */
  warn?: (line: string) => void;
}

/** A loaded agent. */
export interface Agent {
  /** Root, project and agent ids. */
  readonly ref: AgentRef;
  /** Every path of the agent. */
  readonly paths: AgentPaths;
  /** `system_config.yaml` as written. */
  readonly systemConfig: SystemConfig;
  /** The agent config with defaults applied. */
  readonly config: ResolvedSystemConfig;
  /** `AGENTS.md` text. */
  readonly agentsMd: string;
  /** The project config (models, credentials, command policy). */
  readonly projectConfig: ProjectConfig;
  /** Start a new session. */
  createSession(opts?: SessionOptions): Promise<Session>;
}

/**
 * Load the agent (initializing it on first use) and its project config.
 *
 * @example Run one task and print the answer
 * ```ts
 * import { agent as penguin } from "../mod.ts";
 *
 * const agent = await penguin.createAgent({ root: "/tmp/penguin-data" });
 * const session = await agent.createSession({
 *   workspaceDir: ".",
 *   provider: "deepseek",
 *   modelId: "deepseek-v4-flash",
 * });
 * try {
 *   for await (const msg of session.run("List the files here.", { approve: "read-only" })) {
 *     if (msg.type === "model_msg" && msg.payload.type === "partial_text") {
 *       console.log(msg.payload.text);
 *     }
 *   }
 * } finally {
 *   await session.dispose();
 * }
 * ```
 */
export async function createAgent(opts: AgentOptions = {}): Promise<Agent> {
  const env = opts.env ?? Deno.env.toObject();
  const root = resolveDataRoot({ root: opts.root, env: (n) => env[n] });
  const ref: AgentRef = {
    root,
    projectId: validateProjectId(opts.projectId ?? DEFAULT_PROJECT_ID),
    agentId: validateAgentId(opts.agentId ?? DEFAULT_AGENT_ID),
  };
  const configPath = projectConfigPath(ref);
  const projectConfig = await loadProjectConfig(configPath);
  const loaded = await loadOrInitAgent(ref);
  const config = resolveSystemConfig(loaded.systemConfig);
  return {
    ref,
    paths: loaded.paths,
    systemConfig: loaded.systemConfig,
    config,
    agentsMd: loaded.agentsMd,
    projectConfig,
    createSession: (sessionOpts = {}) =>
      createSession({
        ref,
        paths: loaded.paths,
        systemConfig: loaded.systemConfig,
        config,
        agentsMd: loaded.agentsMd,
        projectConfig,
        env,
        configPath,
      }, sessionOpts),
  };
}

function thinkingChain(
  explicit: ThinkingLevel | undefined,
  agent: SystemConfig,
  project: ProjectConfig,
): ThinkingLevel {
  return explicit ?? agent.model?.thinking_level ?? project.default_chat.thinking_level ?? "medium";
}

/** What a new session is created from. */
interface AgentBase {
  ref: AgentRef;
  paths: AgentPaths;
  systemConfig: SystemConfig;
  config: ResolvedSystemConfig;
  agentsMd: string;
  projectConfig: ProjectConfig;
  env: Record<string, string>;
  configPath: string;
}

async function createSession(base: AgentBase, opts: SessionOptions): Promise<Session> {
  const { ref, paths, config, projectConfig, env } = base;
  // The pair and its credentials first: a missing key fails before anything is created.
  const model = resolveModel(
    projectConfig,
    { provider: opts.provider, model_id: opts.modelId },
    env as EnvSource,
    { configPath: base.configPath, requireKey: opts.apiKey === undefined },
  );
  if (opts.apiKey !== undefined) model.endpoint.api_key = opts.apiKey;
  if (opts.baseUrl !== undefined) model.endpoint.base_url = opts.baseUrl.replace(/\/+$/, "");

  const workspace = opts.workspaceDir !== undefined
    ? await resolveWorkspace(opts.workspaceDir)
    : await createTempWorkspace(ref);
  const realWorkspace = await Deno.realPath(workspace);
  const sessionId = newSessionId();
  const scratchpad = sessionScratchpadDir(ref, sessionId);
  await Deno.mkdir(scratchpad, { recursive: true, mode: 0o700 });
  const realScratchpad = await Deno.realPath(scratchpad);
  const vault = await loadVault(paths.vault);
  const temporary = await isTempWorkspace(realWorkspace, ref);
  const workspaceMemoryDir = config.memory.enabled
    ? await prepareMemory(paths, realWorkspace, temporary)
    : undefined;

  const sections = await renderPromptSections({
    paths,
    config,
    vaultKeys: Object.keys(vault).sort(),
    ...(workspaceMemoryDir ? { workspaceMemoryDir } : {}),
  });
  const systemPrompt = assembleSystemPrompt(config.system_prompt, {
    agentsMd: base.agentsMd,
    agentId: ref.agentId,
    projectDir: projectDir(ref),
    sessionId,
    cwd: workspace,
    provider: model.endpoint.provider,
    modelId: model.endpoint.model_id,
    platform: platformName(),
    osVersion: osVersion(),
    shell: shellName((n) => env[n]),
    date: dateDirName(),
  }, sections);

  const meta: SessionMeta = {
    session_id: sessionId,
    provider: model.endpoint.provider,
    model_id: model.endpoint.model_id,
    model_context_window: model.context_window ?? "unknown",
    system_prompt: systemPrompt,
    agent_state: paths.agentState,
    workspace,
  };
  const toolset = createToolset(resolveToolDefinitions(config.tools.builtin), model.vision);
  const maxTokens = model.max_tokens ?? config.model.max_tokens;
  const sandbox = createPolicy({
    workspace: realWorkspace,
    mode: opts.sandbox ?? "workspace-write",
    network: opts.network ?? false,
    scratchpad: realScratchpad,
    dataRoot: ref.root,
    vault,
    hostEnv: env,
  });
  const writer = await openTraceWriter({ tracesDir: paths.traces, sessionId });
  return openSession({
    meta,
    metaWritten: false,
    writer,
    model,
    toolset,
    workspace: realWorkspace,
    scratchpad: realScratchpad,
    sandbox,
    vault,
    commandPolicy: effectivePolicy(projectConfig.command_policy),
    processes: createProcessRegistry(),
    thinkingLevel: thinkingChain(opts.thinkingLevel, base.systemConfig, projectConfig),
    maxTurns: opts.maxTurns ?? config.max_turns,
    ...(maxTokens > 0 ? { maxTokens } : {}),
    idleTimeoutMs: config.model.timeoutMs,
    ...(opts.retryDelayMs ? { retryDelayMs: opts.retryDelayMs } : {}),
    ...(opts.warn ? { warn: opts.warn } : {}),
  });
}
