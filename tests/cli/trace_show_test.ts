import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import {
  fixtureFiles,
  fixturesPresent,
  sid,
  traceBuilder,
  withTempDir,
} from "../inspect/_support.ts";

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[/;

Deno.test({
  name: "penguin trace show renders every fixture trace, without ANSI codes when not a terminal",
  ignore: !fixturesPresent,
  async fn() {
    for (const file of fixtureFiles()) {
      const records = Deno.readTextFileSync(file).split("\n").filter((l) => l.trim()).map((l) =>
        JSON.parse(l)
      );
      const firstUser = records.find((m) => m.payload.type === "text" && m.payload.role === "user");
      // NO_COLOR unset: colour still stays off because stdout is a pipe.
      const r = await runCli(["trace", "show", file], { env: { NO_COLOR: "" } });
      assert.equal(r.code, 0, `${file}: ${r.stderr}`);
      assert.ok(r.stdout.startsWith(`session ${records[0].payload.session_id} · `), file);
      const who = firstUser.payload.sender ? `[${firstUser.payload.sender}] ` : "";
      assert.ok(r.stdout.includes(`> ${who}${firstUser.payload.text.split("\n")[0]}`), file);
      const begins = records.filter((m) => m.payload.type === "request_begin").length;
      assert.equal(r.stdout.match(/^── request \d+ · /gm)?.length, begins, file);
      assert.doesNotMatch(r.stdout, ANSI, file);
    }
  },
});

Deno.test({
  name: "penguin trace show --json prints the raw records, one per line",
  ignore: !fixturesPresent,
  async fn() {
    const file = fixtureFiles().find((f) => f.endsWith("02-tool-calls.jsonl"))!;
    const records = Deno.readTextFileSync(file).split("\n").filter((l) => l.trim()).map((l) =>
      JSON.parse(l)
    );
    const r = await runCli(["trace", "show", "--json", file]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split("\n").map((l) => JSON.parse(l)), records);
  },
});

Deno.test({
  name:
    "penguin trace show --children renders the subagent's trace inline, indented, with nested tags",
  ignore: !fixturesPresent,
  async fn() {
    const parent = fixtureFiles().find((f) => f.endsWith("05-subagent-parent.jsonl"))!;
    const plain = await runCli(["trace", "show", parent]);
    assert.match(plain.stdout, /^\[subagent\] session-\S+$/m);
    assert.doesNotMatch(plain.stdout, /\[agent-/);
    const r = await runCli(["trace", "show", "--children", parent]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ {2}> \[parent_agent\] /m);
    assert.match(r.stdout, /^ {2}\[agent-\w{3} #1\] exec_command <- /m);
  },
});

Deno.test("penguin trace show collapses long outputs, --verbose (or the old --full) expands them, --turn starts at a request", async () => {
  await withTempDir(async (dir) => {
    const id = sid("5a0e0001");
    const out = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");
    const b = traceBuilder(id).meta().tools().user("first task")
      .begin().call("exec_command", { cmd: "seq 20" }, "call_x1").approve("call_x1").usage(1, 2, 3)
      .end().output("call_x1", out)
      .begin().end("timeout", { error_message: "socket hang up", attempt: 1, retry_in_ms: 2000 })
      .begin().call("exec_command", { cmd: "rm -rf /" }, "call_x2").approve("call_x2", "deny")
      .output("call_x2", "Tool call denied by user.", "aborted").usage(1, 1, 1).end()
      .begin().text("all done").usage(1, 1, 1).end().abort("interrupted by the user");
    const path = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(path, b.jsonl());

    const r = await runCli(["trace", "show", path]);
    assert.equal(r.code, 0, r.stderr);
    const shown = r.stdout.split("\n").filter((l) => l.startsWith("  │ "));
    assert.deepEqual(
      shown,
      [
        ...["line 1", "line 2", "line 3", "line 4"],
        "… 12 more lines (--verbose for full output)",
        ...["line 17", "line 18", "line 19", "line 20"],
      ].map((l) => `  │ ${l}`),
    );
    assert.match(r.stdout, /^\[#1\] exec_command <- \$ seq 20$/m);
    assert.match(r.stdout, /^✓ \[approved\] \[#1\]$/m);
    assert.match(r.stdout, /^× \[denied\] \[#2\]$/m);
    assert.match(
      r.stdout,
      /^\[retry\] connection to the provider failed \(socket hang up\); retry #1 in 2s… · \d+ms$/m,
    );
    assert.match(r.stdout, /^\[abort\]: interrupted by the user$/m);

    for (const flag of ["--verbose", "--full"]) {
      const full = await runCli(["trace", "show", flag, path]);
      assert.equal(full.code, 0, full.stderr);
      assert.equal(full.stdout.split("\n").filter((l) => l.startsWith("  │ ")).length, 20, flag);
    }
    const help = await runCli(["trace", "show", "--help"]);
    assert.match(help.stdout, /^ {2}--verbose {2,}show tool outputs/m);
    assert.doesNotMatch(help.stdout, /--full/);

    const turn = await runCli(["trace", "show", "--turn", "3", path]);
    assert.equal(turn.code, 0, turn.stderr);
    assert.ok(turn.stdout.startsWith(`session ${id} · `));
    assert.doesNotMatch(turn.stdout, /first task|── request [12] /);
    assert.match(turn.stdout, /^── request 3 · /m);
    assert.match(turn.stdout, /^── request 4 · /m);

    const bad = await runCli(["trace", "show", "--turn", "0", path]);
    assert.equal(bad.code, 2);
  });
});
