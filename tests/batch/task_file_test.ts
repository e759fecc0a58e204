// The batch task file, shard rule and results file: parsing and appending on real files.
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseTaskFile, selectShard } from "../../lib/batch/task_file.ts";
import { openResults, readResults, taskStates } from "../../lib/batch/results.ts";

Deno.test("a YAML task file applies its defaults and resolves workspaces against its directory", () => {
  const tasks = parseTaskFile(
    "/data/t.yaml",
    "defaults:\n  max_turns: 3\n  network: true\ntasks:\n  - id: a\n    prompt: p\n    workspace: w/a\n" +
      "  - {id: b, prompt: q, workspace: /abs, max_turns: 9, goal: true, budget: 1000}\n",
  );
  assert.deepEqual(tasks.map((t) => [t.id, t.workspace, t.max_turns, t.network, t.line]), [
    ["a", "/data/w/a", 3, true, 5],
    ["b", "/abs", 9, true, 8],
  ]);
  const rooted = parseTaskFile("/data/t.yaml", "tasks:\n  - {id: a, prompt: p, workspace: w}\n", {
    workspaceRoot: "/work",
  });
  assert.equal(rooted[0]!.workspace, "/work/w");
});

Deno.test("a YAML task file's problems name their lines", () => {
  assert.throws(
    () =>
      parseTaskFile(
        "t.yaml",
        "tasks:\n  - id: a\n    prompt: p\n    workspace: w\n  - id: b\n    prompt: q\n" +
          "    workspace: w2\n    sandbox: sideways\n  - {id: c, prompt: r, workspace: w, provider: x}\n",
      ),
    (err: Error) => {
      assert.match(err.message, /^t\.yaml:8: tasks\[1\]\.sandbox: /m);
      assert.match(err.message, /^t\.yaml:9: provider and model_id go together/m);
      return true;
    },
  );
  assert.throws(() => parseTaskFile("t.yaml", "tasks: [\n"), /^t\.yaml:\d+: /m);
  assert.throws(() => parseTaskFile("t.yaml", "defaults: {}\n"), /t\.yaml:1: tasks: /);
});

Deno.test("shard i of n holds the positions p with p mod n = i, and the shards cover every task once", () => {
  const text = Array.from(
    { length: 10 },
    (_, i) => JSON.stringify({ id: `t${i}`, prompt: "p", workspace: "w" }),
  ).join("\n");
  const tasks = parseTaskFile("/x/t.jsonl", text);
  assert.deepEqual(selectShard(tasks, 3, 1).map((t) => t.id), ["t1", "t4", "t7"]);
  const seen = [0, 1, 2].flatMap((i) => selectShard(tasks, 3, i).map((t) => t.id)).sort();
  assert.deepEqual(seen, tasks.map((t) => t.id).sort());
  assert.throws(() => selectShard(tasks, 3, 3), /--index must be between 0 and 2/);
});

Deno.test("the results file: a torn last line is skipped and the next append starts a new line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-batch-results-" });
  try {
    const path = join(dir, "r.jsonl");
    const started = { id: "a", outcome: "started", session_id: "session-1", at: "t" };
    await Deno.writeTextFile(path, JSON.stringify(started) + '\n{"id":"b","outc');
    assert.deepEqual((await readResults(path)).map((r) => r.id), ["a"]);
    const w = await openResults(path);
    await w.append({ id: "b", outcome: "completed", session_id: "session-2", at: "t" });
    w.close();
    const recs = await readResults(path);
    assert.deepEqual(recs.map((r) => [r.id, r.outcome]), [["a", "started"], ["b", "completed"]]);
    const states = taskStates(recs);
    assert.deepEqual(states.get("a"), { kind: "resume", sessionId: "session-1" });
    assert.equal(states.get("b")?.kind, "done");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
