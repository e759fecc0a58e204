// `penguin demo`: a real run loop against the built-in scripted model, no key, as a subprocess
// under the binary's permission set.
import assert from "node:assert/strict";
import { join } from "node:path";
import { readTraceFile } from "../../lib/trace/reader.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { DEMO_GREETING } from "../../lib/models/scripted/mod.ts";
import { type CliResult, runCli } from "../support/cli.ts";

function payloadOf(m: OmniMessage): Record<string, unknown> {
  return m.payload as Record<string, unknown>;
}

/** The trace path the demo prints, checked valid by `penguin trace validate`. */
async function checkDemoRun(r: CliResult, workspace: string): Promise<string> {
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  // The model is labelled as scripted before anything else, and in the run header.
  assert.match(r.stdout.split("\n")[0]!, /^\[scripted\] .*SCRIPTED model/);
  assert.match(r.stdout, /no key and no network are used/);
  assert.match(r.stderr, /^Model: penguin-demo \(scripted\)$/m);
  // The scripted model is gone after the demo: no hint to resume a session that cannot go on.
  assert.doesNotMatch(r.stderr, /--resume/);
  assert.match(r.stdout, /this session cannot be continued/);
  // The whole loop shows: the calls, their outputs, the answer quoting the real output.
  // Numbered #1, #2, #3 in the order of the trace, as trace show numbers them (checked below).
  const tagged = [
    /^\[#1\] exec_command .*ls -la/m,
    /^\[#2\] write_file .*hello\.txt/m,
    /^\[#3\] exec_command .*cat hello\.txt/m,
  ];
  for (const line of tagged) assert.match(r.stdout, line);
  // The command's output sits under its call line, behind the gutter.
  assert.match(r.stdout, new RegExp(`^ {2}│ ${DEMO_GREETING}$`, "m"));
  assert.match(r.stdout, /Done: `cat hello\.txt` printed/);
  assert.equal(await Deno.readTextFile(join(workspace, "hello.txt")), `${DEMO_GREETING}\n`);

  const trace = /^Trace: (\S+\.jsonl)$/m.exec(r.stdout)?.[1];
  assert.ok(trace, `a trace path in:\n${r.stdout}`);
  const validate = await runCli(["trace", "validate", trace]);
  assert.equal(validate.code, 0, validate.stdout + validate.stderr);
  const records = (await readTraceFile(trace)).records.map((x) => x.message);
  const meta = records[0]!;
  assert.equal(meta.type, "session_meta");
  assert.equal(payloadOf(meta).provider, "scripted");
  assert.equal(payloadOf(meta).workspace, await Deno.realPath(workspace));
  const calls = records.filter((m) => m.type === "model_msg" && payloadOf(m).type === "tool_call")
    .map((m) => payloadOf(m).name);
  assert.deepEqual(calls, ["exec_command", "write_file", "exec_command"]);
  const completed = records.filter((m) =>
    m.type === "event_msg" && payloadOf(m).type === "request_end" &&
    payloadOf(m).status === "completed"
  );
  assert.equal(completed.length, 4);
  assert.match(r.stdout, new RegExp(`penguin trace show ${trace.replace(/[.]/g, "\\.")}`));
  const shown = await runCli(["trace", "show", trace]);
  assert.equal(shown.code, 0, shown.stderr);
  for (const line of tagged) assert.match(shown.stdout, line);
  return trace;
}

Deno.test("penguin demo runs the scripted loop in a new temporary directory and keeps its trace", async () => {
  const r = await runCli(["demo"]);
  const dir = /^Everything is in (\S+) \(remove it when done\)\.$/m.exec(r.stdout)?.[1];
  try {
    assert.ok(dir, `the temporary directory in:\n${r.stdout}\n${r.stderr}`);
    const trace = await checkDemoRun(r, join(dir, "workspace"));
    assert.ok(trace.startsWith(join(dir, "data", "demo", "agents", "default_agent", "traces")));
  } finally {
    if (dir) await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("penguin demo --root records the session in that data root under the demo project", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-demo-test-" });
  try {
    const root = join(dir, "data");
    const ws = join(dir, "ws");
    await Deno.mkdir(ws);
    const r = await runCli(["--root", root, "demo", "--workspace", ws]);
    const trace = await checkDemoRun(r, ws);
    assert.ok(trace.startsWith(join(root, "demo", "agents", "default_agent", "traces")));
    assert.doesNotMatch(r.stdout, /Everything is in/);
    const listed = await runCli(["--root", root, "sessions", "list", "--project-id", "demo"]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /penguin-demo/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("penguin demo refuses a --workspace that does not exist, before creating anything", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-demo-test-" });
  try {
    // TMPDIR is where a temporary data root would go: nothing may be left there.
    const r = await runCli(["demo", "--workspace", join(dir, "nope")], { env: { TMPDIR: dir } });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /demo: the workspace is not a directory/);
    assert.deepEqual(await Array.fromAsync(Deno.readDir(dir)), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
