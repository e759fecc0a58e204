import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { sampleTrace, sessionId, toJsonl, withTempDir } from "../trace/_support.ts";

const SUMMARY = /^\d+ file\(s\), \d+ record\(s\), \d+ problem\(s\)$/;

function problemLines(stdout: string): string[] {
  return stdout.split("\n").filter((l) => l !== "" && !SUMMARY.test(l));
}

Deno.test("penguin trace validate exits 0 on a clean trace and prints the summary", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const path = join(dir, `${id}_001.jsonl`);
    const trace = sampleTrace(id);
    await Deno.writeTextFile(path, toJsonl(trace));
    const r = await runCli(["trace", "validate", path]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `1 file(s), ${trace.length} record(s), 0 problem(s)\n`);
    assert.equal(r.stderr, "");
  });
});

Deno.test("penguin trace validate exits 1 on a torn trace and prints exactly the torn line", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const path = join(dir, `${id}_001.jsonl`);
    const trace = sampleTrace(id);
    const last = JSON.stringify(trace[trace.length - 1]);
    await Deno.writeTextFile(path, toJsonl(trace.slice(0, -1)) + last.slice(0, last.length - 7));
    const r = await runCli(["trace", "validate", path]);
    assert.equal(r.code, 1);
    const lines = problemLines(r.stdout);
    assert.equal(lines.length, 1, r.stdout);
    assert.ok(lines[0]!.startsWith(`${path}:${trace.length}: torn last line`), lines[0]);
    assert.match(
      r.stdout,
      new RegExp(`\\n1 file\\(s\\), ${trace.length - 1} record\\(s\\), 1 problem\\(s\\)\\n$`),
    );
  });
});

Deno.test("penguin trace validate reports a malformed middle line with its line number", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const path = join(dir, "t.jsonl");
    const trace = sampleTrace(id);
    await Deno.writeTextFile(
      path,
      toJsonl(trace.slice(0, 4)) + '{"timestamp": nope}\n' + toJsonl(trace.slice(4)),
    );
    const r = await runCli(["trace", "validate", path]);
    assert.equal(r.code, 1);
    const lines = problemLines(r.stdout);
    assert.equal(lines.length, 1, r.stdout);
    assert.match(
      lines[0]!,
      new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:5: not valid JSON \\(`),
    );
  });
});

Deno.test("penguin trace validate searches a directory argument and reports per file", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const day = join(dir, "traces", "2026-01-02");
    await Deno.mkdir(day, { recursive: true });
    const trace = sampleTrace(id);
    const good = join(day, `${id}_001.jsonl`);
    const bad = join(day, `${id}_002.jsonl`);
    await Deno.writeTextFile(good, toJsonl(trace));
    await Deno.writeTextFile(bad, toJsonl(trace.slice(1)));
    const r = await runCli(["trace", "validate", join(dir, "traces")]);
    assert.equal(r.code, 1);
    assert.deepEqual(problemLines(r.stdout), [
      `${bad}:1: expected a session_meta as the first record, found a model_msg "text"`,
    ]);
    assert.match(
      r.stdout,
      new RegExp(`2 file\\(s\\), ${2 * trace.length - 1} record\\(s\\), 1 problem\\(s\\)\\n$`),
    );

    const j = await runCli(["trace", "validate", "--json", join(dir, "traces")]);
    assert.equal(j.code, 1);
    const report = JSON.parse(j.stdout);
    assert.equal(report.ok, false);
    assert.deepEqual(report.summary, { files: 2, records: 2 * trace.length - 1, problems: 1 });
    assert.deepEqual(report.files.map((f: { file: string }) => f.file), [good, bad]);
    assert.deepEqual(report.files[1].problems[0], {
      file: bad,
      line: 1,
      kind: "structure",
      reason: 'expected a session_meta as the first record, found a model_msg "text"',
    });
  });
});

Deno.test("penguin trace validate with no paths or a missing path is a usage error (exit 2)", async () => {
  const none = await runCli(["trace", "validate"]);
  assert.equal(none.code, 2);
  assert.equal(none.stdout, "");
  assert.match(
    none.stderr,
    /^penguin: trace validate: give at least one trace file or directory\n/,
  );
  const missing = await runCli(["trace", "validate", "/nonexistent/penguin/traces"]);
  assert.equal(missing.code, 2);
  assert.match(
    missing.stderr,
    /^penguin: trace validate: "\/nonexistent\/penguin\/traces" does not exist\n/,
  );
  const flag = await runCli(["trace", "validate", "--bogus", "x"]);
  assert.equal(flag.code, 2);
});

Deno.test("penguin trace validate --help documents usage, flags and exit codes", async () => {
  const r = await runCli(["trace", "validate", "--help"]);
  assert.equal(r.code, 0);
  for (
    const part of ["Usage: penguin trace validate", "--json", "--strict", "Exit codes:", "Example:"]
  ) {
    assert.ok(r.stdout.includes(part), part);
  }
});
