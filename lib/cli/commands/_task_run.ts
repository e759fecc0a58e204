/**
 * One agent task from start to end, as `penguin run` and the scheduler
 * (`penguin schedules run`) both run it: open the session (penguin.jsonc
 * applied, a new session or a resumed one), build the approval options,
 * then run the input and every round of background reports until nothing
 * is left to wait for.
 *
 * @module
 */
import { resumeTarget } from "./_resume_latest.ts";
import { PenguinError } from "../../protocol/errors.ts";
import type { CompleteMessage, OmniMessage } from "../../protocol/types.ts";
import { createAgent } from "../../agent/agent.ts";
import { offerFirstModel } from "./_first_model.ts";
import { nextBackgroundReports } from "../../agent/background_reports.ts";
import { type ApprovalVerdict, approverForMode, withCommandPolicy } from "../../agent/approval.ts";
import type { RunOptions, Session } from "../../agent/session.ts";
import { type RunOutcome, trackOutcome } from "../../agent/outcome.ts";
import type { ToolCallMessage } from "../../protocol/types.ts";
import { safeText } from "../../display/terminal_text.ts";
import { listSkills } from "../../state/skills.ts";
import type { CommandContext } from "../command.ts";
import { applyPolicyFile, confinement, type SessionFlags } from "./_session_flags.ts";
import { startTelemetry } from "./_telemetry.ts";
import type { LiveTelemetry } from "../../telemetry/live.ts";

/** Refuse `--skill` names the agent does not have, before anything is recorded. */
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

/** Call `handler` on SIGINT and SIGTERM (where they can be listened to); returns the removal. */
export function addSignals(handler: () => void): () => void {
  const added: Deno.Signal[] = [];
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    try {
      Deno.addSignalListener(sig, handler);
      added.push(sig);
    } catch {
      // SIGTERM cannot be listened to on Windows
    }
  }
  return () => added.forEach((sig) => Deno.removeSignalListener(sig, handler));
}

/** How {@linkcode openTaskSession} opens the session besides the flags. */
export interface OpenTaskOptions {
  /** A terminal can answer approval prompts. */
  canAsk: boolean;
  /** Skill names the task asks for (checked against the agent's skills). */
  skills?: string[];
  /** Recorded as `session_meta.source` of a new session. */
  source?: "schedule";
  /** Where diagnostics go (default: the command's stderr). */
  warn?: (line: string) => void;
  /** The command named in policy messages (default `run`). */
  command?: string;
  /** Start the new session in a new temporary workspace instead of `f.workspace`. */
  temporaryWorkspace?: boolean;
  /**
   * Export the spans of the session (and its subagents) live when a
   * collector is configured: the started export is handed over here, and
   * the caller shuts it down after disposing of the session.
   */
  telemetry?: (started: LiveTelemetry) => void;
}

/**
 * Open the session of one task: a new one in `f.workspace` or a new
 * temporary workspace (the model pair
 * of the flags, else the project's default model), or the session
 * `f.resume` names. The workspace's penguin.jsonc narrows `f` first (the
 * recorded workspace's when resuming). An unknown model pair is a config
 * error.
 */
export async function openTaskSession(
  ctx: CommandContext,
  f: SessionFlags,
  opts: OpenTaskOptions,
): Promise<Session> {
  const warn = opts.warn ?? ctx.io.err;
  const command = opts.command ?? "run";
  const pc = { ...(ctx.root !== undefined ? { root: ctx.root } : {}), warn, canAsk: opts.canAsk };
  // A new temporary workspace has no penguin.jsonc.
  if (f.resume === undefined && !opts.temporaryWorkspace) {
    await applyPolicyFile(command, f, f.workspace, pc);
  }
  // A first run on a terminal is offered the recommended model of the provider whose key is set.
  if (f.resume === undefined && f.provider === undefined && opts.canAsk) {
    await offerFirstModel(ctx, f.projectId);
  }
  const agent = await createAgent({
    ...(ctx.root !== undefined ? { root: ctx.root } : {}),
    ...(f.projectId !== undefined ? { projectId: f.projectId } : {}),
    ...(f.agentId !== undefined ? { agentId: f.agentId } : {}),
  });
  await checkSkills(opts.skills ?? [], agent.paths.skills, agent.ref.agentId);
  // Spans of every session this task opens (subagents too) go to a collector when one is configured.
  const telemetry = opts.telemetry ? startTelemetry(ctx, agent) : null;
  if (telemetry) opts.telemetry!(telemetry);
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
 * of `f`, the penguin.jsonc command rules on top; `ask` only when a
 * terminal can answer).
 */
export function taskRunOptions(
  f: SessionFlags,
  session: Session,
  signal: AbortSignal,
  ask?: (call: ToolCallMessage) => Promise<ApprovalVerdict>,
): RunOptions {
  const asking = ask !== undefined ? { ask } : {};
  return {
    signal,
    approve: f.commandRules?.length
      ? withCommandPolicy(
        approverForMode(f.approve, { ...asking, permissionOf: session.toolPermission }),
        { enabled: true, rules: f.commandRules },
      )
      : f.approve,
    ...asking,
  };
}

/** What {@linkcode driveTask} reports while it runs. */
export interface DriveHooks {
  /** Every message of the stream. */
  onMessage?(msg: OmniMessage): void;
  /** Before waiting for `running` background subagents to finish. */
  onWaiting?(running: number): void;
}

/**
 * Run `input`, then let the model read the reports of background work
 * (subagents started with run_in_background) as they finish, one more
 * round per batch, until the task does not complete, is aborted, or
 * nothing is left to wait for. Returns the last round's outcome.
 */
export async function driveTask(
  session: Session,
  input: string | CompleteMessage[],
  options: RunOptions,
  hooks: DriveHooks = {},
): Promise<RunOutcome | undefined> {
  const signal = options.signal;
  let next: string | CompleteMessage[] | null = input;
  let outcome: RunOutcome | undefined;
  while (next !== null) {
    const task = trackOutcome(session.run(next, options));
    for await (const msg of task) hooks.onMessage?.(msg);
    outcome = task.outcome;
    if (outcome?.kind !== "completed" || signal?.aborted) break;
    next = await nextBackgroundReports(session, signal, hooks.onWaiting);
  }
  return outcome;
}
