// The Indexed Job contract with real processes: three "pods" (`penguin batch run
// --shards 3 --index i`, each with its own data root) over one task file; one is
// killed with SIGKILL in the middle of a task and started again, as the Job
// controller would. Every task completes exactly once, the killed one by
// resuming its session.
import assert from "node:assert/strict";
import { join } from "node:path";
import { type RecordedRequest, startModelServer, turn } from "../support/model_server.ts";
import { runCli, spawnCli } from "../support/cli.ts";
import { makeRoot, type Sandbox } from "../support/roots.ts";
import { parseResults, type ResultRecord } from "../../lib/batch/results.ts";
import { CONTINUE_MESSAGE } from "../../lib/cli/commands/_batch_run_one.ts";
import { tracesDir, waitFor } from "../agent/_support.ts";
import { validateTraceFiles } from "../../lib/trace/validate.ts";
import { readTraceFile } from "../../lib/trace/reader.ts";
import { listSessionFiles } from "../../lib/trace/paths.ts";

function textOf(req: RecordedRequest): string {
  return JSON.stringify((req.body as { messages?: unknown }).messages ?? "");
}

/** HOLD stalls until the client goes away, unless the task was interrupted and continues. */
function handler(req: RecordedRequest) {
  const text = textOf(req);
  if (text.includes("[batch] This task was interrupted")) return turn.text("continued");
  if (text.includes("HOLD")) return turn.text("never sent", { stall_after: 0 });
  return turn.text("done");
}

async function records(path: string): Promise<ResultRecord[]> {
  try {
    return parseResults(await Deno.readTextFile(path));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
}

/** The first record `pred` accepts, read again every 10 ms; fails after 120 s (a failsafe, not a timing claim). */
async function firstMatch(
  read: () => Promise<ResultRecord[]>,
  pred: (r: ResultRecord) => boolean,
): Promise<ResultRecord> {
  const end = Date.now() + 120_000;
  for (;;) {
    const hit = (await read()).find(pred);
    if (hit) return hit;
    if (Date.now() > end) throw new Error("timed out waiting for a results line");
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("indexed job: three pods, one SIGKILLed mid-task and restarted; every task completes once", async () => {
  const server = await startModelServer({ handler });
  const pods: Sandbox[] = [];
  try {
    for (let i = 0; i < 3; i++) pods.push(await makeRoot(server, { visible: true }));
    const shared = pods[0]!.base;
    const tasks = join(shared, "tasks.yaml");
    // Position 4 (shard 1's second task) holds; shard 1 runs one task at a time.
    const ids = ["t0", "t1", "t2", "t3", "t4", "t5", "t6"];
    await Deno.writeTextFile(
      tasks,
      "tasks:\n" +
        ids.map((id, p) =>
          `  - {id: ${id}, prompt: "${
            p === 4 ? "HOLD the line" : `task ${id}`
          }", workspace: work/${id}}\n`
        ).join(""),
    );
    const resultsOf = (i: number) => join(pods[i]!.root, "batch.results.jsonl");
    const pod = (i: number) => [
      "--root",
      pods[i]!.root,
      "batch",
      "run",
      tasks,
      "--shards",
      "3",
      "--index",
      String(i),
      "--parallel",
      "1",
      "--results",
      resultsOf(i),
    ];
    const killed = spawnCli(pod(1));
    const others = [runCli(pod(0)), runCli(pod(2))];
    // Signalled once t4's session exists and its model request is held open.
    await waitFor(
      () => server.requests.some((r) => textOf(r).includes("HOLD the line")),
      "t4's held request",
    );
    const started = await firstMatch(
      () => records(resultsOf(1)),
      (r) => r.id === "t4" && r.outcome === "started",
    );
    killed.kill("SIGKILL");
    const status = await killed.status;
    assert.equal(status.signal, "SIGKILL");
    await killed.stdout.cancel();
    await killed.stderr.cancel();
    const before = await records(resultsOf(1));
    assert.deepEqual(before.filter((r) => r.id === "t4").map((r) => r.outcome), ["started"]);

    // The Job controller starts the index again.
    const rerun = await runCli(pod(1));
    assert.equal(rerun.code, 0, rerun.stderr);
    for (const r of await Promise.all(others)) assert.equal(r.code, 0, r.stderr);

    const all = (await Promise.all([0, 1, 2].map((i) => records(resultsOf(i))))).flat();
    const completed = all.filter((r) => r.outcome === "completed").map((r) => r.id).sort();
    assert.deepEqual(completed, ids, "every task completed exactly once");
    const t4 = all.filter((r) => r.id === "t4" && r.outcome === "completed");
    assert.equal(t4[0]!.session_id, started.session_id, "t4 resumed its session");
    assert.equal(t4[0]!.resumed, true);
    // The resumed session's trace validates (the killed attempt may leave its request span
    // open: SIGKILL gives no chance to close it) and holds both attempts in one session.
    const report0 = await validateTraceFiles([tracesDir(pods[1]!.root)]);
    assert.deepEqual(report0.problems, []);
    const files = await listSessionFiles(tracesDir(pods[1]!.root), started.session_id!);
    assert.ok(files.length > 0);
    const trace = [];
    for (const f of files) {
      trace.push(...(await readTraceFile(f.path)).records.map((r) => r.message));
    }
    const metas = trace.filter((m) => m.type === "session_meta");
    assert.ok(metas.every((m) => m.payload.session_id === started.session_id));
    const text = JSON.stringify(trace);
    assert.ok(text.includes("HOLD the line"));
    assert.ok(text.includes(CONTINUE_MESSAGE.slice(0, 40)));
    // Each task ran in its own shard's pod.
    for (const r of all) assert.equal(r.shard, `${ids.indexOf(r.id) % 3}/3`);
    // The report merges the three data roots: every task once, t4 in two attempts.
    const report = await runCli(["batch", "report", ...pods.map((p) => p.root), "--json"]);
    assert.equal(report.code, 0, report.stderr);
    const merged = JSON.parse(report.stdout);
    assert.deepEqual([merged.files, merged.tasks, merged.completed], [3, 7, 7]);
    assert.equal(merged.duplicate_completions, 0);
    const t4r = merged.by_task.find((t: { id: string }) => t.id === "t4");
    assert.equal(t4r.attempts, 2);
  } finally {
    await server.close();
    for (const p of pods) await p.cleanup();
  }
});
