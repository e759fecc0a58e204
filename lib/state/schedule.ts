/**
 * Scheduled tasks: `agent_state/schedule/<name>.toml`, one task per file.
 *
 * A task has a `prompt`, is `enabled` (default false), starts at `start_at`
 * and repeats every `period` (absent: it runs once) until `end_at`. It
 * either continues an existing session (`session_id`) or starts a new one,
 * in `workspace` with the model pair `provider` + `model_id` (both or
 * neither: neither means the project's default model). Files are parsed
 * with smol-toml and checked with zod; every error names the file and the
 * line.
 *
 * @module
 */
import { isAbsolute, join } from "node:path";
import { TomlDate } from "smol-toml";
import { z } from "zod";
import { errorMessage, PenguinError } from "../protocol/errors.ts";
import { parseTomlText, schemaError, tomlLocator, zodProblems } from "./_config_errors.ts";

/** A task name: the file name without `.toml`. */
export const SCHEDULE_NAME_PATTERN: RegExp = /^[A-Za-z0-9_-]+$/;

/** The shortest period, in milliseconds (5 minutes). */
export const MIN_PERIOD_MS = 5 * 60_000;

/** One scheduled task as read from its file. */
export interface ScheduledTask {
  /** The file name without `.toml`. */
  name: string;
  /** The file it was read from. */
  file: string;
  /** The message sent when a slot fires (after the `[scheduled_task]` block). */
  prompt: string;
  /** Only enabled tasks fire. */
  enabled: boolean;
  /** The first slot. */
  startAt: Date;
  /** The repeat interval in milliseconds; absent for a one-shot task. */
  periodMs?: number;
  /** The period as written (`30m`, `6h`, `1d`). */
  period?: string;
  /** No slot after this instant. */
  endAt?: Date;
  /** Continue this recorded session instead of starting a new one. */
  sessionId?: string;
  /** Workspace of a new session, an absolute path (absent: a new temporary workspace). */
  workspace?: string;
  /** Model pair of a new session (absent: the project's default model). */
  model?: { provider: string; modelId: string };
}

const ISO_INSTANT =
  /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;
const EXPECTED_TIME = "expected an ISO-8601 time with a zone (2026-01-01T09:00:00Z) " +
  "or a TOML date-time (2026-01-01T09:00:00)";

/** An instant from a TOML date-time (a local one is read in this machine's zone) or an ISO string with a zone. */
function toInstant(v: unknown): Date | undefined {
  if (v instanceof TomlDate) {
    if (!v.isDateTime() || !v.isValid()) return undefined;
    // A local date-time carries no zone: new Date() of its text reads it as local time.
    return v.isLocal() ? new Date(v.toISOString()) : new Date(v.getTime());
  }
  if (typeof v === "string" && ISO_INSTANT.test(v.trim())) {
    const d = new Date(v.trim());
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  return undefined;
}

const instant = z.unknown().transform((v, ctx) => {
  const d = toInstant(v);
  if (d === undefined) {
    ctx.addIssue({ code: "custom", message: EXPECTED_TIME, input: v });
    return z.NEVER;
  }
  return d;
});

const PERIOD_UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of a period such as `30m`, `6h` or `1d`; undefined when it is not of that form. */
export function periodMs(period: string): number | undefined {
  const m = /^(\d+)([mhd])$/.exec(period);
  return m ? Number(m[1]) * PERIOD_UNIT_MS[m[2]!]! : undefined;
}

const NON_EMPTY = "expected a non-empty string";
const nonEmpty = z.string({ error: NON_EMPTY }).refine((s) => s.trim() !== "", {
  error: NON_EMPTY,
});

const KEYS = [
  "prompt",
  "enabled",
  "start_at",
  "period",
  "end_at",
  "session_id",
  "workspace",
  "provider",
  "model_id",
];

const taskSchema = z.object({
  prompt: nonEmpty,
  enabled: z.boolean({ error: "expected true or false" }).optional(),
  start_at: instant,
  period: z.string({ error: "expected a period such as 30m, 6h or 1d" })
    .refine((s) => periodMs(s) !== undefined, {
      error: "expected a period such as 30m, 6h or 1d (minutes, hours or days)",
    })
    .refine((s) => (periodMs(s) ?? 0) >= MIN_PERIOD_MS, { error: "expected at least 5m" })
    .optional(),
  end_at: instant.optional(),
  session_id: nonEmpty.optional(),
  workspace: nonEmpty.optional(),
  provider: nonEmpty.optional(),
  model_id: nonEmpty.optional(),
});

/**
 * Parse the text of `<name>.toml` (`file` names it in errors). Throws a
 * config {@linkcode PenguinError} naming the file and line: a syntax error,
 * a missing or ill-typed field, an unknown key, half a model pair,
 * `session_id` with `workspace` or a model pair, `end_at` not after
 * `start_at`.
 */
export function parseScheduledTask(text: string, file: string, name: string): ScheduledTask {
  if (!SCHEDULE_NAME_PATTERN.test(name)) {
    throw new PenguinError(
      "config",
      `Invalid ${JSON.stringify(file)}: the task name ${
        JSON.stringify(name)
      } may only use letters, digits, _ and - (rename the file)`,
    );
  }
  const raw = parseTomlText(text, file);
  const locate = tomlLocator(text);
  const problem = (key: string, message: string) =>
    schemaError(file, [{ path: [key], message }], locate);
  // A misspelt key (enable = true) would silently change the task: refuse it.
  const unknown = Object.keys(raw as Record<string, unknown>).find((k) => !KEYS.includes(k));
  if (unknown !== undefined) {
    throw problem(unknown, `unknown key; expected one of ${KEYS.join(", ")}`);
  }
  const result = taskSchema.safeParse(raw, { reportInput: true });
  if (!result.success) throw schemaError(file, zodProblems(result.error.issues), locate);
  const t = result.data;
  if ((t.provider === undefined) !== (t.model_id === undefined)) {
    const given = t.provider !== undefined ? "provider" : "model_id";
    throw problem(given, "expected provider and model_id together, found only " + given);
  }
  if (t.session_id !== undefined) {
    const other = ["workspace", "provider", "model_id"].find((k) =>
      (t as Record<string, unknown>)[k] !== undefined
    );
    if (other !== undefined) {
      throw problem(
        other,
        `expected no ${other} with session_id (a bound session keeps its own workspace and model)`,
      );
    }
  }
  if (t.workspace !== undefined && !isAbsolute(t.workspace)) {
    throw problem("workspace", `expected an absolute path, found ${JSON.stringify(t.workspace)}`);
  }
  if (t.end_at !== undefined && t.end_at.getTime() <= t.start_at.getTime()) {
    throw problem("end_at", `expected a time after start_at (${t.start_at.toISOString()})`);
  }
  const task: ScheduledTask = {
    name,
    file,
    prompt: t.prompt,
    enabled: t.enabled ?? false,
    startAt: t.start_at,
  };
  if (t.period !== undefined) {
    Object.assign(task, { period: t.period, periodMs: periodMs(t.period) });
  }
  if (t.end_at !== undefined) task.endAt = t.end_at;
  if (t.session_id !== undefined) task.sessionId = t.session_id;
  if (t.workspace !== undefined) task.workspace = t.workspace;
  if (t.provider !== undefined && t.model_id !== undefined) {
    task.model = { provider: t.provider, modelId: t.model_id };
  }
  return task;
}

/** The tasks of a schedule directory, and the files that could not be read. */
export interface ScheduleDir {
  /** Valid tasks, sorted by name. */
  tasks: ScheduledTask[];
  /** One config error per unreadable or invalid `*.toml` file, sorted by file. */
  errors: PenguinError[];
}

/**
 * Read every `<name>.toml` of `dir` (a missing directory has no tasks).
 * A broken file does not hide the others: it is reported in `errors`.
 * Hidden files and other names are skipped.
 */
export async function loadSchedules(dir: string): Promise<ScheduleDir> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.name.endsWith(".toml") && !e.name.startsWith(".") && !e.isDirectory) names.push(e.name);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { tasks: [], errors: [] };
    throw new PenguinError(
      "config",
      `Cannot read the schedule directory ${JSON.stringify(dir)}: ${errorMessage(err)}`,
      { cause: err },
    );
  }
  names.sort();
  const tasks: ScheduledTask[] = [];
  const errors: PenguinError[] = [];
  for (const fileName of names) {
    const file = join(dir, fileName);
    try {
      const text = await Deno.readTextFile(file);
      tasks.push(parseScheduledTask(text, file, fileName.slice(0, -".toml".length)));
    } catch (err) {
      errors.push(
        err instanceof PenguinError ? err : new PenguinError(
          "config",
          `Cannot read ${JSON.stringify(file)}: ${errorMessage(err)}`,
          {
            cause: err,
          },
        ),
      );
    }
  }
  return { tasks, errors };
}
