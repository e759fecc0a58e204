// The cross-record and cross-file checks of `trace validate` (lib/trace/validate.ts).
import assert from "node:assert/strict";
import { join } from "node:path";
import { formatProblem, validateTraceFiles } from "../../lib/trace/mod.ts";
import { runCli } from "../support/cli.ts";
import {
  FIXTURES,
  fixturesPresent,
  sid,
  type TraceBuilder,
  traceBuilder,
  tracesDay,
  withTempDir,
} from "../inspect/_support.ts";

const reasons = (list: { line: number; reason: string }[]) =>
  list.map((p) => `${p.line}: ${p.reason}`);

/** The problems of each file a validation read, as `line: reason`. */
const problemsByFile = (r: Awaited<ReturnType<typeof validateTraceFiles>>) =>
  r.files.map((f) => reasons(f.problems));

async function write(path: string, b: TraceBuilder): Promise<string> {
  await Deno.writeTextFile(path, b.jsonl());
  return path;
}

Deno.test({
  name: "every fixture trace passes the session checks with no warnings",
  ignore: !fixturesPresent,
  async fn() {
    const report = await validateTraceFiles([FIXTURES]);
    assert.deepEqual(report.problems.map(formatProblem), []);
    assert.deepEqual(report.warnings.map(formatProblem), []);
  },
});

Deno.test("request_begin and request_end must pair; a request left open by a crash is a warning", async () => {
  await withTempDir(async (dir) => {
    const nested = await write(
      join(dir, "nested.jsonl"),
      traceBuilder(sid("00000001")).meta().user("x").begin().begin().text("y").end(),
    );
    const orphanEnd = await write(
      join(dir, "orphan.jsonl"),
      traceBuilder(sid("00000002")).meta().user("x").end(),
    );
    const crashed = await write(
      join(dir, "crashed.jsonl"),
      traceBuilder(sid("00000003")).meta().tools().user("x").begin().thinking("…"),
    );
    const resumed = await write(
      join(dir, "resumed.jsonl"),
      traceBuilder(sid("00000004")).meta().tools().user("x").begin().user("again").tools().begin()
        .text("ok").end(),
    );
    const r = await validateTraceFiles([nested, orphanEnd, crashed, resumed]);
    assert.deepEqual(problemsByFile(r), [
      ["4: request_begin: the request opened at line 3 has no request_end before this one"],
      ["3: request_end without an open request_begin"],
      [],
      [],
    ]);
    assert.match(
      r.files[2]!.warnings[0]!.reason,
      /^request_begin has no request_end: the process stopped mid-request/,
    );
    assert.equal(r.files[2]!.warnings[0]!.line, 4);
    assert.deepEqual(r.files[3]!.warnings.map((w) => w.line), [4]);
  });
});

Deno.test("every committed tool call is answered exactly once; an interrupted one is a warning", async () => {
  await withTempDir(async (dir) => {
    const missing = await write(
      join(dir, "missing.jsonl"),
      traceBuilder(sid("00000011")).meta().user("x")
        .begin().call("exec_command", { cmd: "a" }, "c1").approve("c1").end()
        .begin().text("no output came").end(),
    );
    const twice = await write(
      join(dir, "twice.jsonl"),
      traceBuilder(sid("00000012")).meta().user("x")
        .begin().call("exec_command", { cmd: "a" }, "c1").approve("c1").output("c1", "one").end()
        .output("c1", "two"),
    );
    const fine = await write(
      join(dir, "fine.jsonl"),
      traceBuilder(sid("00000013")).meta().user("x")
        // a dropped round: its call needs no output
        .begin().call("exec_command", { cmd: "a" }, "c1").end("timeout", {
          attempt: 1,
          retry_in_ms: 2000,
        })
        // a denied call answered inside the request, a normal one after it
        .begin().call("exec_command", { cmd: "b" }, "c2").approve("c2", "deny")
        .output("c2", "Tool call denied by user.", "aborted")
        .call("exec_command", { cmd: "c" }, "c3").approve("c3").end().output("c3", "ok")
        .begin().text("done").end(),
    );
    const interrupted = await write(
      join(dir, "interrupted.jsonl"),
      traceBuilder(sid("00000014")).meta().user("x")
        .begin().call("exec_command", { cmd: "sleep 100" }, "c1").approve("c1").end()
        .abort("interrupted").user("next").begin().text("ok").end()
        .begin().call("exec_command", { cmd: "sleep 100" }, "c2").approve("c2").end(),
    );
    const r = await validateTraceFiles([missing, twice, fine, interrupted]);
    assert.deepEqual(problemsByFile(r), [
      ['4: tool_call "c1" was committed but never answered by a tool_call_output'],
      ['8: tool_call_output: a second output for tool_call_id "c1" (the first is at line 6)'],
      [],
      [],
    ]);
    assert.deepEqual(r.files[2]!.warnings, []);
    assert.deepEqual(r.files[3]!.warnings.map((w) => w.line), [4, 13]);
  });
});

Deno.test("session token totals never decrease, across the files of a session too", async () => {
  await withTempDir(async (dir) => {
    const id = sid("00000021");
    const one = traceBuilder(id).meta().tools().user("x").begin().usage(10, 10, 10).end()
      .compaction();
    const two = traceBuilder(id).meta().tools().user("y").begin().usage(1, 1, 1).end();
    await write(join(dir, `${id}_001.jsonl`), one);
    // The second file restarts the session totals from zero: wrong.
    const second = await write(join(dir, `${id}_002.jsonl`), two);
    const r = await validateTraceFiles([dir]);
    assert.deepEqual(r.problems.map(formatProblem), [
      `${second}:5: token_usage.session.cache_read: expected at least 10 (the session total at ${
        join(dir, `${id}_001.jsonl`)
      }:11), found 1; session totals never decrease`,
    ]);
  });
});

Deno.test("a rotated file must follow a completed compaction and start with meta then tool list, with no gap", async () => {
  await withTempDir(async (dir) => {
    const a = sid("00000031");
    await write(
      join(dir, `${a}_001.jsonl`),
      traceBuilder(a).meta().tools().user("x").begin().end(),
    );
    const a2 = await write(join(dir, `${a}_002.jsonl`), traceBuilder(a).meta().user("y"));
    const b = sid("00000032");
    await write(
      join(dir, `${b}_001.jsonl`),
      traceBuilder(b).meta().tools().user("x").begin().end().compaction(),
    );
    const b3 = await write(join(dir, `${b}_003.jsonl`), traceBuilder(b).meta().tools().user("y"));
    const r = await validateTraceFiles([dir]);
    assert.deepEqual(reasons(r.files.find((f) => f.file === a2)!.problems), [
      `1: rotation: ${a}_001.jsonl must end with a completed compaction_end before ${a}_002.jsonl starts a new context, but its last record (line 5) is an event_msg "request_end"`,
      `2: rotation: expected a tool_list_ready right after the session_meta at the head of ${a}_002.jsonl, found a model_msg "text"`,
    ]);
    assert.deepEqual(reasons(r.files.find((f) => f.file === b3)!.problems), [
      `1: file index: expected _002 after ${b}_001.jsonl (files of a session are numbered without gaps), found _003`,
    ]);
  });
});

Deno.test("subagent pointers must name a child trace in the same traces tree", async () => {
  await withTempDir(async (root) => {
    const parent = sid("00000041");
    const near = sid("00000042"); // another date dir of the same agent
    const far = sid("00000043"); // another agent's traces
    const lost = sid("00000044");
    const day1 = await tracesDay(root, "2026-03-04");
    const day2 = await tracesDay(root, "2026-03-05");
    const other = await tracesDay(root, "2026-03-04", "helper");
    const p = await write(
      join(day1, `${parent}_001.jsonl`),
      traceBuilder(parent).meta().user("x").subagent(near).subagent(far).subagent(lost),
    );
    await write(join(day2, `${near}_001.jsonl`), traceBuilder(near).meta().user("sub"));
    await write(join(other, `${far}_001.jsonl`), traceBuilder(far).meta().user("sub"));
    const r = await validateTraceFiles([p]);
    assert.deepEqual(reasons(r.problems), [
      `5: subagent: no trace of the child session "${lost}" found in the traces directory tree of this file`,
    ]);
  });
});

Deno.test("penguin trace validate prints warnings, counts them, and still exits 0", async () => {
  await withTempDir(async (dir) => {
    const path = await write(
      join(dir, `${sid("00000051")}_001.jsonl`),
      traceBuilder(sid("00000051")).meta().tools().user("x").begin(),
    );
    const r = await runCli(["trace", "validate", path]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.split("\n"), [
      `${path}:4: warning: request_begin has no request_end: the process stopped mid-request (resume drops the request and re-sends its input)`,
      "1 file(s), 4 record(s), 0 problem(s), 1 warning(s)",
      "",
    ]);
    const j = await runCli(["trace", "validate", "--json", path]);
    assert.equal(j.code, 0);
    const report = JSON.parse(j.stdout);
    assert.deepEqual(report.summary, { files: 1, records: 4, problems: 0, warnings: 1 });
    assert.equal(report.files[0].warnings[0].line, 4);
  });
});
