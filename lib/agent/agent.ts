/**
 * Agents and new sessions.
 *
 * `createAgent` loads (or first initializes) one agent of one project under
 * the data root. `agent.createSession` locks in the model pair, the
 * workspace and the assembled system prompt, validates the credentials
 * before anything is written, and opens the trace writer (taking the
 * session lock). The trace file itself appears at the first run.
 *
 * @module
 */
import { agentInitOptions } from "./builtin_tool_config.ts";
import type { SessionMeta } from "../protocol/types.ts";
import { createToolCallIds } from "../models/tool_call_ids.ts";
import { openTraceWriter, type TraceWriter } from "../trace/writer.ts";
// The state and session modules by name, not their barrels: those also load what only other
// commands need (session import, schedules, chat history), which `penguin run` would pay for.
import {
  type AgentPaths,
  type AgentRef,
  projectConfigPath,
  projectDir,
  tracesDir,
} from "../state/paths.ts";
import { createTempWorkspace, isTempWorkspace, resolveWorkspace } from "../state/workspace.ts";
import {
  DEFAULT_AGENT_ID,
  DEFAULT_PROJECT_ID,
  newSessionId,
  validateAgentId,
  validateProjectId,
} from "../state/ids.ts";
import { loadOrInitAgent } from "../state/agent_init.ts";
import { loadProjectConfig } from "../state/project_config.ts";
import type { ProjectConfig } from "../state/project_config_types.ts";
import { loadVault } from "../state/vault.ts";
import { resolveDataRoot } from "../state/root.ts";
import {
  type ResolvedSystemConfig,
  resolveSystemConfig,
  type SystemConfig,
} from "../state/system_config.ts";
import { dateDirName } from "../trace/paths.ts";
import { pinnedWorkspace } from "../sandbox/workspace_identity.ts";
import { apiKeyEnv } from "../sandbox/api_key_env.ts";
import { defaultWarn } from "../protocol/errors.ts";
import {
  type AgentBase,
  type RecordedSessionOptions,
  sessionModel,
  sessionParts,
} from "./_build.ts";

export type { RecordedSession, RecordedSessionOptions };
import { emptyEngineState } from "./engine.ts";
import { eventMsg, modelMsg, userText } from "../protocol/builders.ts";
import { assembleSystemPrompt, osVersion, platformName, shellName } from "./prompt.ts";
import { prepareMemory, renderPromptSections } from "./prompt_sections.ts";
import type { SessionMemory } from "../state/memory.ts";
import { openSession, type Session } from "./session.ts";
import { maskSecrets, type Secret, vaultSecrets } from "../tools/secret_mask.ts";
import { agentMcpSecrets, apiKeySecrets, otherAgentSecrets } from "./_secrets.ts";
import type { ResolvedModel } from "../models/resolve.ts";
import { type ResumeOptions, resumeRecorded } from "./resume.ts";
import type { RecordedSession } from "./recorded.ts";
import { type ChildRegistry, createChildRegistry } from "./subagents/registry.ts";
import { createSpawner } from "./subagents/spawner.ts";
import { restoreChildren } from "./subagents/restore.ts";
import { MAX_SUBAGENT_DEPTH } from "./subagents/definitions.ts";
import { listSessionFiles } from "../trace/paths.ts";
import { closeDanglingCompaction } from "../session/resume.ts";
import { latestSessionId } from "../session/locate.ts";

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
export interface SessionOptions extends RecordedSessionOptions {
  /** Workspace; must exist. Absent → a new temporary workspace `workspaces/tmp-<8hex>`. */
  workspaceDir?: string;
  /** Provider group; always together with `modelId` (neither → the project's default model). */
  provider?: string;
  /** Model id; always together with `provider`. */
  modelId?: string;
  /** Who started the session when not a user (recorded as `session_meta.source`). */
  source?: "subagent" | "schedule";
  /** The spawning session and tool call of a subagent (recorded as `session_meta.parent`). */
  parent?: { session_id: string; tool_call_id: string };
  /** Subagent nesting depth (default 0, or 1 for `source: "subagent"`); at the cap no subagent tools are offered. */
  subagentDepth?: number;
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
  /** Reopen a session recorded in a trace (the building block of resume). */
  openRecordedSession(rec: RecordedSession, opts?: RecordedSessionOptions): Promise<Session>;
  /** Resume a session by id, trace path or `latest`; refusals write nothing. */
  resumeSession(opts: ResumeOptions): Promise<Session>;
  /** The most recent session with records (subagent sessions skipped), or null. */
  latestSessionId(): Promise<string | null>;
}

/** Shell-quote one argument when it needs it. */
function shellArg(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

/** The flags a printed `penguin config …` command needs to reach this project. */
function setupFlags(root: string | undefined, projectId: string): string {
  let flags = "";
  if (projectId !== DEFAULT_PROJECT_ID) flags += ` --project-id ${shellArg(projectId)}`;
  if (root !== undefined) flags += ` --root ${shellArg(root)}`;
  return flags;
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
  // Read beside the session's start: every `*_API_KEY`, which `Deno.env` shows only in part.
  const apiKeys = opts.env ? Promise.resolve({}) : apiKeyEnv();
  const env = opts.env ?? Deno.env.toObject();
  const root = resolveDataRoot({ root: opts.root, env: (n) => env[n] });
  const ref: AgentRef = {
    root,
    projectId: validateProjectId(opts.projectId ?? DEFAULT_PROJECT_ID),
    agentId: validateAgentId(opts.agentId ?? DEFAULT_AGENT_ID),
  };
  const configPath = projectConfigPath(ref);
  const projectConfig = await loadProjectConfig(configPath);
  const loaded = await loadOrInitAgent(ref, agentInitOptions());
  for (const line of loaded.recovered) defaultWarn(`[penguin] ${line}`);
  const config = resolveSystemConfig(loaded.systemConfig);
  const shared = {
    ref,
    paths: loaded.paths,
    systemConfig: loaded.systemConfig,
    config,
    agentsMd: loaded.agentsMd,
    projectConfig,
  };
  const base: AgentBase = {
    ...shared,
    env,
    apiKeys,
    configPath,
    setupFlags: setupFlags(opts.root !== undefined ? root : undefined, ref.projectId),
  };
  return {
    ...shared,
    createSession: (sessionOpts = {}) => createSession(base, sessionOpts),
    openRecordedSession: (rec, recOpts = {}) => openRecorded(base, rec, recOpts),
    resumeSession: (o) => resumeRecorded(base, (rec, ro) => openRecorded(base, rec, ro), o),
    latestSessionId: () => latestSessionId(loaded.paths.traces),
  };
}

/** penguin's system prompt for a session (templates, sections, memory) — what a new session records. */
async function penguinSystemPrompt(
  base: AgentBase,
  s: {
    sessionId: string;
    workspace: string;
    realWorkspace: string;
    provider: string;
    modelId: string;
    vaultKeys: string[];
    /** The session's prepared memory directories (default: prepared here). */
    memory?: SessionMemory;
    /** The session's secrets, masked in the memory indexes. */
    secrets: readonly Secret[];
  },
): Promise<string> {
  const { ref, paths, config } = base;
  const memory = s.memory ??
    (config.memory.enabled
      ? await prepareMemory(paths, s.realWorkspace, await isTempWorkspace(s.realWorkspace, ref))
      : {});
  const sections = await renderPromptSections({
    paths,
    config,
    vaultKeys: s.vaultKeys,
    ...(memory.workspace ? { workspaceMemoryDir: memory.workspace } : {}),
    mask: (text) => maskSecrets(text, s.secrets),
  });
  return assembleSystemPrompt(config.system_prompt, {
    agentsMd: base.agentsMd,
    agentId: ref.agentId,
    projectDir: projectDir(ref),
    sessionId: s.sessionId,
    cwd: s.workspace,
    provider: s.provider,
    modelId: s.modelId,
    platform: platformName(),
    osVersion: osVersion(),
    shell: shellName((n) => base.env[n]),
    date: dateDirName(),
  }, sections);
}

/** The vault values, API keys and MCP values of a session (what its tool outputs are masked of). */
async function promptSecrets(
  base: AgentBase,
  model: ResolvedModel,
  vault: Record<string, string>,
): Promise<Secret[]> {
  return [
    ...vaultSecrets(vault),
    ...apiKeySecrets(model, base.projectConfig, { ...await base.apiKeys, ...base.env }),
    ...await agentMcpSecrets(base.systemConfig),
    ...await otherAgentSecrets(base.ref),
  ];
}

/** True for a session imported from another harness (`imported_from.harness`). */
function importedFromHarness(meta: SessionMeta): boolean {
  return typeof (meta.imported_from as { harness?: unknown } | undefined)?.harness === "string";
}

async function createSession(base: AgentBase, opts: SessionOptions): Promise<Session> {
  const { ref, paths, config } = base;
  // The pair and its credentials first: a missing key fails before anything is created.
  const model = sessionModel(base, { provider: opts.provider, model_id: opts.modelId }, opts);
  const workspace = opts.workspaceDir !== undefined
    ? await resolveWorkspace(opts.workspaceDir)
    : await createTempWorkspace(ref);
  // Taken once: a directory on the way renamed meanwhile cannot stand in for it (issue 26, C32).
  const workspaceId = pinnedWorkspace(workspace);
  const realWorkspace = workspaceId.path;
  const sessionId = newSessionId();
  const vault = await loadVault(paths.vault);
  const temporary = await isTempWorkspace(realWorkspace, ref);
  const memory = config.memory.enabled ? await prepareMemory(paths, realWorkspace, temporary) : {};
  const systemPrompt = await penguinSystemPrompt(base, {
    memory,
    sessionId,
    workspace,
    realWorkspace,
    provider: model.endpoint.provider,
    modelId: model.endpoint.model_id,
    vaultKeys: Object.keys(vault).sort(),
    secrets: await promptSecrets(base, model, vault),
  });
  const meta: SessionMeta = {
    session_id: sessionId,
    provider: model.endpoint.provider,
    model_id: model.endpoint.model_id,
    model_context_window: model.context_window ?? "unknown",
    system_prompt: systemPrompt,
    agent_state: paths.agentState,
    workspace,
    ...(opts.source ? { source: opts.source } : {}),
    ...(opts.parent ? { parent: { ...opts.parent } } : {}),
  };
  const depth = opts.subagentDepth ?? (opts.source === "subagent" ? 1 : 0);
  const children = childRegistry(base, meta, depth, opts);
  const writer = await openTraceWriter({
    tracesDir: paths.traces,
    sessionId,
    stopAfterFailure: true,
    ...(opts.observeTrace ? { observer: opts.observeTrace(meta) } : {}),
    ...(opts.warn ? { warn: opts.warn } : {}),
  });
  return openSession(
    await closingOnError(writer, () =>
      sessionParts(
        base,
        {
          meta,
          model,
          realWorkspace,
          workspaceId,
          vault,
          writer,
          metaWritten: false,
          children,
          memory,
        },
        opts,
      )),
  );
}

async function openRecorded(
  base: AgentBase,
  rec: RecordedSession,
  opts: RecordedSessionOptions,
): Promise<Session> {
  // Long because: the resume steps in the order they depend on each other (model, workspace,
  // prompt, writer, parts, children, a moved workspace, a dangling compaction).
  let { meta } = rec;
  const model = sessionModel(base, { provider: meta.provider, model_id: meta.model_id }, opts);
  if (rec.switchedFrom) {
    // A file the session rotates to starts with the pair it runs on, and that model's window.
    meta = { ...meta, model_context_window: model.context_window ?? "unknown" };
  }
  const workspaceId = pinnedWorkspace(await resolveWorkspace(meta.workspace));
  const realWorkspace = workspaceId.path;
  const vault = await loadVault(base.paths.vault);
  if (meta.system_prompt === "" && importedFromHarness(meta)) {
    // The other harness's prompt described its own tools (or was never
    // recorded): an imported session continues with penguin's, assembled
    // at each resume.
    meta = {
      ...meta,
      system_prompt: await penguinSystemPrompt(base, {
        sessionId: meta.session_id,
        workspace: meta.workspace,
        realWorkspace,
        provider: meta.provider,
        modelId: meta.model_id,
        vaultKeys: Object.keys(vault).sort(),
        secrets: await promptSecrets(base, model, vault),
      }),
    };
  }
  const writer = await openTraceWriter({
    tracesDir: base.paths.traces,
    sessionId: meta.session_id,
    dateDir: rec.trace.dateDir,
    index: rec.trace.index,
    ...(rec.lock ? { heldLock: rec.lock } : {}),
    stopAfterFailure: true,
    ...(opts.observeTrace ? { observer: opts.observeTrace(meta) } : {}),
    ...(opts.warn ? { warn: opts.warn } : {}),
  });
  const children = childRegistry(base, meta, meta.source === "subagent" ? 1 : 0, opts);
  const history = rec.state?.history ?? [];
  const ids = history.flatMap((m) => (m.type === "tool_call" ? [m.tool_call_id] : []));
  const parts = await closingOnError(writer, () =>
    sessionParts(base, {
      meta,
      model,
      realWorkspace,
      workspaceId,
      vault,
      writer,
      metaWritten: rec.metaWritten ?? true,
      ...(rec.state ? { state: rec.state } : {}),
      toolCallIds: createToolCallIds(ids),
      children,
    }, opts));
  // What the dead process kept in memory (subagents, background commands) comes back from the traces.
  await restoreChildren(children, {
    parentFiles: (await listSessionFiles(base.paths.traces, meta.session_id)).map((f) => f.path),
    ...(rec.latestFacts ? { preread: rec.latestFacts } : {}),
    agentId: base.ref.agentId,
    tracesDir: (agentId) => tracesDir({ ...base.ref, agentId }),
    ...(opts.warn ? { warn: opts.warn } : {}),
  });
  if (rec.switchFrom !== undefined) {
    // Written with the first run, before its input: the tokens that follow are the new pair's.
    parts.pendingRecords = [
      ...(parts.pendingRecords ?? []),
      eventMsg({
        type: "model_switched",
        provider: meta.provider,
        model_id: meta.model_id,
        previous_provider: rec.switchFrom.provider,
        previous_model_id: rec.switchFrom.model_id,
      }),
    ];
  }
  if (rec.movedFrom !== undefined) {
    // Written with the first run (where the trace rotates if it must); the note is carried to the model.
    const moved = eventMsg({
      type: "workspace_moved",
      from: rec.movedFrom,
      to: meta.workspace,
      ...(rec.placedImport ? { reason: "imported" } : {}),
    });
    parts.pendingRecords = [...(parts.pendingRecords ?? []), moved];
    if (rec.movedFrom !== meta.workspace) {
      const note = userText(
        rec.placedImport
          ? importPlacedNote(meta.workspace)
          : workspaceMovedNote(rec.movedFrom, meta.workspace),
        "harness",
      );
      parts.state = parts.state ?? emptyEngineState();
      parts.state.carryOver = [...parts.state.carryOver, note];
      parts.pendingRecords.push(modelMsg(note));
    }
  }
  if (rec.renderMessages) parts.resumedHistory = rec.renderMessages;
  if (rec.switchedFrom) parts.switchedPair = { provider: meta.provider, model_id: meta.model_id };
  if (rec.contextClosed) parts.rotateFirst = true;
  if (rec.danglingCompaction) {
    await closeDanglingCompaction(writer, rec.danglingCompaction, opts.warn ?? defaultWarn);
  }
  return openSession(parts);
}

/** What the model is told when its session continues in another workspace. */
export function workspaceMovedNote(from: string, to: string): string {
  return `[workspace moved] The workspace "${from}" no longer exists; this session now works in "${to}". ` +
    `Paths in the conversation so far refer to the old workspace.`;
}

/** What the model is told when the first resume of an imported session places it in `to`. */
export function importPlacedNote(to: string): string {
  return `[workspace] This session was imported; it now works in "${to}". ` +
    `Paths in the conversation so far refer to the directory where it was recorded.`;
}

/** The children registry of a session at `depth`: able to spawn below the depth cap. */
function childRegistry(
  base: AgentBase,
  meta: SessionMeta,
  depth: number,
  opts: RecordedSessionOptions,
): ChildRegistry {
  const open = (agentId: string) =>
    createAgent({ root: base.ref.root, projectId: base.ref.projectId, agentId, env: base.env });
  const spawner = depth < MAX_SUBAGENT_DEPTH
    ? createSpawner({
      parent: meta,
      ref: base.ref,
      depth,
      options: opts,
      create: async (agentId, o) =>
        agentId === base.ref.agentId
          ? await createSession(base, o)
          : await (await open(agentId)).createSession(o),
      resume: async (agentId, sessionId, o) =>
        agentId === base.ref.agentId
          ? await resumeRecorded(base, (rec, ro) => openRecorded(base, rec, ro), {
            ...o,
            target: sessionId,
          })
          : await (await open(agentId)).resumeSession({ ...o, target: sessionId }),
    })
    : undefined;
  return createChildRegistry({
    parentSessionId: meta.session_id,
    depth,
    ...(spawner ? { spawner } : {}),
    ...(opts.warn ? { warn: opts.warn } : {}),
  });
}

/** Run `build`; when it throws, close `writer` (releasing the session lock) first. */
async function closingOnError<T>(writer: TraceWriter, build: () => Promise<T>): Promise<T> {
  try {
    return await build();
  } catch (err) {
    await writer.close().catch(() => {});
    throw err;
  }
}
