/**
 * How a parent session creates and reopens its children: a child is
 * `createSession` with the parent's workspace, the parent's sandbox mode,
 * network and extra writable roots, the model pair of the call when it
 * names a complete one, else the parent's (never the child agent's own
 * default), the thinking level of the call, else the parent's effective
 * one, `source: "subagent"`, depth + 1, and `parent: {session_id,
 * tool_call_id}` recorded in its session_meta. A cross-agent child (the
 * call's `agent_id`) must exist (its `system_config.yaml`); it uses its own
 * agent state, vault and traces directory.
 *
 * @module
 */
import { PenguinError } from "../../protocol/errors.ts";
import { exists } from "../../state/_fs.ts";
import type { SessionMeta } from "../../protocol/types.ts";
import type { ThinkingLevel } from "../../models/wire.ts";
import { type AgentRef, systemConfigPath, tracesDir } from "../../state/paths.ts";
import type { RecordedSessionOptions } from "../_build.ts";
import type { Session } from "../session.ts";
import type { ChildSpawner, ChildSpawnRequest } from "./registry.ts";

/** What a child session is created with (a subset of the agent's `SessionOptions`). */
export interface ChildSessionOptions extends RecordedSessionOptions {
  /** The parent's workspace. */
  workspaceDir: string;
  /** The model pair. */
  provider: string;
  /** The model pair. */
  modelId: string;
  /** Always `subagent`. */
  source: "subagent";
  /** The spawning session and tool call. */
  parent: { session_id: string; tool_call_id: string };
  /** The parent's depth + 1. */
  subagentDepth: number;
}

/** What {@linkcode createSpawner} needs from the agent layer. */
export interface SpawnerDeps {
  /** The parent's session_meta. */
  parent: SessionMeta;
  /** Root, project and the parent's agent. */
  ref: AgentRef;
  /** The parent's depth. */
  depth: number;
  /** The options the parent session was opened with. */
  options: RecordedSessionOptions;
  /** Create a session as agent `agentId`. */
  create(agentId: string, opts: ChildSessionOptions): Promise<Session>;
  /** Resume session `sessionId` of agent `agentId`. */
  resume(agentId: string, sessionId: string, opts: RecordedSessionOptions): Promise<Session>;
}

/** The options a child inherits: the parent's confinement, diagnostics and tool sources. */
function inherited(o: RecordedSessionOptions): RecordedSessionOptions {
  return {
    ...(o.sandbox !== undefined ? { sandbox: o.sandbox } : {}),
    ...(o.network !== undefined ? { network: o.network } : {}),
    ...(o.extraWritable !== undefined ? { extraWritable: [...o.extraWritable] } : {}),
    ...(o.git !== undefined ? { git: o.git } : {}),
    ...(o.allowHomeWorkspace !== undefined ? { allowHomeWorkspace: o.allowHomeWorkspace } : {}),
    ...(o.homeReadable !== undefined ? { homeReadable: [...o.homeReadable] } : {}),
    ...(o.retryDelayMs !== undefined ? { retryDelayMs: o.retryDelayMs } : {}),
    ...(o.warn !== undefined ? { warn: o.warn } : {}),
    ...(o.tools !== undefined ? { tools: o.tools } : {}),
    ...(o.mcpDeny !== undefined ? { mcpDeny: o.mcpDeny } : {}),
    ...(o.observeTrace !== undefined ? { observeTrace: o.observeTrace } : {}),
  };
}

/** The spawner of a parent session. */
export function createSpawner(deps: SpawnerDeps): ChildSpawner {
  const { parent, ref } = deps;
  const checkAgent = async (agentId: string) => {
    if (agentId === ref.agentId) return;
    const path = systemConfigPath({ ...ref, agentId });
    if (!(await exists(path, { kind: "file" }))) {
      throw new PenguinError(
        "not_found",
        `agent "${agentId}" does not exist in project "${ref.projectId}" (no ${path})`,
      );
    }
  };
  return {
    agentId: ref.agentId,
    tracesDir: (agentId) => tracesDir({ ...ref, agentId }),
    async spawn(req: ChildSpawnRequest) {
      const agentId = req.agentId ?? ref.agentId;
      await checkAgent(agentId);
      const explicit = req.provider !== undefined && req.modelId !== undefined;
      const o = deps.options;
      return await deps.create(agentId, {
        ...inherited(o),
        workspaceDir: parent.workspace,
        provider: explicit ? req.provider! : parent.provider,
        modelId: explicit ? req.modelId! : parent.model_id,
        // The parent's credential overrides belong to the parent's pair.
        ...(!explicit && o.apiKey !== undefined ? { apiKey: o.apiKey } : {}),
        ...(!explicit && o.baseUrl !== undefined ? { baseUrl: o.baseUrl } : {}),
        ...(req.thinkingLevel !== undefined ? { thinkingLevel: req.thinkingLevel } : {}),
        source: "subagent",
        parent: { session_id: parent.session_id, tool_call_id: req.toolCallId },
        subagentDepth: deps.depth + 1,
      });
    },
    async resume(sessionId: string, agentId: string, thinkingLevel?: ThinkingLevel) {
      await checkAgent(agentId);
      return await deps.resume(agentId, sessionId, {
        ...inherited(deps.options),
        ...(thinkingLevel !== undefined ? { thinkingLevel } : {}),
      });
    },
  };
}
