import assert from "node:assert/strict";
import { join } from "node:path";
import { eventMsg, modelMsg, PenguinError, userText } from "../../lib/protocol/mod.ts";
import { formatProblem, openTraceWriter, validateTraceFiles } from "../../lib/trace/mod.ts";
import { meta, sampleTrace, sessionId, toJsonl, withTempDir } from "./_support.ts";
import { PENGUIN_TRACES as FIXTURES, penguinTracesPresent } from "../support/penguin_traces.ts";

Deno.test({
  name: "every PenguinHarness fixture trace validates clean",
  ignore: !penguinTracesPresent,
  async fn() {
    const report = await validateTraceFiles([FIXTURES]);
    assert.deepEqual(report.problems.map(formatProblem), []);
    assert.equal(report.ok, true);
    const names = report.files.map((f) => f.file.slice(FIXTURES.length));
    assert.ok(names.length >= 7 && names.every((n) => n.endsWith(".jsonl")), names.join(", "));
    assert.ok(report.files.every((f) => f.records > 0));
  },
});

Deno.test("what the writer writes, rotated or not, validates clean even with strict names", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const w = await openTraceWriter({ agentDir: dir, sessionId: id });
    for (const m of sampleTrace(id)) await w.append(m);
    // A rotation follows a completed compaction; the new file's head is meta + tool list.
    const compaction = { reason: "turns", mode: "summarize" } as const;
    await w.append(eventMsg({ type: "compaction_begin", ...compaction, context: 132, turns: 1 }));
    await w.append(eventMsg({ type: "compaction_end", ...compaction, status: "completed" }));
    await w.rotate();
    const [head, ...rest] = sampleTrace(id);
    for (const m of [head!, eventMsg({ type: "tool_list_ready", tools: [] }), ...rest]) {
      await w.append(m);
    }
    await w.close();
    const report = await validateTraceFiles([join(dir, "traces")], { strictNames: true });
    assert.deepEqual(report.problems.map(formatProblem), []);
    assert.deepEqual(report.files.map((f) => f.file.slice(-10)), ["_001.jsonl", "_002.jsonl"]);
    assert.equal(report.records, 2 * sampleTrace(id).length + 3);
  });
});

Deno.test("validation requires a session_meta first, and only one", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const trace = sampleTrace(id);
    const noMeta = join(dir, "no-meta.jsonl");
    const twoMetas = join(dir, "two-metas.jsonl");
    const empty = join(dir, "empty.jsonl");
    await Deno.writeTextFile(noMeta, toJsonl(trace.slice(1)));
    await Deno.writeTextFile(twoMetas, toJsonl([...trace, meta(id)]));
    await Deno.writeTextFile(empty, "\n");
    const report = await validateTraceFiles([noMeta, twoMetas, empty]);
    assert.deepEqual(report.problems.map(formatProblem), [
      `${noMeta}:1: expected a session_meta as the first record, found a model_msg "text"`,
      `${twoMetas}:9: expected one session_meta per file (at line 1), found another`,
      `${empty}:1: expected a session_meta as the first record, found no records`,
    ]);
    assert.equal(report.ok, false);
  });
});

Deno.test("validation reports a session-named file whose session_meta is another session", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId("aaaaaaaa");
    const right = join(dir, `${id}_001.jsonl`);
    const wrong = join(dir, `${sessionId("bbbbbbbb")}_002.jsonl`);
    const plain = join(dir, "notes.jsonl");
    for (const p of [right, wrong, plain]) await Deno.writeTextFile(p, toJsonl(sampleTrace(id)));
    const report = await validateTraceFiles([right, wrong, plain]);
    assert.deepEqual(report.problems.map(formatProblem), [
      `${wrong}:1: session_meta.session_id: expected "${
        sessionId("bbbbbbbb")
      }" (from the file name), found "${id}"`,
    ]);
    const strict = await validateTraceFiles([right, plain], { strictNames: true });
    assert.deepEqual(strict.problems.map(formatProblem), [
      `${plain}:1: file name: expected "${id}_NNN.jsonl" (the session_meta's session_id), found "notes.jsonl"`,
    ]);
  });
});

Deno.test("validation reports partial and origin-tagged records", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const path = join(dir, "t.jsonl");
    const partial = modelMsg({
      type: "partial_text",
      role: "assistant",
      event_type: "start",
      text: "",
      stop_reason: "completed",
    });
    const forwarded = eventMsg({ type: "request_begin" }, [sessionId("c0ffee00")]);
    await Deno.writeTextFile(
      path,
      toJsonl([meta(id), modelMsg(userText("hi")), partial, forwarded]),
    );
    const report = await validateTraceFiles([path]);
    assert.deepEqual(report.problems.map((p) => [p.line, p.kind]), [[3, "structure"], [
      4,
      "structure",
    ]]);
    assert.match(report.problems[0]!.reason, /streaming fragment "partial_text"/);
    assert.match(
      report.problems[1]!.reason,
      /^origin: expected no origin .*found an array \["session-/,
    );
    assert.equal(report.records, 4);
  });
});

Deno.test("directories are searched recursively for *.jsonl files, in sorted order", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    await Deno.mkdir(join(dir, "2026-01-02", "deeper"), { recursive: true });
    const files = [
      join(dir, "2026-01-02", "b.jsonl"),
      join(dir, "2026-01-02", "deeper", "a.jsonl"),
      join(dir, "z.jsonl"),
    ];
    for (const f of files) await Deno.writeTextFile(f, toJsonl(sampleTrace(id)));
    await Deno.writeTextFile(join(dir, "2026-01-02", "readme.txt"), "not a trace");
    const report = await validateTraceFiles([dir]);
    assert.deepEqual(report.files.map((f) => f.file), files);
    assert.equal(report.records, 3 * sampleTrace(id).length);
    assert.equal(report.ok, true);
  });
});

Deno.test("validating a path that does not exist is a not_found error", async () => {
  await assert.rejects(
    validateTraceFiles(["/nonexistent/penguin/traces"]),
    (e) =>
      e instanceof PenguinError && e.kind === "not_found" &&
      e.message.includes("/nonexistent/penguin/traces"),
  );
});
