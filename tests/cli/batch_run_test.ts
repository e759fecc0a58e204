// `penguin batch run` end to end: the CLI as a subprocess, each task a `penguin run`
// subprocess, against the scripted model server.
import assert from "node:assert/strict";
import { join } from "node:path";
import { type RecordedRequest, turn } from "../support/model_server.ts";
import { runCli, spawnCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { parseResults, type ResultRecord } from "../../lib/batch/results.ts";
import { CONTINUE_MESSAGE } from "../../lib/cli/commands/_batch_run_one.ts";
import { assertGoodTrace, waitFor } from "../agent/_support.ts";

/** The whole request as text (every message the model is sent). */
function textOf(req: RecordedRequest): string {
  return JSON.stringify((req.body as { messages?: unknown }).messages ?? "");
}

/**
 * The model: an interrupted task's continuation is answered at once; a
 * prompt with LOOP calls a tool (a max_turns 1 task fails); HOLD stalls
 * until the client goes away; anything else is answered.
 */
function handler(req: RecordedRequest) {
  const text = textOf(req);
  if (text.includes("[batch] This task was interrupted")) return turn.text("continued and done");
  if (text.includes("LOOP")) {
    return turn.toolCall("exec_command", { description: "x", cmd: "true" });
  }
  if (text.includes("HOLD")) return turn.text("never sent", { stall_after: 0 });
  return turn.text("done");
}

async function readRecords(path: string): Promise<ResultRecord[]> {
  return parseResults(await Deno.readTextFile(path));
}

function finals(records: ResultRecord[]): ResultRecord[] {
  return records.filter((r) => r.outcome !== "started");
}

/** The argv of `penguin --root <root> batch run <args…>`. */
const batchRun = (root: string, ...args: string[]): string[] => [
  "--root",
  root,
  "batch",
  "run",
  ...args,
];

Deno.test("batch run: runs every task, records results, and a rerun skips completed tasks and resumes the failed one", async () => {
  await withModelRoot({ handler }, async (sb, server) => {
    const tasks = join(sb.base, "tasks.yaml");
    await Deno.writeTextFile(
      tasks,
      [
        "defaults:",
        "  max_turns: 1",
        "tasks:",
        "  - {id: a, prompt: say hi, workspace: work/a}",
        "  - {id: b, prompt: LOOP forever, workspace: work/b}",
        "  - {id: c, prompt: say bye, workspace: work/c}",
        "",
      ].join("\n"),
    );
    const results = `${tasks}.results.jsonl`;
    const first = await runCli(batchRun(sb.root, tasks, "--parallel", "2", "--json"));
    assert.equal(first.code, 1, first.stderr);
    const events = first.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(events.at(-1), {
      event: "batch_finished",
      total: 3,
      completed: 2,
      failed: 1,
      aborted: 0,
      skipped: 0,
    });
    const one = finals(await readRecords(results));
    assert.deepEqual(one.map((r) => [r.id, r.outcome]).sort(), [
      ["a", "completed"],
      ["b", "failed"],
      ["c", "completed"],
    ]);
    for (const r of one) {
      assert.match(r.session_id ?? "", /^session-/);
      assert.ok(r.trace?.startsWith(sb.root), `trace path ${r.trace}`);
      assert.ok((r.tokens?.total ?? 0) > 0);
      assert.equal(typeof r.wall_ms, "number");
      await assertGoodTrace(sb.root, r.session_id!);
    }
    // The workspaces were created where the task file said.
    assert.ok((await Deno.stat(join(sb.base, "work", "a"))).isDirectory);
    const failed = one.find((r) => r.id === "b")!;
    assert.ok(failed.reason !== undefined && failed.reason !== "", "a failure has a reason");

    const before = server.requests.length;
    const second = await runCli(["--root", sb.root, "batch", "run", tasks, "--parallel", "2"]);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /3 task\(s\): 3 completed \(2 by an earlier run\), 0 failed/);
    // Only b ran again, in its own session, sent the continuation.
    const later = server.requests.slice(before);
    assert.equal(later.length, 1);
    assert.ok(textOf(later[0]!).includes(CONTINUE_MESSAGE));
    assert.ok(textOf(later[0]!).includes("LOOP forever"), "the resumed history is sent");
    const all = finals(await readRecords(results));
    const b = all.filter((r) => r.id === "b");
    assert.deepEqual(b.map((r) => r.outcome), ["failed", "completed"]);
    assert.equal(b[1]!.session_id, failed.session_id);
    assert.equal(b[1]!.resumed, true);
    assert.deepEqual(all.filter((r) => r.outcome === "completed").map((r) => r.id).sort(), [
      "a",
      "b",
      "c",
    ]);
  }, { visible: true });
});

Deno.test("batch run: a bad task file is refused with file:line reasons and nothing runs", async () => {
  await withModelRoot({ handler }, async (sb, server) => {
    const tasks = join(sb.base, "tasks.jsonl");
    await Deno.writeTextFile(
      tasks,
      [
        JSON.stringify({ id: "a", prompt: "hi", workspace: "w/a" }),
        JSON.stringify({ id: "a", prompt: "again", workspace: "w/b" }),
        "{not json",
        JSON.stringify({ id: "c", prompt: "", workspace: "w/c", max_turns: "3" }),
      ].join("\n") + "\n",
    );
    const r = await runCli(["--root", sb.root, "batch", "run", tasks]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, new RegExp(`${tasks}:2: id "a" is used already \\(line 1\\)`));
    assert.match(r.stderr, new RegExp(`${tasks}:3: not JSON`));
    assert.match(r.stderr, new RegExp(`${tasks}:4: prompt: must not be empty`));
    assert.match(r.stderr, new RegExp(`${tasks}:4: max_turns: `));
    assert.equal(server.requests.length, 0);
    await assert.rejects(Deno.stat(`${tasks}.results.jsonl`), Deno.errors.NotFound);
    await assert.rejects(Deno.stat(join(sb.base, "w")), Deno.errors.NotFound);
  }, { visible: true });
});

/**
 * A tasks file under `base` whose first task (`h`) holds its model request open and whose second
 * (`z`) comes after it, and a results path beside it.
 */
async function heldTasks(base: string): Promise<{ tasks: string; results: string }> {
  const tasks = join(base, "tasks.yaml");
  await Deno.writeTextFile(
    tasks,
    "tasks:\n  - {id: h, prompt: HOLD on, workspace: work/h}\n  - {id: z, prompt: later, workspace: work/z}\n",
  );
  return { tasks, results: join(base, "out.jsonl") };
}

Deno.test("batch run: SIGTERM aborts the running task cleanly; the rerun resumes its session", async () => {
  await withModelRoot({ handler }, async (sb, server) => {
    const { tasks, results } = await heldTasks(sb.base);
    const child = spawnCli(batchRun(sb.root, tasks, "--parallel", "1", "--results", results));
    // Signalled once the model request of the held task is open (its session exists by then).
    await waitFor(() => server.requests.length === 1, "the held request");
    child.kill("SIGTERM");
    const out = await child.output();
    assert.equal(out.code, 1, new TextDecoder().decode(out.stderr));
    const recs = await readRecords(results);
    assert.deepEqual(recs.map((r) => [r.id, r.outcome]), [["h", "started"], ["h", "aborted"]]);
    const sid = recs[1]!.session_id!;
    assert.equal(recs[0]!.session_id, sid);
    assert.equal(server.requests.length, 1, "the next task was not started");
    await assertGoodTrace(sb.root, sid);

    const again = await runCli(["--root", sb.root, "batch", "run", tasks, "--results", results]);
    assert.equal(again.code, 0, again.stderr);
    const done = finals(await readRecords(results)).filter((r) => r.outcome === "completed");
    assert.deepEqual(done.map((r) => r.id).sort(), ["h", "z"]);
    assert.equal(done.find((r) => r.id === "h")!.session_id, sid);
  }, { visible: true });
});

Deno.test("batch run: a second run of the same tasks and results file is refused while the first runs", async () => {
  await withModelRoot({ handler }, async (sb, server) => {
    const { tasks, results } = await heldTasks(sb.base);
    const args = ["--root", sb.root, "batch", "run", tasks, "--results", results];
    const first = spawnCli([...args, "--shards", "2", "--index", "0"]);
    await waitFor(() => server.requests.length === 1, "the held request");

    const same = await runCli([...args, "--shards", "2", "--index", "0"]);
    assert.equal(same.code, 1, same.stderr);
    assert.match(same.stderr, /another batch run is running shard 0\/2 of ".*out\.jsonl"/);
    const whole = await runCli(args);
    assert.equal(whole.code, 1, whole.stderr);
    assert.match(whole.stderr, /another batch run is running tasks of/);
    assert.equal(server.requests.length, 1, "neither refused run asked the model");

    // Another shard of the same results file runs beside it.
    const other = await runCli([...args, "--shards", "2", "--index", "1"]);
    assert.equal(other.code, 0, other.stderr);

    first.kill("SIGTERM");
    assert.equal((await first.output()).code, 1);
    const after = await runCli(args);
    assert.equal(after.code, 0, after.stderr);
  }, { visible: true });
});

Deno.test("batch run: a task whose recorded session never got its first record starts again", async () => {
  await withModelRoot({ handler }, async (sb) => {
    const tasks = join(sb.base, "tasks.yaml");
    await Deno.writeTextFile(tasks, "tasks:\n  - {id: k, prompt: say hi, workspace: work/k}\n");
    const results = join(sb.base, "out.jsonl");
    // A pod killed while the task's session was being created: the id was told, the file empty.
    const sid = "session-2026-12-05-00-00-00-0badf00d";
    const dir = join(sb.root, "default_project/agents/default_agent/traces/2026-12-05");
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(join(dir, `${sid}_001.jsonl`), "");
    await Deno.writeTextFile(
      results,
      JSON.stringify({
        id: "k",
        outcome: "started",
        session_id: sid,
        at: new Date().toISOString(),
      }) +
        "\n",
    );
    const r = await runCli(["--root", sb.root, "batch", "run", tasks, "--results", results]);
    assert.equal(r.code, 0, r.stderr);
    const done = finals(await readRecords(results));
    assert.deepEqual(done.map((x) => [x.id, x.outcome]), [["k", "completed"]]);
    assert.notEqual(done[0]!.session_id, sid, "a new session");
    await Deno.remove(join(dir, `${sid}_001.jsonl`)); // the empty file is no trace to validate
    await assertGoodTrace(sb.root, done[0]!.session_id!);
  }, { visible: true });
});
