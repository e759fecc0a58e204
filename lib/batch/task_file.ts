/**
 * The task file of `penguin batch`: a YAML file (`defaults:` for every task,
 * then `tasks:`, a list) or a JSONL file (one task per line). Each task has a
 * unique `id`, a `prompt` and a `workspace` (a directory, created when
 * missing; a relative path resolves against the task file's directory, or
 * the `workspaceRoot` given), and optionally the model pair, `max_turns`,
 * goal mode and its `budget`, `sandbox`, `network`, `skills` and a per-task
 * `timeout` in seconds. A bad file is refused whole: its problems are
 * reported as `file:line: reason` (the first twenty; reading stops there)
 * and nothing runs.
 *
 * @module
 */
import { parseJsonBounded } from "../protocol/bounded_json.ts";
import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import { LineCounter } from "yaml";
import { parseYamlDocument, YAML_MAX_ALIAS_COUNT, YAML_MAX_CHARS } from "../state/bounded_yaml.ts";
import { unknownKeysMessage } from "../state/_config_errors.ts";
import { formatSize } from "../protocol/format_size.ts";
import { readBatchInput } from "./input_file.ts";
import { PenguinError } from "../protocol/errors.ts";
import { SANDBOX_MODES } from "../sandbox/policy.ts";

const JSONL = /\.(jsonl|ndjson)$/i;
/** How many problems of a task file are shown; reading stops at the next. */
const MAX_PROBLEMS = 20;
/**
 * How many tasks a JSON-lines file may hold: each costs its object, its
 * workspace path and its id in the duplicate check (2.1 million short lines
 * fit in 64 MiB). A batch of more runs as several files.
 */
const JSONL_MAX_TASKS = 100_000;
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The settings a task may take from `defaults:`. */
const SETTINGS = {
  provider: z.string().min(1).optional(),
  model_id: z.string().min(1).optional(),
  max_turns: z.number().int().optional(),
  goal: z.boolean().optional(),
  budget: z.number().int().positive().nullable().optional(),
  sandbox: z.enum(SANDBOX_MODES as [string, ...string[]]).optional(),
  network: z.boolean().optional(),
  skills: z.array(z.string().min(1)).optional(),
  timeout: z.number().positive().optional(),
};

const DEFAULTS = z.strictObject(SETTINGS);

const TASK = z.strictObject({
  id: z.string().regex(ID, "must be letters, digits, '.', '_' or '-' (at most 128)"),
  prompt: z.string().trim().min(1, "must not be empty"),
  workspace: z.string().min(1, "must not be empty"),
  ...SETTINGS,
});

const YAML_FILE = z.strictObject({
  defaults: DEFAULTS.optional(),
  tasks: z.array(z.unknown()).min(1, "must list at least one task"),
});

/** One task, its defaults applied and its workspace absolute. */
export interface BatchTask {
  /** Unique in the file. */
  id: string;
  /** The task's message (a goal's objective). */
  prompt: string;
  /** Absolute workspace directory. */
  workspace: string;
  /** Position in the file (0-based): the shard rule uses it. */
  position: number;
  /** Line of the task in the file (1-based). */
  line: number;
  provider?: string;
  model_id?: string;
  max_turns?: number;
  goal?: boolean;
  /** The goal's token budget (null: unbounded). */
  budget?: number | null;
  sandbox?: string;
  network?: boolean;
  skills?: string[];
  /** Seconds before the task is stopped. */
  timeout?: number;
}

/** Where relative workspaces resolve. */
export interface TaskFileOptions {
  /** Base directory of relative workspaces (default: the task file's directory). */
  workspaceRoot?: string;
}

function zodReason(err: z.ZodError): { path: PropertyKey[]; reason: string }[] {
  return err.issues.slice(0, MAX_PROBLEMS + 1).map((i) => ({
    path: i.path,
    reason: `${i.path.length > 0 ? `${i.path.join(".")}: ` : ""}${
      i.code === "unrecognized_keys" ? unknownKeysMessage(i.keys) : i.message
    }`,
  }));
}

function finish(
  raw: z.infer<typeof TASK>,
  position: number,
  line: number,
  base: string,
): BatchTask {
  const task: BatchTask = {
    ...raw,
    workspace: isAbsolute(raw.workspace) ? raw.workspace : resolve(join(base, raw.workspace)),
    position,
    line,
  } as BatchTask;
  return task;
}

/** Problems of the tasks besides their shape: the pair rule, unique ids. */
function crossChecks(task: BatchTask, seen: Map<string, number>): string | null {
  if ((task.provider === undefined) !== (task.model_id === undefined)) {
    return "provider and model_id go together (neither: the project's default model)";
  }
  if (task.budget !== undefined && !task.goal) return "budget needs goal: true";
  const first = seen.get(task.id);
  if (first !== undefined) return `id "${task.id}" is used already (line ${first})`;
  seen.set(task.id, task.line);
  return null;
}

/**
 * The problems found, at most {@linkcode MAX_PROBLEMS} of them: the reader
 * stops at the next one (`full`), so a file of millions of bad lines costs
 * no more than one of twenty.
 */
class Problems {
  readonly shown: string[] = [];
  /** Where reading stopped, once past the bound. */
  stoppedAt: string | undefined;
  get full(): boolean {
    return this.stoppedAt !== undefined;
  }
  /** Note `problem` (found at `where`, e.g. `file:line`); false once past the bound. */
  add(problem: string, where: string): boolean {
    if (this.shown.length >= MAX_PROBLEMS) {
      this.stoppedAt ??= where;
      return false;
    }
    this.shown.push(problem);
    return true;
  }
  get none(): boolean {
    return this.shown.length === 0;
  }
  refuseIfAny(): void {
    if (!this.none) refuse(this.shown, this.stoppedAt);
  }
}

function refuse(problems: string[], stoppedAt?: string): never {
  const more = stoppedAt === undefined
    ? ""
    : `\n… and more: reading stopped at ${stoppedAt}, past ${MAX_PROBLEMS} problems`;
  throw new PenguinError(
    "usage",
    `batch: the task file is not valid; nothing ran:\n${problems.join("\n")}${more}`,
  );
}

/** The lines of `text`, one at a time, with their 1-based numbers. */
function* lines(text: string): Generator<[string, number]> {
  let start = 0;
  for (let line = 1; start <= text.length; line++) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    yield [text.slice(start, end), line];
    start = end + 1;
  }
}

function parseJsonl(file: string, text: string, base: string): BatchTask[] {
  const problems = new Problems();
  const tasks: BatchTask[] = [];
  const seen = new Map<string, number>();
  let count = 0;
  for (const [raw, line] of lines(text)) {
    if (problems.full) break;
    if (raw.trim() === "") continue;
    const at = `${file}:${line}`;
    if (++count > JSONL_MAX_TASKS) {
      problems.add(
        `${at}: more than ${JSONL_MAX_TASKS} tasks; split it into several files`,
        at,
      );
      break;
    }
    let value: unknown;
    try {
      value = parseJsonBounded(raw, at);
    } catch (err) {
      if (err instanceof PenguinError) problems.add(err.message, at);
      else problems.add(`${at}: not JSON (${(err as Error).message})`, at);
      continue;
    }
    const got = TASK.safeParse(value);
    if (!got.success) {
      for (const p of zodReason(got.error)) problems.add(`${at}: ${p.reason}`, at);
      continue;
    }
    const task = finish(got.data, tasks.length, line, base);
    const bad = crossChecks(task, seen);
    if (bad !== null) problems.add(`${at}: ${bad}`, at);
    // Only the ids are kept once the file is known to be bad.
    if (problems.none) tasks.push(task);
  }
  if (problems.none && tasks.length === 0) problems.add(`${file}:1: no tasks`, `${file}:1`);
  problems.refuseIfAny();
  return tasks;
}

function yamlErrors(file: string, doc: ReturnType<typeof parseYamlDocument>): Problems {
  const problems = new Problems();
  for (const e of doc.errors) {
    const at = `${file}:${e.linePos?.[0]?.line ?? 1}`;
    if (e.code === ("MORE_ERRORS" as typeof e.code)) problems.stoppedAt = at;
    else problems.add(`${at}: ${e.message}`, at);
  }
  return problems;
}

function parseYaml(file: string, text: string, base: string): BatchTask[] {
  const counter = new LineCounter();
  let doc: ReturnType<typeof parseYamlDocument>;
  try {
    doc = parseYamlDocument(text, file, { lineCounter: counter });
  } catch (err) {
    // A large batch is better written as JSON lines: bounded per line, not per file.
    if (err instanceof PenguinError) {
      refuse([`${err.message}; write a large batch as JSON lines (.jsonl)`]);
    }
    throw err;
  }
  const lineAt = (offset: number | undefined) => counter.linePos(offset ?? 0).line;
  const nodeLine = (path: PropertyKey[]): number => {
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n) as (string | number)[], true) as
        | { range?: [number, number, number] }
        | undefined;
      if (node && typeof node === "object" && node.range) return lineAt(node.range[0]);
    }
    return 1;
  };
  yamlErrors(file, doc).refuseIfAny();
  const top = YAML_FILE.safeParse(doc.toJS({ maxAliasCount: YAML_MAX_ALIAS_COUNT }));
  if (!top.success) {
    refuse(
      zodReason(top.error).slice(0, MAX_PROBLEMS).map((p) =>
        `${file}:${nodeLine(p.path)}: ${p.reason}`
      ),
    );
  }
  const defaults = top.data.defaults ?? {};
  const problems = new Problems();
  const tasks: BatchTask[] = [];
  const seen = new Map<string, number>();
  for (const [i, value] of top.data.tasks.entries()) {
    if (problems.full) break;
    const line = nodeLine(["tasks", i]);
    const merged = typeof value === "object" && value !== null && !Array.isArray(value)
      ? { ...defaults, ...value }
      : value;
    const got = TASK.safeParse(merged);
    if (!got.success) {
      for (const p of zodReason(got.error)) {
        const where = `tasks[${i}]${p.path.length > 0 ? "." : ": "}`;
        const at = `${file}:${nodeLine(["tasks", i, ...p.path])}`;
        problems.add(`${at}: ${where}${p.reason}`, at);
      }
      continue;
    }
    const task = finish(got.data, i, line, base);
    const bad = crossChecks(task, seen);
    if (bad !== null) problems.add(`${file}:${line}: ${bad}`, `${file}:${line}`);
    tasks.push(task);
  }
  problems.refuseIfAny();
  return tasks;
}

/** Parse a task file's `text` (YAML unless the name ends in `.jsonl`/`.ndjson`). */
export function parseTaskFile(file: string, text: string, opts: TaskFileOptions = {}): BatchTask[] {
  const base = opts.workspaceRoot ?? resolve(file, "..");
  return JSONL.test(file) ? parseJsonl(file, text, base) : parseYaml(file, text, base);
}

/** The largest JSON-lines task file read: each line is bounded as JSON is. */
const JSONL_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Read and parse the task file at `file`: a JSON-lines file of at most 64
 * MiB, a YAML file of at most {@linkcode YAML_MAX_CHARS} bytes (a YAML node
 * costs far more than its bytes; real task files are kilobytes).
 */
export async function loadTaskFile(file: string, opts: TaskFileOptions = {}): Promise<BatchTask[]> {
  const label = "batch: cannot read the task file";
  const limit = JSONL.test(file) ? JSONL_MAX_BYTES : YAML_MAX_CHARS;
  const text = await readBatchInput(
    file,
    label,
    limit,
    "usage",
    `it is larger than ${formatSize(limit)}`,
  );
  if (text === undefined) throw new PenguinError("usage", `${label} "${file}": it does not exist`);
  return parseTaskFile(file, text, opts);
}

/** The tasks of shard `index` of `shards`: those at positions p with p mod shards = index. */
export function selectShard(tasks: BatchTask[], shards: number, index: number): BatchTask[] {
  if (!Number.isInteger(shards) || shards < 1) {
    throw new PenguinError("usage", `batch: --shards must be a positive integer, got ${shards}`);
  }
  if (!Number.isInteger(index) || index < 0 || index >= shards) {
    throw new PenguinError(
      "usage",
      `batch: --index must be between 0 and ${shards - 1} (--shards ${shards}), got ${index}`,
    );
  }
  return tasks.filter((t) => t.position % shards === index);
}
