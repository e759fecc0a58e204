/**
 * `penguin schedules list|run`: an agent's scheduled tasks
 * (`agent_state/schedule/<name>.toml`) and the scheduler that fires them
 * (see _scheduler.ts for its rules).
 *
 * @module
 */
import { loadSchedules, type ScheduledTask } from "../../state/schedule.ts";
import { lastSlot, nextSlot } from "../../state/schedule_slots.ts";
import { firedSlots, slotKey } from "../../session/scheduled_firings.ts";
import { bool, type Flag, flagHelp, type Parsed, parseDeclared, str } from "../args.ts";
import { AGENT_TARGET, JSON_OUTPUT } from "./_common_flags.ts";
import { type Command, type CommandContext, commandGroup } from "../command.ts";
import { formatTable, printHelp } from "./_config_common.ts";
import {
  agentDirs,
  type AgentTarget,
  type Clock,
  openScheduler,
  RESCAN_MS,
  scheduleClock,
} from "./_scheduler.ts";
import { addSignals } from "./_signals.ts";

const LIST_FLAGS: readonly Flag<unknown>[] = [
  { ...JSON_OUTPUT, help: "print a JSON object instead of a table" },
  ...AGENT_TARGET,
];
const RUN_FLAGS: readonly Flag<unknown>[] = [
  {
    name: "once",
    type: "boolean",
    help: "fire what is due now, wait for those tasks and exit\n(for cron)",
  },
  ...AGENT_TARGET,
];

const FORMAT_HELP = `A task is one file, <name>.toml, in the agent's schedule directory
(<data root>/<project>/agents/<agent>/agent_state/schedule/):

  prompt = "Summarize yesterday's logs into report.md"   # required
  enabled = true                                         # default false
  start_at = 2026-01-01T06:00:00Z   # ISO-8601 time or TOML date-time
  period = "1d"                     # 30m, 6h, 1d (at least 5m); absent: once
  end_at = 2026-12-31T06:00:00Z     # optional, after start_at
  workspace = "/srv/reports"        # absolute; absent: a temporary workspace
  provider = "deepseek"             # provider and model_id together;
  model_id = "deepseek-v4-flash"    #   absent: the project's default model
  # session_id = "session-…"        # or continue a session (no workspace,
                                    #   provider or model_id then)`;

const LIST_HELP = `Usage: penguin schedules list [--json] [--agent-id <id>] [--project-id <id>]

List the agent's scheduled tasks: whether each is enabled, its period, its
next slot ("due" when a slot has come and its firing is not in the traces
yet) and where it runs. A file that cannot be read is reported on stderr
with its line, and the exit code is 1.

${FORMAT_HELP}

Flags:
${flagHelp(LIST_FLAGS, 23)}
`;

const RUN_HELP = `Usage: penguin schedules run [--once] [--agent-id <id>] [--project-id <id>]

Run the agent's scheduler in the foreground: fire the due slot of every
enabled task as an agent task, reading the schedule directory again at
least every 30 seconds (at once on SIGHUP). Each firing starts a new
session (marked source "schedule"; a task with session_id continues that
session) whose first message is a [scheduled_task] block naming the task
and its slot, then the prompt. Tasks run like "penguin run" with its
defaults (approvals allow-all, sandbox workspace-write, network off, the
workspace's penguin.jsonc applied), in this process, side by side.

Each slot fires once: the traces record every firing, and a restarted
scheduler reads them. Missed slots are not replayed: after a pause only the
latest slot fires, once. One line is printed when a firing starts and one
when it ends. SIGTERM or SIGINT aborts the running tasks (each records an
abort in its trace; continue one with "penguin run --resume <session>"),
and the scheduler exits 0. Only one scheduler may serve an agent.

Exit codes: 0, or with --once 1 when a fired task did not complete or a
task file is invalid.

Flags:
${flagHelp(RUN_FLAGS, 23)}
`;

function target(p: Parsed): AgentTarget {
  const projectId = str(p, "project-id");
  const agentId = str(p, "agent-id");
  return {
    ...(projectId !== undefined ? { projectId } : {}),
    ...(agentId !== undefined ? { agentId } : {}),
  };
}

function clockFromEnv(): Clock {
  return scheduleClock(Deno.env.get("PENGUIN_NOW"));
}

interface ListedTask {
  task: ScheduledTask;
  /** The slot to come, or the slot due now (not fired yet). */
  next?: Date;
  due: boolean;
}

function where(task: ScheduledTask): string {
  if (task.sessionId !== undefined) return `session ${task.sessionId}`;
  const model = task.model ? ` · ${task.model.provider}/${task.model.modelId}` : "";
  return `${task.workspace ?? "temporary workspace"}${model}`;
}

async function listCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("schedules list", args, LIST_FLAGS, 0);
  if (bool(p, "help")) return printHelp(ctx, LIST_HELP);
  const clock = clockFromEnv();
  const { scheduleDir, tracesDir, agentId } = await agentDirs(ctx, target(p));
  const { tasks, errors } = await loadSchedules(scheduleDir);
  const now = clock.now();
  const slots = tasks.filter((t) => t.enabled).map((t) => lastSlot(t, now))
    .filter((s): s is Date => s !== undefined);
  const since = slots.length > 0 ? new Date(Math.min(...slots.map((s) => s.getTime()))) : now;
  const fired = slots.length > 0
    ? await firedSlots(tracesDir, clock.fake ? undefined : since)
    : new Set<string>();
  const listed: ListedTask[] = tasks.map((task) => {
    const last = lastSlot(task, now);
    if (task.enabled && last !== undefined && !fired.has(slotKey(task.name, last))) {
      return { task, next: last, due: true };
    }
    const next = nextSlot(task, now);
    return { task, ...(next ? { next } : {}), due: false };
  });
  for (const e of errors) ctx.io.err(`${e.message}\n`);
  if (bool(p, "json")) {
    const out = {
      schedule_dir: scheduleDir,
      schedules: listed.map(({ task: t, next, due }) => ({
        name: t.name,
        file: t.file,
        enabled: t.enabled,
        prompt: t.prompt,
        start_at: t.startAt.toISOString(),
        period: t.period ?? null,
        end_at: t.endAt?.toISOString() ?? null,
        ...(t.sessionId !== undefined ? { session_id: t.sessionId } : {}),
        ...(t.workspace !== undefined ? { workspace: t.workspace } : {}),
        ...(t.model ? { provider: t.model.provider, model_id: t.model.modelId } : {}),
        next_slot: next?.toISOString() ?? null,
        due,
      })),
      errors: errors.map((e) => e.message),
    };
    ctx.io.out(JSON.stringify(out, null, 2) + "\n");
  } else if (tasks.length === 0) {
    ctx.io.out(
      `Agent ${agentId} has no scheduled tasks${
        errors.length > 0 ? " that can be read" : ""
      }. Add one as ${scheduleDir}/<name>.toml (see penguin help schedules list).\n`,
    );
  } else {
    const rows = listed.map(({ task: t, next, due }) => [
      t.name,
      t.enabled ? "yes" : "no",
      t.period ?? "once",
      next ? `${next.toISOString()}${due ? " (due)" : ""}` : "-",
      where(t),
    ]);
    ctx.io.out(formatTable([["NAME", "ENABLED", "PERIOD", "NEXT", "RUNS IN"], ...rows]));
  }
  return errors.length > 0 ? 1 : 0;
}

async function runCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("schedules run", args, RUN_FLAGS, 0);
  if (bool(p, "help")) return printHelp(ctx, RUN_HELP);
  const clock = clockFromEnv();
  const once = bool(p, "once");
  const log = (line: string) => ctx.io.out(`${line}\n`);
  const scheduler = await openScheduler({
    ctx,
    clock,
    ...target(p),
    log,
    warn: (line) => ctx.io.err(`${line}\n`),
  });
  let wake: (() => void) | undefined;
  let stopping = false;
  let rescan = false;
  const removeSignals = addSignals(() => {
    if (stopping) return;
    stopping = true;
    log(
      `${clock.now().toISOString()} stopping: ${scheduler.running()} running task(s) are aborted`,
    );
    scheduler.stop();
    wake?.();
  }, { hangup: false });
  // SIGHUP (systemctl reload): read the schedule directory now.
  const onHangup = () => {
    rescan = true;
    wake?.();
  };
  let hangup = false;
  if (!once) {
    try {
      Deno.addSignalListener("SIGHUP", onHangup);
      hangup = true;
    } catch {
      // no SIGHUP on Windows
    }
  }
  try {
    if (!once) {
      log(
        `${clock.now().toISOString()} started: agent ${scheduler.agentId}, tasks in ${scheduler.scheduleDir}`,
      );
    }
    do {
      rescan = false;
      const next = await scheduler.tick();
      if (once || stopping) break;
      const ms = next ? next.getTime() - clock.now().getTime() : RESCAN_MS;
      await new Promise<void>((resolve) => {
        if (rescan || stopping) return resolve();
        const timer = setTimeout(resolve, Math.max(0, Math.min(RESCAN_MS, ms)));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    } while (!stopping);
    await scheduler.settle();
  } finally {
    removeSignals();
    if (hangup) Deno.removeSignalListener("SIGHUP", onHangup);
    await scheduler.close();
  }
  if (!once) {
    log(`${clock.now().toISOString()} stopped`);
    return 0;
  }
  const { failedFirings, invalidFiles } = scheduler.problems();
  return failedFirings > 0 || invalidFiles > 0 || stopping ? 1 : 0;
}

/** The `schedules` commands. */
export const schedulesCommands: Command[] = commandGroup(["schedules"], [
  ["list", "list an agent's scheduled tasks and their next slot", LIST_HELP, listCommand],
  ["run", "fire an agent's scheduled tasks when they are due (foreground)", RUN_HELP, runCommand],
]);
