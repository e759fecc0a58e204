import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import type { TraceBuilder } from "../inspect/_support.ts";
import { sid, traceBuilder, tracesDay, withTempDir } from "../inspect/_support.ts";

type Builder = TraceBuilder;

// The shared history: a task with one tool call and an answer (5 model messages).
function history(b: Builder): Builder {
  return b.meta().tools().user("list the files")
    .begin().call("exec_command", { cmd: "ls" }, "call_1").approve("call_1").usage(1, 2, 3).end()
    .output("call_1", "a.txt\nb.txt\n")
    .begin().text("There are two files.").usage(1, 2, 3).end()
    .user("now count the lines");
}

Deno.test("penguin trace diff finds where a fork leaves its parent and what each did after", async () => {
  await withTempDir(async (root) => {
    const parentId = sid("aaaa1111");
    const forkId = sid("bbbb2222");
    const parent = history(traceBuilder(parentId))
      .begin().call("exec_command", { cmd: "wc -l a.txt b.txt" }, "call_2").approve("call_2")
      .usage(1, 2, 3).end().output("call_2", "3 total")
      .begin().text("3 lines in total.").usage(1, 2, 3).end();
    const cutLine = history(traceBuilder(parentId)).records.length - 1; // before the 2nd user text
    const fork = history(
      traceBuilder(forkId, {
        meta: {
          lineage: { parent_session_id: parentId, trace_index: 1, line: cutLine, kind: "fork" },
        },
      }),
    );
    // The fork replaced the last user message: drop it and ask something else.
    fork.records.pop();
    fork.user("delete b.txt instead").begin().text("Done.").usage(1, 1, 1).end();
    const day = await tracesDay(root);
    await Deno.writeTextFile(join(day, `${parentId}_001.jsonl`), parent.jsonl());
    await Deno.writeTextFile(join(day, `${forkId}_001.jsonl`), fork.jsonl());

    const r = await runCli(["trace", "diff", "--root", root, parentId, "bbbb2222"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(`^b is a fork of a \\(cut after line ${cutLine} of _001\\)$`, "m"),
    );
    assert.match(r.stdout, /^common prefix: 4 model message\(s\)$/m);
    assert.match(
      r.stdout,
      /^── only in a: 4 model message\(s\) · 2 request\(s\) · 1 tool call\(s\) · tokens 12 ──$/m,
    );
    assert.match(r.stdout, /^ {2}\[5\] user: now count the lines$/m);
    assert.match(r.stdout, /^ {2}\[6\] tool_call exec_command <- \$ wc -l a.txt b.txt$/m);
    assert.match(r.stdout, /^ {2}\[8\] assistant: 3 lines in total\.$/m);
    assert.match(
      r.stdout,
      /^── only in b: 2 model message\(s\) · 1 request\(s\) · 0 tool call\(s\) · tokens 3 ──$/m,
    );
    assert.match(r.stdout, /^ {2}\[5\] user: delete b.txt instead$/m);

    const j = await runCli([
      "trace",
      "diff",
      "--json",
      join(day, `${parentId}_001.jsonl`),
      join(day, `${forkId}_001.jsonl`),
    ]);
    assert.equal(j.code, 1, j.stderr);
    const report = JSON.parse(j.stdout);
    assert.equal(report.common_prefix, 4);
    assert.equal(report.a.session_id, parentId);
    assert.equal(report.b.session_id, forkId);
    assert.deepEqual(report.a.entries.map((e: { kind: string }) => e.kind), [
      "user",
      "tool_call",
      "tool_output",
      "assistant",
    ]);
    // The export shows the same family from both sides.
    const pe = await runCli(["trace", "export", "--root", root, "--format", "json", parentId]);
    assert.equal(pe.code, 0, pe.stderr);
    assert.deepEqual(
      JSON.parse(pe.stdout).family.forks.map((
        f: { session_id: string; relation: string },
      ) => [f.session_id, f.relation]),
      [[forkId, "fork"]],
    );
    const fe = await runCli(["trace", "export", "--root", root, "--format", "json", forkId]);
    assert.deepEqual(JSON.parse(fe.stdout).family.parent, {
      session_id: parentId,
      relation: "parent",
      files: [join(day, `${parentId}_001.jsonl`)],
    });
    assert.deepEqual(report.b.diverged_at, {
      file: join(day, `${forkId}_001.jsonl`),
      line: fork.records.findIndex((m) =>
        m.payload.type === "text" &&
        (m.payload as { text: string }).text === "delete b.txt instead"
      ) + 1,
    });
  });
});

Deno.test("penguin trace diff of a session with itself reports no divergence (exit 0)", async () => {
  await withTempDir(async (dir) => {
    const id = sid("cccc3333");
    const path = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(path, history(traceBuilder(id)).jsonl());
    const r = await runCli(["trace", "diff", path, path]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^common prefix: 5 model message\(s\)$/m);
    assert.match(r.stdout, /^no divergence: the model messages are identical$/m);
    const bad = await runCli(["trace", "diff", path]);
    assert.equal(bad.code, 2);
  });
});

Deno.test({
  name:
    "trace diff of two sessions sharing a 40 MB tool output compares it in place, peak ≤ 300 MB (round 25 C12)",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // Each message's canonical JSON text was built to compare them, and each output split into
    // its lines to count them: a 66 MB record took `trace diff` to 676 MB.
    await withTempDir(async (root) => {
      const big = "line of output\n".repeat(2_700_000); // 40 MB of short lines
      const shared = (b: Builder) =>
        b.meta().tools().user("dump it")
          .begin().call("exec_command", { cmd: "cat big" }, "call_1").usage(1, 2, 3).end()
          .output("call_1", big);
      const a = shared(traceBuilder(sid("cccc3333"))).begin().text("A.").usage(1, 2, 3).end();
      const b = shared(traceBuilder(sid("dddd4444"))).begin().text("B.").usage(1, 2, 3).end();
      const day = await tracesDay(root);
      await Deno.writeTextFile(join(day, `${sid("cccc3333")}_001.jsonl`), a.jsonl());
      await Deno.writeTextFile(join(day, `${sid("dddd4444")}_001.jsonl`), b.jsonl());
      const r = await runCliPeak(["trace", "diff", "--root", root, "cccc3333", "dddd4444"], root);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stdout, /^common prefix: 3 model message\(s\)$/m, r.stdout);
      assert.ok(r.peakBytes <= 300 * 1000 * 1000, `peak ${Math.round(r.peakBytes / 1e6)} MB`);
    });
  },
});
