/**
 * `penguin batch run|k8s|report`: many tasks from one task file (see
 * batch/task_file.ts), on one host or as a Kubernetes Indexed Job. This
 * module parses flags and prints; the work is in lib/batch.
 *
 * @module
 */
import { resolve } from "node:path";
import { PenguinError } from "../../protocol/errors.ts";
import { resolveDataRoot } from "../../state/root.ts";
import { type BatchTask, loadTaskFile, selectShard } from "../../batch/task_file.ts";
import {
  claimBatch,
  openResults,
  readResults,
  type ResultRecord,
  taskStates,
} from "../../batch/results.ts";
import { type BatchEvent, type BatchSummary, runBatch } from "../../batch/scheduler.ts";
import { formatTokens, formatUsd } from "../../display/numbers.ts";
import { escapeControls } from "../../display/terminal_text.ts";
import { bool, type Flag, flagHelp, flagValue, parseDeclared, positiveInteger } from "../args.ts";
import type { Command, CommandContext, Io } from "../command.ts";
import { subprocessRunOne } from "./_batch_run_one.ts";
import { batchK8sCommand } from "./_batch_k8s.ts";
import { batchReportCommand } from "./_batch_report.ts";
import { addSignals } from "./_signals.ts";

/** The default `--parallel`: the CPUs, at most 4. */
export function defaultParallel(): number {
  return Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1));
}

const nonNegativeInteger = (v: string, label: string): number => {
  if (!/^\d+$/.test(v)) {
    throw new PenguinError(
      "usage",
      `${label} must be a non-negative integer, got ${JSON.stringify(v)}`,
    );
  }
  return Number(v);
};

const PARALLEL: Flag<number> = {
  name: "parallel",
  type: "string",
  value: "<n>",
  help: `tasks run at a time (default: the CPUs, at most 4)`,
  parse: positiveInteger,
};
/** `--shards <n>` (shared with `batch k8s`). */
export const SHARDS: Flag<number> = {
  name: "shards",
  type: "string",
  value: "<n>",
  help: "split the tasks into n shards (with --index)",
  parse: positiveInteger,
};
const INDEX: Flag<number> = {
  name: "index",
  type: "string",
  value: "<i>",
  help: "run only shard i: the tasks at positions p with p mod n = i",
  parse: nonNegativeInteger,
};
const RESULTS: Flag = {
  name: "results",
  type: "string",
  value: "<file>",
  help: "the results file (default: <tasks>.results.jsonl)",
};
/** `--workspace-root <dir>` (shared with `batch k8s`). */
export const WORKSPACE_ROOT: Flag = {
  name: "workspace-root",
  type: "string",
  value: "<dir>",
  help: "where relative workspaces resolve (default: the task\nfile's directory)",
};
const JSON_EVENTS: Flag<boolean> = {
  name: "json",
  type: "boolean",
  help:
    "print events as JSONL on stdout: task_started, task_skipped,\ntask_finished, batch_finished",
};

const RUN_FLAGS: readonly Flag<unknown>[] = [
  PARALLEL,
  SHARDS,
  INDEX,
  RESULTS,
  WORKSPACE_ROOT,
  JSON_EVENTS,
];

const RUN_HELP = `Usage: penguin batch run <tasks> [--parallel <n>] [--shards <n> --index <i>]
                         [--results <file>] [--json]

Run every task of a task file, each as its own confined session (a
\`penguin run\` of its own), n at a time.

The task file is YAML (\`defaults:\` for every task, then \`tasks:\`, a list)
or JSONL (a .jsonl file, one task per line). A task has an id (unique), a
prompt and a workspace (a directory, created when missing), and may set
provider and model_id, max_turns, goal and budget, sandbox, network, skills
and timeout (seconds). A bad file is refused whole, each problem as
file:line: reason, and nothing runs.

The results file gets one JSON line per task event, appended atomically: a
"started" line with the session id once the session exists, then the
outcome (completed, failed or aborted) with the session id, trace path,
turns, tokens, cost, wall time and reason. Running the same command again
skips completed tasks and resumes the others in their sessions, so a task
completes at most once. SIGINT and SIGTERM stop the running tasks cleanly
(their traces valid, resumable) and start no new one.

Flags:
${flagHelp(RUN_FLAGS, 28)}

Exit status: 0 every task completed, 1 some did not, 2 usage error.

Example:
  penguin batch run tasks.yaml --parallel 4
  penguin batch run tasks.yaml --shards 10 --index 3 --results /data/r.jsonl
`;

interface Progress {
  done: number;
  running: number;
  failed: number;
  tokens: number;
  cost: number;
  priced: boolean;
}

function progressLine(p: Progress, total: number): string {
  const cost = p.priced ? ` · ${formatUsd(p.cost)}` : "";
  return `[batch] ${p.done}/${total} done · ${p.running} running · ${p.failed} failed · ` +
    `${formatTokens(p.tokens)} tokens${cost}`;
}

function finishedLine(r: ResultRecord): string {
  const what = [
    r.session_id,
    r.turns !== undefined ? `${r.turns} turns` : undefined,
    r.tokens ? `${formatTokens(r.tokens.total)} tokens` : undefined,
    r.reason,
  ].filter((x) => x !== undefined).join(", ");
  return `[batch] ${r.id} ${r.outcome}${what ? ` (${escapeControls(what)})` : ""}\n`;
}

/** How events reach the user: JSONL, a redrawn progress line, or a line per task. */
function reporter(io: Io, json: boolean, total: number): (e: BatchEvent) => void {
  const p: Progress = { done: 0, running: 0, failed: 0, tokens: 0, cost: 0, priced: false };
  const tty = !json && io.errIsTty === true;
  return (e) => {
    if (e.event === "task_skipped") p.done++;
    else if (e.event === "task_started") p.running++;
    else {
      p.running--;
      const r = e.record;
      if (r.outcome === "completed") p.done++;
      else p.failed++;
      p.tokens += r.tokens?.total ?? 0;
      if (typeof r.cost === "number") [p.cost, p.priced] = [p.cost + r.cost, true];
    }
    if (json) io.out(JSON.stringify(e) + "\n");
    else if (tty) io.err(`\r\x1b[K${progressLine(p, total)}`);
    else if (e.event === "task_finished") io.err(finishedLine(e.record));
  };
}

function parseRun(args: string[]) {
  const p = parseDeclared("batch run", args, RUN_FLAGS, 1);
  const file = p.positionals[0];
  if (file === undefined) throw new PenguinError("usage", "batch run: give the task file");
  const shards = flagValue(p, SHARDS);
  const index = flagValue(p, INDEX);
  if ((shards === undefined) !== (index === undefined)) {
    throw new PenguinError("usage", "batch run: --shards and --index go together");
  }
  const root = flagValue(p, WORKSPACE_ROOT);
  return {
    file: resolve(file),
    parallel: flagValue(p, PARALLEL) ?? defaultParallel(),
    shards,
    index,
    results: resolve(flagValue(p, RESULTS) ?? `${file}.results.jsonl`),
    workspaceRoot: root !== undefined ? resolve(root) : undefined,
    json: bool(p, JSON_EVENTS.name),
  };
}

/** A signal's abort for the batch: SIGINT and SIGTERM, where they can be listened to. */
function abortOnSignals(ctl: AbortController): () => void {
  return addSignals(() => ctl.abort(new DOMException("interrupted by a signal", "AbortError")));
}

function summaryLine(s: BatchSummary, results: string): string {
  const skipped = s.skipped > 0 ? ` (${s.skipped} by an earlier run)` : "";
  return `[batch] ${s.total} task(s): ${s.completed} completed${skipped}, ${s.failed} failed, ` +
    `${s.aborted} aborted; results: ${results}\n`;
}

async function run(args: string[], ctx: CommandContext): Promise<number> {
  const f = parseRun(args);
  const all = await loadTaskFile(f.file, f.workspaceRoot ? { workspaceRoot: f.workspaceRoot } : {});
  const tasks = f.shards !== undefined ? selectShard(all, f.shards, f.index!) : all;
  const inside = tasks.find((t) => f.results.startsWith(t.workspace + "/"));
  if (inside) {
    throw new PenguinError(
      "usage",
      `batch run: the results file ${f.results} lies in the workspace of task "${inside.id}" ` +
        `(${inside.workspace}), where its model could rewrite the batch's record; ` +
        "put it elsewhere with --results",
    );
  }
  const root = resolveDataRoot({ root: ctx.root });
  const shard = f.shards !== undefined ? `${f.index}/${f.shards}` : undefined;
  const claim = await claimBatch(f.results, shard);
  try {
    return await runClaimed(f, tasks, root, shard, ctx);
  } finally {
    claim.release();
  }
}

async function runClaimed(
  f: ReturnType<typeof parseRun>,
  tasks: BatchTask[],
  root: string,
  shard: string | undefined,
  ctx: CommandContext,
): Promise<number> {
  const states = taskStates(await readResults(f.results));
  const results = await openResults(f.results);
  const ctl = new AbortController();
  const removeSignals = abortOnSignals(ctl);
  const onEvent = reporter(ctx.io, f.json, tasks.length);
  let summary: BatchSummary;
  try {
    summary = await runBatch({
      tasks,
      states,
      parallel: f.parallel,
      runOne: subprocessRunOne(root),
      results,
      signal: ctl.signal,
      ...(shard !== undefined ? { shard } : {}),
      onEvent,
    });
  } finally {
    removeSignals();
    results.close();
  }
  if (!f.json && ctx.io.errIsTty) ctx.io.err("\n");
  if (f.json) ctx.io.out(JSON.stringify({ event: "batch_finished", ...summary }) + "\n");
  ctx.io.err(summaryLine(summary, f.results));
  return summary.completed === summary.total ? 0 : 1;
}

/** `batch run`. */
export const batchRunCommand: Command = {
  path: ["batch", "run"],
  summary: "run the tasks of a task file, n at a time, resumably",
  help: RUN_HELP,
  run,
};

/** The `batch` commands. */
export const batchCommands: Command[] = [batchRunCommand, batchK8sCommand, batchReportCommand];
