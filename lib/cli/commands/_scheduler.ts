/**
 * The scheduler behind `penguin schedules run`: it reads the agent's
 * schedule directory, fires the due slot of each enabled task as a normal
 * agent task (`runTask`, as `penguin run` runs it, in this process), and remembers nothing of its own: which slots have fired
 * is read back from the traces (see session/scheduled_firings.ts).
 *
 * Rules:
 * - A firing sends one user text with sender `server`: a `[scheduled_task]`
 *   block (task name, slot) and the task's prompt. A new session is marked
 *   `session_meta.source = "schedule"`; a task with `session_id` continues
 *   that session instead.
 * - The model pair is the task's `provider` + `model_id`, else the
 *   project's default model (no default: the firing fails with that
 *   error). A bound session keeps its recorded model.
 * - Firings run with `penguin run`'s defaults: approvals allow-all,
 *   sandbox workspace-write, network off, narrowed by the workspace's
 *   penguin.jsonc.
 * - Only the latest slot at or before now is due (missed slots fire once,
 *   late); at most one firing of a task runs at a time; different tasks
 *   run side by side.
 * - A slot is marked fired before its session opens: a firing that fails
 *   before its prompt is recorded is not retried until the scheduler
 *   restarts.
 * - One scheduler per agent: a second one refuses to start.
 *
 * @module
 */
import { agentInitOptions } from "../../agent/builtin_tool_config.ts";
import { errorMessage, PenguinError } from "../../protocol/errors.ts";
import { userText } from "../../protocol/builders.ts";
import { runTask, type RunTaskOutcome } from "../../agent/run_task.ts";
import { loadSchedules, type ScheduledTask } from "../../state/schedule.ts";
import { lastSlot, nextSlot } from "../../state/schedule_slots.ts";
import {
  DEFAULT_AGENT_ID,
  DEFAULT_PROJECT_ID,
  loadOrInitAgent,
  resolveDataRoot,
  validateAgentId,
  validateProjectId,
} from "../../state/mod.ts";
import { acquireSessionLock, releaseSessionLock, type SessionLock } from "../../trace/lock.ts";
import { firedSlots, scheduledTaskText, slotKey } from "../../session/scheduled_firings.ts";
import type { CommandContext } from "../command.ts";
import type { SessionFlags } from "./_session_flags.ts";
import { startTelemetry } from "./_telemetry.ts";

/** How often the schedule directory is read again, at the latest (milliseconds). */
export const RESCAN_MS = 30_000;

/** The scheduler's clock. */
export interface Clock {
  /** The current instant. */
  now(): Date;
  /** Set from `PENGUIN_NOW` (tests): trace files are then searched whatever their age. */
  fake: boolean;
}

/**
 * The clock of the schedule commands: the system clock, or, when
 * `PENGUIN_NOW` is set (for tests and trials), a clock that starts at that
 * instant and runs on from there.
 */
export function scheduleClock(penguinNow: string | undefined): Clock {
  if (penguinNow === undefined || penguinNow === "") return { now: () => new Date(), fake: false };
  const at = Date.parse(penguinNow);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(penguinNow) || Number.isNaN(at)) {
    throw new PenguinError(
      "usage",
      `PENGUIN_NOW must be an ISO-8601 time such as 2026-01-01T09:00:00Z, got ${
        JSON.stringify(penguinNow)
      }`,
    );
  }
  const offset = at - Date.now();
  return { now: () => new Date(Date.now() + offset), fake: true };
}

/** The agent a scheduler serves. */
export interface AgentTarget {
  projectId?: string;
  agentId?: string;
}

/** The schedule and traces directories of an agent. */
export async function agentDirs(
  ctx: CommandContext,
  target: AgentTarget,
): Promise<{ scheduleDir: string; tracesDir: string; agentId: string }> {
  const root = resolveDataRoot({ root: ctx.root });
  const projectId = validateProjectId(target.projectId ?? DEFAULT_PROJECT_ID);
  const agentId = validateAgentId(target.agentId ?? DEFAULT_AGENT_ID);
  const agent = await loadOrInitAgent({ root, projectId, agentId }, agentInitOptions());
  return { scheduleDir: agent.paths.schedule, tracesDir: agent.paths.traces, agentId };
}

/** Options of {@linkcode openScheduler}. */
export interface SchedulerOptions extends AgentTarget {
  /** The command context (data root, stderr for session diagnostics). */
  ctx: CommandContext;
  /** The clock slots are computed with. */
  clock: Clock;
  /** One log line (no newline): firings, start and stop. */
  log(line: string): void;
  /** One problem line (no newline): an invalid task file. */
  warn(line: string): void;
}

/** A running scheduler. */
export interface Scheduler {
  /** The schedule directory it reads. */
  readonly scheduleDir: string;
  /** The agent it serves. */
  readonly agentId: string;
  /** Read the directory and start the firing of every due slot; resolves to the next slot ahead (any task), if any. */
  tick(): Promise<Date | undefined>;
  /** How many firings are running. */
  running(): number;
  /** Resolves when every running firing has ended. */
  settle(): Promise<void>;
  /** Abort every running firing (each records an `abort` event) and start no more. */
  stop(): void;
  /** Firings that did not complete, and task files that could not be read at the last tick. */
  problems(): { failedFirings: number; invalidFiles: number };
  /** Release the scheduler lock. */
  close(): Promise<void>;
}

/** The lock a scheduler holds on its agent (one scheduler per agent). */
const LOCK_NAME = "schedules-run";

/** A message as one log line. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

function flagsFor(task: ScheduledTask, target: AgentTarget): SessionFlags {
  const f: SessionFlags = {
    workspace: task.workspace ?? "",
    approve: "allow-all",
    sandbox: "workspace-write",
    network: false,
    verbose: false,
    grantWritableRoots: false,
    gitWritable: false,
  };
  if (target.projectId !== undefined) f.projectId = target.projectId;
  if (target.agentId !== undefined) f.agentId = target.agentId;
  if (task.model) Object.assign(f, { provider: task.model.provider, modelId: task.model.modelId });
  if (task.sessionId !== undefined) f.resume = task.sessionId;
  return f;
}

/** Take the scheduler lock of `agentId`; a second scheduler of the agent is refused. */
async function schedulerLock(tracesDir: string, agentId: string): Promise<SessionLock> {
  try {
    return await acquireSessionLock(tracesDir, LOCK_NAME);
  } catch (err) {
    if (!(err instanceof PenguinError) || err.kind !== "locked") throw err;
    throw new PenguinError(
      "locked",
      `Cannot start the scheduler of agent ${agentId}: another "penguin schedules run" serves it ` +
        `(${err.message.replace(/^Cannot write session [\w-]+: /, "")})`,
      { cause: err },
    );
  }
}

/** The schedules in `scheduleDir`; an unreadable directory is one error (the tick says so once). */
async function readSchedules(
  scheduleDir: string,
): Promise<Awaited<ReturnType<typeof loadSchedules>>> {
  try {
    return await loadSchedules(scheduleDir);
  } catch (err) {
    // An unreadable directory: say so (once) and try again at the next tick.
    return {
      tasks: [],
      errors: [
        err instanceof PenguinError ? err : new PenguinError("config", errorMessage(err)),
      ],
    };
  }
}

/**
 * Start a scheduler for one agent: take the agent's scheduler lock (a
 * second scheduler of the same agent is refused) and prepare to tick.
 */
export async function openScheduler(opts: SchedulerOptions): Promise<Scheduler> {
  // Long because: a closure-based scheduler whose firing and tick functions share the lock, clock,
  // fired set and running map.
  const { ctx, clock } = opts;
  const target: AgentTarget = {
    ...(opts.projectId !== undefined ? { projectId: opts.projectId } : {}),
    ...(opts.agentId !== undefined ? { agentId: opts.agentId } : {}),
  };
  const { scheduleDir, tracesDir, agentId } = await agentDirs(ctx, target);
  const lock = await schedulerLock(tracesDir, agentId);
  const fired = new Set<string>();
  let scannedFrom = Infinity; // trace files written since this instant (ms) have been read
  const running = new Map<string, Promise<void>>();
  const ctl = new AbortController();
  let failedFirings = 0;
  let invalidFiles = 0;
  let shownErrors = new Set<string>();
  const stamp = () => clock.now().toISOString();

  /** Make sure the firings of every slot at or after `slot` are known. */
  async function readFiredSince(slot: Date): Promise<void> {
    if (slot.getTime() >= scannedFrom) return;
    // A fake clock says nothing about the files' real times: read them all, once.
    for (const key of await firedSlots(tracesDir, clock.fake ? undefined : slot)) fired.add(key);
    scannedFrom = clock.fake ? -Infinity : slot.getTime();
  }

  async function fire(task: ScheduledTask, slot: Date): Promise<void> {
    const label = `${task.name} (slot ${slot.toISOString()})`;
    let sessionId: string | undefined;
    let ended: RunTaskOutcome;
    try {
      const prompt = userText(scheduledTaskText(task.name, slot, task.prompt), "server");
      ended = await runTask({
        ...flagsFor(task, target),
        ...(ctx.root !== undefined ? { root: ctx.root } : {}),
        message: [prompt],
        command: "schedules run",
        ...(task.sessionId === undefined ? { source: "schedule" as const } : {}),
        temporaryWorkspace: task.sessionId === undefined && task.workspace === undefined,
      }, {
        signal: ctl.signal,
        warn: (line) => ctx.io.err(line),
        // Spans go to a collector when one is configured, flushed at the end of each firing.
        telemetry: (agent) => startTelemetry(ctx, agent),
        opened: (session) => {
          sessionId = session.sessionId;
          opts.log(
            `${stamp()} fired ${label} in session ${session.sessionId} (workspace ${session.workspaceDir})`,
          );
        },
      });
    } catch (err) {
      failedFirings++;
      const where = sessionId === undefined ? "" : ` in session ${sessionId}`;
      opts.log(`${stamp()} failed ${label}${where}: ${oneLine(errorMessage(err))}`);
      return;
    }
    const kind = ended.outcome?.kind ?? "failed";
    if (kind !== "completed") failedFirings++;
    opts.log(`${stamp()} finished ${label} in session ${ended.sessionId}: ${kind}`);
  }

  return {
    scheduleDir,
    agentId,
    async tick() {
      if (ctl.signal.aborted) return undefined;
      const { tasks, errors } = await readSchedules(scheduleDir);
      invalidFiles = errors.length;
      const now = new Set(errors.map((e) => e.message));
      for (const m of now) if (!shownErrors.has(m)) opts.warn(m);
      shownErrors = now;
      const at = clock.now();
      let next: Date | undefined;
      for (const task of tasks) {
        if (!task.enabled) continue;
        const upcoming = nextSlot(task, at);
        if (upcoming && (!next || upcoming < next)) next = upcoming;
        const slot = lastSlot(task, at);
        if (slot === undefined || running.has(task.name)) continue;
        await readFiredSince(slot);
        const key = slotKey(task.name, slot);
        if (fired.has(key)) continue;
        if (ctl.signal.aborted) break; // stopped while reading the traces: start nothing more
        fired.add(key);
        const done = fire(task, slot).finally(() => running.delete(task.name));
        running.set(task.name, done);
      }
      return next;
    },
    running: () => running.size,
    async settle() {
      while (running.size > 0) await Promise.allSettled([...running.values()]);
    },
    stop: () => ctl.abort(new DOMException("the scheduler is stopping", "AbortError")),
    problems: () => ({ failedFirings, invalidFiles }),
    close: () => releaseSessionLock(lock),
  };
}
