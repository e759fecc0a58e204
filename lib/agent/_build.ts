// The parts of a live session that do not depend on whether it is new or
// recorded: model resolution (credentials checked), the tool set, the
// sandbox policy, the command policy snapshot and the limits.
import type { SessionMeta } from "../protocol/types.ts";
import { type EnvSource, type ResolvedModel, resolveModel } from "../models/resolve.ts";
import type { ToolCallIds } from "../models/tool_call_ids.ts";
import type { ThinkingLevel } from "../models/wire.ts";
import { createPolicy, type WorkspaceId } from "../sandbox/policy.ts";
import { workspaceProblem, workspaceWarnings } from "../sandbox/spawn.ts";
import { noteLiveRoots } from "../sandbox/_live_roots.ts";
import { PenguinError } from "../protocol/errors.ts";
import type { TraceObserver, TraceWriter } from "../trace/writer.ts";
import { effectivePolicy } from "../tools/command_policy.ts";
import { modelDescriber, type VisionDescriber } from "../tools/describe_image.ts";
import { maskSecrets, type Secret, vaultSecrets } from "../tools/secret_mask.ts";
import { createProcessRegistry } from "../tools/processes.ts";
import { prepareArchiveDir } from "../tools/archive_dir.ts";
import type {
  AgentPaths,
  AgentRef,
  ProjectConfig,
  ResolvedSystemConfig,
  SystemConfig,
} from "../state/mod.ts";
import { sessionMcpLogDir, sessionScratchpadDir } from "../state/paths.ts";
import { assertWorkspaceOutsideDataRoot, isTempWorkspace } from "../state/workspace.ts";
import { prepareMemory, type SessionMemory } from "../state/memory.ts";
import type { EngineState } from "./engine.ts";
import type { SessionParts } from "./session.ts";
import { builtinToolSource, openToolset } from "./toolset.ts";
import type { ToolSource } from "../tools/source.ts";
import { mcpToolSource } from "../mcp/source.ts";
import type { McpServerConfig } from "../state/mcp_servers.ts";
import { agentMcpSecrets, apiKeySecrets, otherAgentSecrets } from "./_secrets.ts";
import { type ChildRegistry, createChildRegistry } from "./subagents/registry.ts";
import { subagentToolFactories } from "./subagents/tools.ts";
import { compactionSettings } from "./compaction.ts";
import type { SandboxMode } from "../sandbox/policy.ts";
import type { GitAccess } from "../sandbox/git_guard.ts";

/** Options of a session that do not fix its identity (shared by new and recorded sessions). */
export interface RecordedSessionOptions {
  /** Default thinking level (else the agent's, else the project's `[default_chat]`, else `medium`). */
  thinkingLevel?: ThinkingLevel;
  /** Sandbox mode for commands (default `workspace-write`). */
  sandbox?: SandboxMode;
  /** Whether commands may use the network (default false). */
  network?: boolean;
  /** More directories commands may write (workspace-write only; e.g. from penguin.jsonc). */
  extraWritable?: string[];
  /** How far commands may change the workspace's git directory (default `read-only`). */
  git?: GitAccess;
  /** `--allow-home-workspace`: the workspace may be or contain a home directory (then sealed). */
  allowHomeWorkspace?: boolean;
  /** More paths in the home directory commands may read (penguin.jsonc `home_readable`). */
  homeReadable?: string[];
  /** Max requests per task; ≤ 0 = unlimited (default: the agent's `max_turns`). */
  maxTurns?: number;
  /** API key for this session only (over the entry's and the env var). */
  apiKey?: string;
  /** Base URL for this session only. */
  baseUrl?: string;
  /**
   * Wait before retry `n` (default 2 s, 4 s, 8 s, 16 s, 30 s, or a server's
   * Retry-After up to 60 s).
   */
  retryDelayMs?: (n: number) => number;
  /** Diagnostics sink (default stderr). */
  warn?: (line: string) => void;
  /**
   * More tools: each source is opened when the session is created, offered
   * after the built-in tools, and closed when the session is disposed.
   * Subagents get the same sources.
   */
  tools?: readonly ToolSource[];
  /**
   * MCP servers of the agent's `tools.mcpServers` to leave out (a
   * workspace's `penguin.jsonc` `mcp` setting): every one, or these names.
   */
  mcpDeny?: "all" | readonly string[];
  /**
   * Watch each session's trace as it is written: called once per session
   * opened (subagents too) with its meta; the observer sees every record
   * after it reached the file (a live telemetry export hangs here).
   */
  observeTrace?: (meta: SessionMeta) => TraceObserver;
}

/** An agent as sessions are built from it. */
export interface AgentBase {
  /** Root, project and agent. */
  ref: AgentRef;
  /** The agent's paths. */
  paths: AgentPaths;
  /** `system_config.yaml` as written. */
  systemConfig: SystemConfig;
  /** With defaults. */
  config: ResolvedSystemConfig;
  /** `AGENTS.md`. */
  agentsMd: string;
  /** The project config. */
  projectConfig: ProjectConfig;
  /** Environment (keys, data root, commands). */
  env: Record<string, string>;
  /**
   * Every `*_API_KEY` of penguin's environment (`lib/sandbox/api_key_env.ts`), read beside the
   * session's start and awaited only where the secrets are listed: read before the agent, a bash
   * spawned then held the first request back by about 35 ms.
   */
  apiKeys: Promise<Record<string, string>>;
  /** Path of `.project_config.toml`, for messages. */
  configPath: string;
  /** Flags that make a `penguin config …` line reach this project (` --root …`, ` --project-id …`). */
  setupFlags?: string;
}

/** Resolve the session's model pair; throws before anything is created when a key is missing. */
export function sessionModel(
  base: AgentBase,
  pair: { provider?: string | undefined; model_id?: string | undefined },
  opts: { apiKey?: string; baseUrl?: string },
): ResolvedModel {
  const model = resolveModel(base.projectConfig, pair, base.env as EnvSource, {
    configPath: base.configPath,
    requireKey: opts.apiKey === undefined,
    ...(base.setupFlags ? { setupFlags: base.setupFlags } : {}),
  });
  if (opts.apiKey !== undefined) model.endpoint.api_key = opts.apiKey;
  if (opts.baseUrl !== undefined) model.endpoint.base_url = opts.baseUrl.replace(/\/+$/, "");
  return model;
}

function thinkingChain(
  explicit: ThinkingLevel | undefined,
  agent: SystemConfig,
  project: ProjectConfig,
): ThinkingLevel {
  return explicit ?? agent.model?.thinking_level ?? project.default_chat.thinking_level ?? "medium";
}

/**
 * The project's vision model for describe_image, when the session's model
 * is text-only and `vision_model` names a usable entry (the explicit pair,
 * never inferred). A vision model that cannot be used is warned about and
 * left out.
 */
function visionDescriber(
  base: AgentBase,
  sessionModel: ResolvedModel,
  warn: (line: string) => void,
): VisionDescriber | undefined {
  const pair = base.projectConfig.vision_model;
  if (sessionModel.vision || pair === undefined) return undefined;
  try {
    const model = resolveModel(base.projectConfig, pair, base.env as EnvSource, {
      configPath: base.configPath,
    });
    if (!model.vision) {
      throw new PenguinError(
        "config",
        `vision_model (${pair.provider}, ${pair.model_id}) has vision = false`,
      );
    }
    return modelDescriber(model.endpoint, {
      ...(model.max_tokens !== undefined ? { maxTokens: model.max_tokens } : {}),
    });
  } catch (err) {
    warn(
      `[penguin] describe_image is not offered: ${err instanceof Error ? err.message : err}`,
    );
    return undefined;
  }
}

/**
 * `describer` refusing an image whose data holds a secret (a command wrote the value into the
 * file): it would reach the vision model's provider as base64, which masking does not read as
 * text (attack round 18b secrets; the session's own images are refused in `environment.ts`).
 * The prompt, the model's words, goes to that provider masked, as a subagent's does (attack
 * round 24 secrets B4: a value the model learned reversed reached the vision request).
 */
function refusingSecretImages(describer: VisionDescriber, secrets: Secret[]): VisionDescriber {
  return {
    modelId: describer.modelId,
    async *describe(imageUrl, prompt, signal) {
      if (maskSecrets(imageUrl, secrets) !== imageUrl) {
        return { status: "failed", message: "image refused: its data holds a secret" };
      }
      return yield* describer.describe(imageUrl, maskSecrets(prompt, secrets), signal);
    },
  };
}

/** What differs between a new and a recorded session. */
export interface SessionCore {
  meta: SessionMeta;
  model: ResolvedModel;
  realWorkspace: string;
  /** The workspace's identity, taken when the session opened (`realWorkspace` is its path). */
  workspaceId?: WorkspaceId;
  vault: Record<string, string>;
  writer: TraceWriter;
  metaWritten: boolean;
  state?: EngineState;
  toolCallIds?: ToolCallIds;
  /** The children registry (default: one that cannot spawn, e.g. for a subagent). */
  children?: ChildRegistry;
  /** The session's memory directories (default: prepared now, when memory is enabled). */
  memory?: SessionMemory;
}

/** The memory directories of a session in `realWorkspace` (none when memory is disabled). */
async function sessionMemory(base: AgentBase, realWorkspace: string): Promise<SessionMemory> {
  if (!base.config.memory.enabled) return {};
  const temporary = await isTempWorkspace(realWorkspace, base.ref);
  return await prepareMemory(base.paths, realWorkspace, temporary);
}

/** The agent's MCP servers minus the denied ones; configuration problems are warned. */
async function mcpServersOf(
  base: AgentBase,
  deny: "all" | readonly string[] | undefined,
  warn: (line: string) => void,
): Promise<McpServerConfig[]> {
  const entries = base.systemConfig.tools?.mcpServers ?? [];
  if (deny === "all" || entries.length === 0) return [];
  const { parseMcpServers } = await import("../state/mcp_servers.ts");
  const { servers, warnings } = await parseMcpServers(entries, base.paths.systemConfig);
  for (const w of warnings) warn(`[penguin] ${w}`);
  return servers.filter((s) => !deny?.includes(s.name));
}

/** Everything {@linkcode openSession} needs. Creates the session scratchpad (0700). */
export async function sessionParts(
  base: AgentBase,
  core: SessionCore,
  opts: RecordedSessionOptions,
): Promise<SessionParts> {
  // Long because: one assembly of a session's parts in dependency order (policy, tool sources,
  // toolset, engine); each step feeds the next.
  const { ref, config, projectConfig } = base;
  await assertWorkspaceOutsideDataRoot(core.realWorkspace, ref);
  const scratchpad = sessionScratchpadDir(ref, core.meta.session_id);
  await Deno.mkdir(scratchpad, { recursive: true, mode: 0o700 });
  const realScratchpad = await Deno.realPath(scratchpad);
  await prepareArchiveDir(realScratchpad);
  const children = core.children ??
    createChildRegistry({
      parentSessionId: core.meta.session_id,
      depth: 1,
      ...(opts.warn ? { warn: opts.warn } : {}),
    });
  const maxTokens = core.model.max_tokens ?? config.model.max_tokens;
  const memory = core.memory ?? await sessionMemory(base, core.realWorkspace);
  const sharedEnv = await Deno.mkdir(base.paths.sharedEnv, { recursive: true, mode: 0o700 })
    .then(() => base.paths.sharedEnv, () => undefined);
  const sandbox = createPolicy({
    workspace: core.realWorkspace,
    ...(core.workspaceId ? { workspaceId: core.workspaceId } : {}),
    mode: opts.sandbox ?? "workspace-write",
    network: opts.network ?? false,
    ...(opts.extraWritable ? { extraWritable: opts.extraWritable } : {}),
    ...(opts.git ? { git: opts.git } : {}),
    ...(opts.allowHomeWorkspace ? { allowHomeWorkspace: true } : {}),
    ...(opts.homeReadable?.length ? { homeReadable: opts.homeReadable } : {}),
    scratchpad: realScratchpad,
    dataRoot: ref.root,
    // Installed skills are for the model to read: visible, read-only, in a hidden data root.
    reveal: [base.paths.skills],
    // The memory and shared environment directories are the model's to maintain: visible and
    // writable like the workspace, for its commands and its file tools alike.
    revealWritable: [memory.user, memory.workspace, sharedEnv].filter((d) => d !== undefined),
    vault: core.vault,
    hostEnv: base.env,
  });
  // Its file tools write there as its commands do: noted before anything runs (a data root made
  // in these directories meanwhile is refused, lib/sandbox/_live_roots.ts).
  await noteLiveRoots(sandbox);
  // A workspace where no command can run fails now, before the first request.
  const problem = await workspaceProblem(sandbox);
  if (problem !== undefined) {
    throw new PenguinError("usage", `Cannot use the workspace "${core.realWorkspace}": ${problem}`);
  }
  const warn = opts.warn ?? ((line: string) => console.error(line));
  for (const w of await workspaceWarnings(sandbox)) warn(`[penguin] warning: ${w}`);
  const secrets = [
    ...apiKeySecrets(core.model, projectConfig, { ...await base.apiKeys, ...base.env }),
    ...await agentMcpSecrets(base.systemConfig),
    ...await otherAgentSecrets(ref),
  ];
  const describer = visionDescriber(base, core.model, warn);
  const vision = describer &&
    refusingSecretImages(describer, [...vaultSecrets(core.vault), ...secrets]);
  const toolset = await openToolset([
    builtinToolSource({
      ...(config.tools.builtin ? { builtin: config.tools.builtin } : {}),
      factories: subagentToolFactories(children),
      ...(vision ? { vision } : {}),
    }),
    // Server logs lie under the data root, out of the model's sight (its commands read the
    // scratchpad); a server may log the token its entry gives it.
    mcpToolSource(await mcpServersOf(base, opts.mcpDeny, warn), {
      logDir: sessionMcpLogDir(ref, core.meta.session_id),
      // Every secret of the session, not only the servers' own: a server started in the
      // workspace may show one a command wrote there in its tool list or its errors (attack
      // round 19 mcpsecrets #12, #13).
      secrets: [...vaultSecrets(core.vault), ...secrets],
    }),
    ...(opts.tools ?? []),
  ], {
    sessionId: core.meta.session_id,
    workspace: core.realWorkspace,
    scratchpad: realScratchpad,
    sandbox,
    vision: core.model.vision,
    warn,
  });
  return {
    meta: core.meta,
    metaWritten: core.metaWritten,
    writer: core.writer,
    model: core.model,
    toolset,
    workspace: core.realWorkspace,
    scratchpad: realScratchpad,
    // The model reads installed skills with read_file too; never writable.
    readOnlyRoots: [base.paths.skills],
    sandbox,
    vault: core.vault,
    secrets,
    commandPolicy: effectivePolicy(projectConfig.command_policy),
    processes: createProcessRegistry(),
    children,
    thinkingLevel: thinkingChain(opts.thinkingLevel, base.systemConfig, projectConfig),
    maxTurns: opts.maxTurns ?? config.max_turns,
    ...(maxTokens > 0 ? { maxTokens } : {}),
    idleTimeoutMs: config.model.timeoutMs,
    compaction: compactionSettings(config.compaction, core.model.context_window),
    ...(core.state ? { state: core.state } : {}),
    ...(core.toolCallIds ? { toolCallIds: core.toolCallIds } : {}),
    ...(opts.retryDelayMs ? { retryDelayMs: opts.retryDelayMs } : {}),
    ...(opts.warn ? { warn: opts.warn } : {}),
  };
}
