/**
 * `penguin batch report`: the results of many pods merged into one view.
 * Each task id counts once: completed when any line says so, else the
 * outcome of its last final line (`failed`, `aborted`), else `started`
 * (its process ended without a final line: killed). Tokens and cost are a
 * task's session totals (a resumed session's line includes the earlier
 * attempts, so the largest is taken); turns and wall time add up over the
 * attempts. Failures are grouped by reason (session ids and numbers
 * blanked, so one cause is one group).
 *
 * @module
 */
import type { Outcome, ResultRecord } from "./results.ts";

/** One task's merged state. */
export interface TaskSummary {
  id: string;
  outcome: Outcome;
  session_id?: string;
  reason?: string;
  attempts: number;
  turns: number;
  tokens: number;
  cost: number | null;
  wall_ms: number;
}

/** The merged report. */
export interface BatchReport {
  /** Results files read. */
  files: number;
  tasks: number;
  completed: number;
  failed: number;
  aborted: number;
  /** Started, with no final line (the process was killed). */
  interrupted: number;
  /** Extra `completed` lines of tasks already completed elsewhere (0 when each ran once). */
  duplicate_completions: number;
  tokens: { input: number; output: number; total: number };
  /** USD of the priced tasks; null when none was priced. */
  cost: number | null;
  /** Tasks whose model has no price. */
  unpriced: number;
  wall_ms: { p50: number; p95: number; total: number };
  failures: { reason: string; count: number; ids: string[] }[];
  by_task: TaskSummary[];
}

/** The `q` quantile (0..1) of `values` by the nearest-rank method (0 when empty). */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1]!;
}

function reasonKey(reason: string): string {
  return reason.replace(/session-[\w-]+/g, "session-…").replace(/\d+(\.\d+)?/g, "N");
}

function mergeTask(id: string, recs: ResultRecord[]): { task: TaskSummary; dup: number } {
  const finals = recs.filter((r) => r.outcome !== "started");
  const completions = finals.filter((r) => r.outcome === "completed");
  const last = completions[0] ?? finals.at(-1) ?? recs.at(-1)!;
  const withTokens = recs.filter((r) => r.tokens !== undefined);
  const top = withTokens.reduce<ResultRecord | undefined>(
    (a, r) => (a === undefined || r.tokens!.total > a.tokens!.total ? r : a),
    undefined,
  );
  const task: TaskSummary = {
    id,
    outcome: last.outcome,
    attempts: recs.filter((r) => r.outcome === "started").length || finals.length,
    turns: finals.reduce((n, r) => n + (r.turns ?? 0), 0),
    tokens: top?.tokens?.total ?? 0,
    cost: typeof top?.cost === "number" ? top.cost : null,
    wall_ms: finals.reduce((n, r) => n + (r.wall_ms ?? 0), 0),
    ...(last.session_id !== undefined ? { session_id: last.session_id } : {}),
    ...(last.reason !== undefined && last.outcome !== "completed" ? { reason: last.reason } : {}),
  };
  return { task, dup: Math.max(0, completions.length - 1) };
}

/** Merge the records of `files` results files. */
export function mergeResults(records: ResultRecord[], files: number): BatchReport {
  const byId = new Map<string, ResultRecord[]>();
  for (const r of records) {
    const list = byId.get(r.id);
    if (list) list.push(r);
    else byId.set(r.id, [r]);
  }
  const report: BatchReport = {
    files,
    tasks: byId.size,
    completed: 0,
    failed: 0,
    aborted: 0,
    interrupted: 0,
    duplicate_completions: 0,
    tokens: { input: 0, output: 0, total: 0 },
    cost: null,
    unpriced: 0,
    wall_ms: { p50: 0, p95: 0, total: 0 },
    failures: [],
    by_task: [],
  };
  const groups = new Map<string, { reason: string; count: number; ids: string[] }>();
  for (const [id, recs] of byId) {
    const { task, dup } = mergeTask(id, recs);
    report.by_task.push(task);
    report.duplicate_completions += dup;
    if (task.outcome === "completed") report.completed++;
    else if (task.outcome === "failed") report.failed++;
    else if (task.outcome === "aborted") report.aborted++;
    else report.interrupted++;
    const top = recs.filter((r) => r.tokens).sort((a, b) => b.tokens!.total - a.tokens!.total)[0];
    if (top?.tokens) {
      report.tokens.input += top.tokens.input;
      report.tokens.output += top.tokens.output;
      report.tokens.total += top.tokens.total;
    }
    if (task.cost !== null) report.cost = (report.cost ?? 0) + task.cost;
    else if (top?.tokens) report.unpriced++;
    if (task.outcome !== "completed") {
      const reason = task.reason ?? (task.outcome === "started" ? "killed before it ended" : "");
      const key = reasonKey(reason);
      const g = groups.get(key) ?? { reason, count: 0, ids: [] };
      g.count++;
      g.ids.push(id);
      groups.set(key, g);
    }
  }
  const walls = report.by_task.map((t) => t.wall_ms);
  report.wall_ms = {
    p50: quantile(walls, 0.5),
    p95: quantile(walls, 0.95),
    total: walls.reduce((a, b) => a + b, 0),
  };
  report.failures = [...groups.values()].sort((a, b) => b.count - a.count);
  return report;
}
