/**
 * The batch scheduler: runs the tasks of one shard, `parallel` at a time,
 * through a {@linkcode RunOne} (how one task runs is the caller's), and
 * writes the results file. Completed tasks are skipped; a task with a
 * recorded session resumes it. An abort (SIGTERM, SIGINT) starts nothing
 * new and waits for the running tasks, which end `aborted`.
 *
 * @module
 */
import type { BatchTask } from "./task_file.ts";
import type { ResultRecord, ResultsWriter, TaskState, TaskTokens } from "./results.ts";

/** What one task's run came to. */
export interface TaskOutcome {
  outcome: "completed" | "failed" | "aborted";
  session_id?: string;
  trace?: string;
  turns?: number;
  tokens?: TaskTokens;
  cost?: number | null;
  reason?: string;
}

/** How one run is asked for: resume this session, and say when the session exists. */
export interface RunHooks {
  /** The session to resume (an earlier attempt's). */
  resume?: string;
  /** Called once the task's session exists (its id is then recorded). */
  started(sessionId: string): Promise<void>;
}

/** Run one task to its end; `signal` aborts it (the outcome is then `aborted`). */
export type RunOne = (
  task: BatchTask,
  signal: AbortSignal,
  hooks: RunHooks,
) => Promise<TaskOutcome>;

/** What the scheduler tells its caller as it goes. */
export type BatchEvent =
  | { event: "task_skipped"; id: string; session_id?: string }
  | { event: "task_started"; id: string; resume?: string }
  | { event: "task_finished"; record: ResultRecord };

/** Options of {@linkcode runBatch}. */
export interface BatchOptions {
  tasks: BatchTask[];
  /** Per task id, from the results file so far. */
  states: Map<string, TaskState>;
  parallel: number;
  runOne: RunOne;
  results: ResultsWriter;
  signal: AbortSignal;
  /** `index/shards`, recorded on each line. */
  shard?: string;
  onEvent?(e: BatchEvent): void;
  /** The clock (tests). */
  now?: () => number;
}

/** The counts of a batch run. */
export interface BatchSummary {
  total: number;
  completed: number;
  failed: number;
  aborted: number;
  /** Of `completed`: done by an earlier run. */
  skipped: number;
}

function stamp(): string {
  return new Date().toISOString();
}

async function runTask(
  task: BatchTask,
  state: TaskState | undefined,
  opts: BatchOptions,
): Promise<ResultRecord> {
  const now = opts.now ?? (() => performance.now());
  const resume = state?.kind === "resume" ? state.sessionId : undefined;
  const shard = opts.shard !== undefined ? { shard: opts.shard } : {};
  opts.onEvent?.({ event: "task_started", id: task.id, ...(resume ? { resume } : {}) });
  const t0 = now();
  let sessionId = resume;
  let result: TaskOutcome;
  try {
    result = await opts.runOne(task, opts.signal, {
      ...(resume !== undefined ? { resume } : {}),
      started: async (id) => {
        sessionId = id;
        await opts.results.append({
          id: task.id,
          outcome: "started",
          session_id: id,
          ...(resume !== undefined ? { resumed: true } : {}),
          ...shard,
          at: stamp(),
        });
      },
    });
  } catch (err) {
    result = {
      outcome: opts.signal.aborted ? "aborted" : "failed",
      reason: err instanceof Error ? err.message : String(err),
    };
  }
  const sid = result.session_id ?? sessionId;
  const record: ResultRecord = {
    id: task.id,
    ...result,
    ...(sid !== undefined ? { session_id: sid } : {}),
    wall_ms: Math.round(now() - t0),
    ...(resume !== undefined ? { resumed: true } : {}),
    ...shard,
    at: stamp(),
  };
  await opts.results.append(record);
  opts.onEvent?.({ event: "task_finished", record });
  return record;
}

/** Run the tasks; resolves once none is running. */
export async function runBatch(opts: BatchOptions): Promise<BatchSummary> {
  const summary: BatchSummary = {
    total: opts.tasks.length,
    completed: 0,
    failed: 0,
    aborted: 0,
    skipped: 0,
  };
  const queue: BatchTask[] = [];
  for (const t of opts.tasks) {
    const s = opts.states.get(t.id);
    if (s?.kind === "done") {
      summary.completed++;
      summary.skipped++;
      const sid = s.record.session_id;
      opts.onEvent?.({ event: "task_skipped", id: t.id, ...(sid ? { session_id: sid } : {}) });
    } else queue.push(t);
  }
  const worker = async () => {
    for (;;) {
      if (opts.signal.aborted) return;
      const task = queue.shift();
      if (task === undefined) return;
      const r = await runTask(task, opts.states.get(task.id), opts);
      if (r.outcome === "completed") summary.completed++;
      else if (r.outcome === "aborted") summary.aborted++;
      else summary.failed++;
    }
  };
  const n = Math.max(1, Math.min(opts.parallel, queue.length));
  await Promise.all(Array.from({ length: n }, worker));
  // Tasks never started because of an abort count as aborted.
  summary.aborted += queue.length;
  return summary;
}
