/**
 * The session of one task, as {@linkcode runTask} (and so `penguin run`,
 * the scheduler and embedding programs) opens it: the workspace's
 * penguin.jsonc narrows the options first (the recorded workspace's when
 * resuming), the agent is opened, the skills the task names are checked,
 * the live telemetry export is started when the host supplies one, and a
 * new session is created (or the named one resumed). Also the run options
 * of such a task: its abort signal and its approvals.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import type { ToolCallMessage } from "../protocol/types.ts";
import type { ThinkingLevel } from "../models/wire.ts";
import { safeText } from "../display/terminal_text.ts";
import { listSkills } from "../state/skills.ts";
import type { SessionMeta } from "../protocol/types.ts";
import type { TraceObserver } from "../trace/writer.ts";
import { type Agent, createAgent } from "./agent.ts";
import { type ApprovalVerdict, approverForMode, withCommandPolicy } from "./approval.ts";
import type { RunOptions, Session } from "./session.ts";
import { resumeTarget } from "./resume_target.ts";
import { applyPolicyFile, confinement, type PolicyOptions } from "./workspace_policy.ts";

/** The session options of one task (penguin.jsonc applied in place by {@linkcode openTaskSession}). */
export interface TaskSessionOptions extends PolicyOptions {
  provider?: string;
  modelId?: string;
  projectId?: string;
  agentId?: string;
  /**
   * The workspace of a new session; when resuming, where the first resume of
   * an imported session works (the current directory of `penguin run`).
   */
  workspace: string;
  /** The session to continue ("" or `latest` = the latest one of the current directory). */
  resume?: string;
  /** Where to continue when the recorded workspace is gone. */
  resumeWorkspace?: string;
  thinking?: ThinkingLevel;
  maxTurns?: number;
}

/** A running live export of spans, as a host starts it (see `telemetry.liveTelemetryFor`). */
export interface TaskTelemetry {
  /** An observer for one session's trace writer. */
  observeTrace(meta: SessionMeta): TraceObserver;
  /** Send what is left; called after the session is disposed. */
  shutdown(): Promise<unknown>;
}

/** How {@linkcode openTaskSession} opens the session besides the options. */
export interface OpenTaskOptions {
  /** The data root (default: `PENGUIN_ROOT`, else the default root). */
  root?: string;
  /** Someone can answer approval prompts. */
  canAsk: boolean;
  /** Skill names the task asks for (checked against the agent's skills). */
  skills?: string[];
  /** Recorded as `session_meta.source` of a new session. */
  source?: "schedule";
  /** Where diagnostics go, one line each with its newline. */
  warn: (line: string) => void;
  /** The command named in policy messages (default `run`). */
  command?: string;
  /** Start the new session in a new temporary workspace instead of `f.workspace`. */
  temporaryWorkspace?: boolean;
  /** Called once penguin.jsonc is applied, before the agent opens (a host may add a first model). */
  beforeOpen?(): Promise<void>;
  /**
   * Start the live export of the session's spans (and its subagents'); the
   * started export is handed to `started`, and the caller shuts it down
   * after disposing of the session.
   */
  telemetry?(agent: Agent): TaskTelemetry | null | Promise<TaskTelemetry | null>;
  /** Receives the started export. */
  started?(telemetry: TaskTelemetry): void;
}

/** Refuse skill names the agent does not have, before anything is recorded. */
async function checkSkills(names: string[], skillsDir: string, agentId: string): Promise<void> {
  if (names.length === 0) return;
  const installed = new Set((await listSkills(skillsDir)).map((s) => s.name));
  const missing = names.filter((n) => !installed.has(n));
  if (missing.length > 0) {
    throw new PenguinError(
      "usage",
      `run: --skill ${missing.join(", ")}: agent ${agentId} has no such skill ` +
        `(installed: ${[...installed].join(", ") || "none"}; see penguin skills list)`,
    );
  }
}

/**
 * Open the session of one task: a new one in `f.workspace` or a new
 * temporary workspace (the model pair of `f`, else the project's default
 * model), or the session `f.resume` names. The workspace's penguin.jsonc
 * narrows `f` first (the recorded workspace's when resuming). An unknown
 * model pair is a config error.
 */
export async function openTaskSession(
  f: TaskSessionOptions,
  opts: OpenTaskOptions,
): Promise<Session> {
  const { warn } = opts;
  const command = opts.command ?? "run";
  const pc = { ...(opts.root !== undefined ? { root: opts.root } : {}), warn, canAsk: opts.canAsk };
  // A new temporary workspace has no penguin.jsonc.
  if (f.resume === undefined && !opts.temporaryWorkspace) {
    await applyPolicyFile(command, f, f.workspace, pc);
  }
  await opts.beforeOpen?.();
  const agent = await createAgent({
    ...(opts.root !== undefined ? { root: opts.root } : {}),
    ...(f.projectId !== undefined ? { projectId: f.projectId } : {}),
    ...(f.agentId !== undefined ? { agentId: f.agentId } : {}),
  });
  await checkSkills(opts.skills ?? [], agent.paths.skills, agent.ref.agentId);
  // Spans of every session this task opens (subagents too) go to a collector when one is configured.
  const telemetry = (await opts.telemetry?.(agent)) ?? null;
  if (telemetry) opts.started?.(telemetry);
  const limits = {
    ...(telemetry ? { observeTrace: telemetry.observeTrace } : {}),
    ...(f.thinking ? { thinkingLevel: f.thinking } : {}),
    ...(f.maxTurns !== undefined ? { maxTurns: f.maxTurns } : {}),
    // Diagnostics can quote the model (tool names, errors): terminal-safe like the rest.
    warn: (line: string) => warn(`${safeText(line)}\n`),
  };
  if (f.resume !== undefined) {
    // The recorded workspace decides which penguin.jsonc applies.
    return await agent.resumeSession({
      target: await resumeTarget(command, agent, f.resume),
      ...(f.provider !== undefined ? { provider: f.provider, modelId: f.modelId } : {}),
      ...(f.resumeWorkspace !== undefined ? { workspace: f.resumeWorkspace } : {}),
      // The first resume of an imported session works in the task's directory.
      ...(f.workspace !== "" ? { currentDirectory: f.workspace } : {}),
      ...limits,
      configure: async (meta) => {
        await applyPolicyFile(command, f, meta.workspace, pc);
        return confinement(f);
      },
    });
  }
  try {
    return await agent.createSession({
      ...(opts.temporaryWorkspace ? {} : { workspaceDir: f.workspace }),
      ...(f.provider !== undefined ? { provider: f.provider, modelId: f.modelId } : {}),
      ...(opts.source ? { source: opts.source } : {}),
      ...limits,
      ...confinement(f),
    });
  } catch (err) {
    // An unknown model pair is a configuration problem here, not a failed task.
    if (err instanceof PenguinError && err.kind === "not_found") {
      throw new PenguinError("config", err.message, { cause: err });
    }
    throw err;
  }
}

/**
 * The run options of a task: its abort signal and its approvals (the mode
 * of `f`, the penguin.jsonc command rules on top; `ask` only when someone
 * can answer).
 */
export function taskRunOptions(
  f: PolicyOptions,
  session: Session,
  signal: AbortSignal | undefined,
  ask?: (call: ToolCallMessage) => Promise<ApprovalVerdict>,
): RunOptions {
  const asking = ask !== undefined ? { ask } : {};
  return {
    ...(signal !== undefined ? { signal } : {}),
    approve: f.commandRules?.length
      ? withCommandPolicy(
        approverForMode(f.approve, { ...asking, permissionOf: session.toolPermission }),
        { enabled: true, rules: f.commandRules },
      )
      : f.approve,
    ...asking,
  };
}
