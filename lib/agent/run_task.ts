/**
 * `runTask()`: one agent task from start to end, as `penguin run`, the
 * scheduler (`penguin schedules run`) and embedding programs run it. It
 * opens the session (penguin.jsonc applied, a new session or a resumed
 * one, the live telemetry export started when the host gives one), runs
 * the input and then every round of background reports until nothing is
 * left to wait for (or, for a goal, the goal's rounds), disposes of the
 * session and returns how the task ended, as data.
 *
 * The options are plain data; rendering, approvals and diagnostics reach
 * the host through {@linkcode RunTaskIO} callbacks.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import type { CompleteMessage, OmniMessage, ToolCallMessage } from "../protocol/types.ts";
import type { ApprovalVerdict } from "./approval.ts";
import { nextBackgroundReports } from "./background_reports.ts";
import type { GoalResult } from "./goal.ts";
import { type GoalLimits, resolveGoalLimits } from "./goal_limits.ts";
import { type RunOutcome, trackOutcome } from "./outcome.ts";
import type { RunOptions, Session } from "./session.ts";
import { withSkills } from "./skills_block.ts";
import {
  openTaskSession,
  taskRunOptions,
  type TaskSessionOptions,
  type TaskTelemetry,
} from "./task_session.ts";
import type { Agent } from "./agent.ts";

/** The options `penguin run` defaults to, as {@linkcode runTask} does. */
type Defaulted =
  | "workspace"
  | "approve"
  | "sandbox"
  | "network"
  | "grantWritableRoots"
  | "gitWritable";

/**
 * One task: what to run and the options of its session. Left out, the
 * options are `penguin run`'s defaults: the current directory, approvals
 * allow-all, sandbox workspace-write, network off, .git read-only; the
 * workspace's penguin.jsonc narrows them.
 */
export interface RunTaskOptions
  extends Omit<TaskSessionOptions, Defaulted>, Partial<Pick<TaskSessionOptions, Defaulted>> {
  /**
   * The task. A string is the user's text (opened by a `[use_skills]`
   * block when `skills` are named); messages are sent as they are. Only
   * a goal continued from a resumed session (`goal` with `resume`) may
   * leave it out.
   */
  message?: string | CompleteMessage[];
  /** Skill names the task asks for (checked against the agent's skills). */
  skills?: string[];
  /** Run the task as a goal (see `agent/goal.ts`). */
  goal?: boolean;
  /** The goal's token budget (null: unbounded). */
  budget?: number | null;
  /** The goal's round cap. */
  maxRounds?: number;
  /** The data root (default: `PENGUIN_ROOT`, else the default root). */
  root?: string;
  /** Recorded as `session_meta.source` of a new session. */
  source?: "schedule";
  /** Start a new session in a new temporary workspace instead of `workspace`. */
  temporaryWorkspace?: boolean;
  /** The command named in usage and policy messages (default `run`). */
  command?: string;
}

/** How a task reports to its host, and the host's answers. */
export interface RunTaskIO {
  /** Stops the task (it records an `abort` event). */
  signal?: AbortSignal;
  /** Diagnostics, one line each with its newline (default: none). */
  warn?(line: string): void;
  /**
   * Ask someone about a tool call the approval mode does not settle; without
   * it nobody is asked (the mode's own denial reasons apply) and
   * `always-ask` is refused.
   */
  ask?(call: ToolCallMessage): Promise<ApprovalVerdict>;
  /** Called once penguin.jsonc is applied, before the agent opens. */
  beforeOpen?(): Promise<void>;
  /** Start the live span export (see `telemetry.liveTelemetryFor`); shut down after the session. */
  telemetry?(agent: Agent): TaskTelemetry | null | Promise<TaskTelemetry | null>;
  /** The session is open and the task about to start. */
  opened?(session: Session): void | Promise<void>;
  /** Every message of the stream. */
  onMessage?(msg: OmniMessage): void;
  /** Before waiting for `running` background subagents to finish. */
  onWaiting?(running: number): void;
  /** A goal starts: its limits and the tokens earlier runs used. */
  onGoalStart?(start: GoalStart): void;
  /** The task ended (or threw); the session is not disposed yet. */
  ending?(): void;
}

/** The limits a goal starts with. */
export interface GoalStart {
  /** The round cap (0: none). */
  maxRounds: number;
  /** The token budget (undefined: none). */
  budget: number | undefined;
  /** Tokens used by earlier runs of the goal. */
  used: number;
}

/** How a task ended. */
export interface RunTaskOutcome {
  /** The task's session. */
  sessionId: string;
  /** Its trace file (the last one written). */
  tracePath: string;
  /** Its workspace. */
  workspaceDir: string;
  /** A plain task: the last round's outcome (undefined when the stream ended without one). */
  outcome?: RunOutcome;
  /** A goal: how it ended. */
  goal?: GoalResult;
  /** The task completed (a goal: its outcome is `complete`). */
  completed: boolean;
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
  hooks: Pick<RunTaskIO, "onMessage" | "onWaiting"> = {},
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

/** Run the goal's rounds: new from `o.message`, else the resumed session's goal. */
export async function runGoalRounds(
  session: Session,
  o: Pick<RunTaskOptions, "message" | "skills" | "budget" | "maxRounds">,
  runOptions: RunOptions,
  io: RunTaskIO = {},
): Promise<GoalResult | undefined> {
  if (Array.isArray(o.message)) {
    throw new PenguinError(
      "usage",
      "Cannot start a goal from messages: give its objective as text",
    );
  }
  const skills = o.skills ?? [];
  // The goal loop (and GOAL.yaml's parser) is loaded only for a goal.
  const { continueGoal, runGoal, startGoal } = await import("./goal.ts");
  const plan = o.message !== undefined
    ? await startGoal(session, withSkills(o.message, skills))
    : await continueGoal(session);
  if (o.message === undefined) plan.firstBody = withSkills(plan.firstBody, skills);
  const limits: GoalLimits = {
    ...(o.budget !== undefined ? { budget: o.budget } : {}),
    ...(o.maxRounds !== undefined ? { maxRounds: o.maxRounds } : {}),
  };
  io.onGoalStart?.({ ...resolveGoalLimits(limits), used: plan.tokensUsed });
  const goal = runGoal(session, plan, limits, runOptions, {
    ...(io.onWaiting ? { onWaiting: io.onWaiting } : {}),
  });
  for (let r = await goal.next();; r = await goal.next()) {
    if (r.done) return r.value;
    io.onMessage?.(r.value);
  }
}

/** The options with `penguin run`'s defaults filled in (a copy: penguin.jsonc narrows it). */
type FullOptions = RunTaskOptions & Pick<TaskSessionOptions, Defaulted>;

function withDefaults(o: RunTaskOptions): FullOptions {
  return {
    ...o,
    workspace: o.workspace ?? Deno.cwd(),
    approve: o.approve ?? "allow-all",
    sandbox: o.sandbox ?? "workspace-write",
    network: o.network ?? false,
    grantWritableRoots: o.grantWritableRoots ?? false,
    gitWritable: o.gitWritable ?? false,
  };
}

/** Open the task's session; a goal needs a writable sandbox (penguin.jsonc may have narrowed it). */
async function openFor(
  o: FullOptions,
  io: RunTaskIO,
  started: (t: TaskTelemetry) => void,
): Promise<Session> {
  const session = await openTaskSession(o, {
    ...(o.root !== undefined ? { root: o.root } : {}),
    canAsk: io.ask !== undefined,
    ...(o.skills !== undefined ? { skills: o.skills } : {}),
    ...(o.source !== undefined ? { source: o.source } : {}),
    ...(o.command !== undefined ? { command: o.command } : {}),
    ...(o.temporaryWorkspace ? { temporaryWorkspace: true } : {}),
    warn: io.warn ?? (() => {}),
    ...(io.beforeOpen ? { beforeOpen: io.beforeOpen } : {}),
    ...(io.telemetry ? { telemetry: io.telemetry } : {}),
    started,
  });
  if (o.goal && o.sandbox === "read-only") {
    await session.dispose();
    throw new PenguinError(
      "usage",
      "run: --goal needs a writable sandbox: the model marks the goal complete in GOAL.yaml " +
        "in the session scratchpad, which --sandbox read-only makes read-only; " +
        "use --sandbox workspace-write",
    );
  }
  return session;
}

/** Run the opened task: a goal's rounds, or the input and its background-report rounds. */
async function runOpened(
  session: Session,
  o: FullOptions,
  io: RunTaskIO,
): Promise<Pick<RunTaskOutcome, "outcome" | "goal" | "completed">> {
  // Without `ask` nobody is asked: the mode's own denial reasons apply.
  const runOptions = taskRunOptions(o, session, io.signal, io.ask);
  if (o.goal) {
    const goal = await runGoalRounds(session, o, runOptions, io);
    return { ...(goal ? { goal } : {}), completed: goal?.outcome === "complete" };
  }
  if (o.message === undefined) {
    throw new PenguinError("usage", "Cannot run a task without a message");
  }
  const input = typeof o.message === "string" ? withSkills(o.message, o.skills ?? []) : o.message;
  // Subagents started with run_in_background report when they finish: the
  // task waits for them and lets the model read each report.
  const outcome = await driveTask(session, input, runOptions, io);
  return { ...(outcome ? { outcome } : {}), completed: outcome?.kind === "completed" };
}

/**
 * Run one task: open (or resume) its session with the workspace policy
 * applied, run it to the end (background reports, goal rounds), dispose of
 * the session and stop the telemetry export. Errors opening the session
 * (usage, config, a locked session) are thrown as `PenguinError`s.
 */
export async function runTask(
  options: RunTaskOptions,
  io: RunTaskIO = {},
): Promise<RunTaskOutcome> {
  const o = withDefaults(options);
  let telemetry: TaskTelemetry | undefined;
  let session: Session;
  try {
    session = await openFor(o, io, (t) => telemetry = t);
  } catch (err) {
    await telemetry?.shutdown();
    throw err;
  }
  try {
    await io.opened?.(session);
    const ran = await runOpened(session, o, io);
    return {
      sessionId: session.sessionId,
      tracePath: session.tracePath,
      workspaceDir: session.workspaceDir,
      ...ran,
    };
  } finally {
    // Disposed whatever the caller's `ending` throws: a reader of stdout that went away made the
    // renderer's last write throw, and the session's stand-ins, last walk and trace close were
    // skipped (attack round 29 j06).
    try {
      io.ending?.();
    } finally {
      try {
        await session.dispose();
      } finally {
        await telemetry?.shutdown();
      }
    }
  }
}
