// Approvals in `penguin run` under a real terminal (tmux), as a person answers
// them: what the call will do is shown before the question (the command, the
// content with secrets masked, the edit's diff), invalid calls are never
// asked about, `a` remembers the same kind of call for the session, `n` takes
// a note for the model, and Ctrl-C or Escape at the question stops the task
// with a valid, resumable trace.
import assert from "node:assert/strict";
import { join } from "node:path";
import { turn } from "../support/model_server.ts";
import { hasTmux, type Pane, penguinScript, startPane } from "../support/tmux.ts";
import { withModelRoot } from "../support/roots.ts";
import { assertGoodTrace, ofKind, requestMessages, type Sandbox } from "../agent/_support.ts";
import type { ModelServer } from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { denyWithNote } from "./_approval_pane.ts";
import { call } from "./_call_turn.ts";

const PROMPT = /\? Approve this tool call\? \[Y\/a\/n\] $/m;

/** Run `penguin run -m <message> --approve always-ask` in a pane; hand it to `body`. */
async function inPane(
  turns: Parameters<typeof withModelRoot>[0],
  message: string,
  body: (pane: Pane, sb: Sandbox, server: ModelServer) => Promise<void>,
  env: Record<string, string> = { NO_COLOR: "1" },
): Promise<void> {
  await withModelRoot(turns, async (sb, server) => {
    const script = await penguinScript(
      sb.workspace,
      inRoot(sb, "run", "--approve", "always-ask", "-m", message),
      env,
    );
    const pane = await startPane(script.command, 120, 60);
    try {
      await body(pane, sb, server);
    } finally {
      await pane.close();
      await Deno.remove(script.path).catch(() => {});
    }
  });
}

const sessionOf = (screen: string) => /--resume (session-\S+)/.exec(screen)![1]!;

Deno.test({
  name: "run approval of a write shows its content with secrets masked, before the question",
  ignore: !hasTmux,
  async fn() {
    const content = ["[db]", "host = example.org", "password = hunter2", "port = 5432"]
      .concat(Array.from({ length: 45 }, (_, i) => `line ${i + 5}`)).join("\n") + "\n";
    await inPane(
      {
        turns: [
          call("write_file", { file_path: "cfg.ini", content }, "w"),
          turn.text("Written."),
        ],
      },
      "Write the config.",
      async (pane, sb) => {
        const s = await pane.waitFor(PROMPT, "the question");
        console.log(`--- screen: approval of a write ---\n${s}`);
        assert.match(
          s,
          /write_file cfg\.ini\n {2}49 lines to write:\n {2}\+ \[db\]\n {2}\+ host = example\.org\n {2}\+ password = \*\*\*\*\n/,
        );
        assert.doesNotMatch(s, /hunter2/);
        assert.match(s, /^ {2}\+ line 40$/m);
        assert.doesNotMatch(s, /^ {2}\+ line 41$/m);
        assert.match(s, /^ {2}… and 9 more lines$/m);
        assert.match(s, /a yes, and don't ask again this session for write_file on "cfg\.ini"/);
        await pane.keys("Enter");
        const done = await pane.waitFor(/^\[exited \d+\]$/m, "run to exit");
        assert.match(done, /^\[exited 0\]$/m);
        assert.equal(await Deno.readTextFile(join(sb.workspace, "cfg.ini")), content);
        const records = await assertGoodTrace(sb.root, sessionOf(done));
        const [d] = ofKind(records, "approval_decision");
        assert.equal(d!.decision, "allow");
        assert.equal(d!.by, "user");
        assert.equal(d!.scope, "call");
      },
    );
  },
});

Deno.test({
  name:
    "run approval of an edit shows its diff (coloured on a colour terminal) before the question",
  ignore: !hasTmux,
  async fn() {
    await inPane(
      {
        turns: [
          call("edit_file", {
            file_path: "notes.txt",
            old_string: "beta",
            new_string: "BETA",
          }, "e"),
          turn.text("Edited."),
        ],
      },
      "Edit the notes.",
      async (pane, sb) => {
        await Deno.writeTextFile(join(sb.workspace, "notes.txt"), "alpha\nbeta\ngamma\n");
        const s = await pane.waitFor(PROMPT, "the question");
        console.log(`--- screen: approval of an edit ---\n${s}`);
        assert.match(
          s,
          /edit_file notes\.txt\n {2}@@ -1,3 \+1,3 @@\n {3}alpha\n {2}-beta\n {2}\+BETA\n {3}gamma\n/,
        );
        const colours = await pane.screen({ escapes: true });
        // (tmux may put other attributes between the colour and the text.)
        const coloured = (code: number, text: string) =>
          new RegExp(`\\x1b\\[${code}m(?:\\x1b\\[\\d+m)*${text.replace("+", "\\+")}`).test(colours);
        assert.ok(coloured(31, "-beta"), colours);
        assert.ok(coloured(32, "+BETA"), colours);
        // The file is unchanged while the question is open.
        assert.equal(
          await Deno.readTextFile(join(sb.workspace, "notes.txt")),
          "alpha\nbeta\ngamma\n",
        );
        await pane.type("y");
        await pane.keys("Enter");
        const done = await pane.waitFor(/^\[exited 0\]$/m, "run to exit");
        console.log(`--- screen: the edit's output ---\n${done}`);
        // The output sits under the call line behind the gutter: no per-line prefixes.
        assert.match(done, /^ {2}│ @@ -1,3 \+1,3 @@\n {2}│ {2}alpha\n {2}│ -beta\n {2}│ \+BETA\n/m);
        assert.doesNotMatch(done, /edit_file -> /);
        assert.equal(
          await Deno.readTextFile(join(sb.workspace, "notes.txt")),
          "alpha\nBETA\ngamma\n",
        );
      },
      {},
    );
  },
});

Deno.test({
  name: "run approval of a command: full command and directory shown; a remembers its prefix",
  ignore: !hasTmux,
  async fn() {
    await inPane(
      {
        turns: [
          call("exec_command", {
            cmd: "printf one > one.txt",
            workdir: "sub",
          }, "x1"),
          call("exec_command", { cmd: "touch first.txt" }, "t1"),
          call("exec_command", { cmd: "touch second.txt" }, "t2"),
          call("exec_command", { cmd: "touch third.txt; touch fourth.txt" }, "t3"),
          turn.text("Done."),
        ],
      },
      "Run things.",
      async (pane, sb) => {
        await Deno.mkdir(join(sb.workspace, "sub"));
        let s = await pane.waitFor(PROMPT, "the first question");
        console.log(`--- screen: approval of a command ---\n${s}`);
        assert.match(s, /^ {2}\$ printf one > one\.txt\n {2}in sub\n/m);
        assert.match(s, /a yes, and don't ask again this session for this exact command in "sub"/);
        await pane.type("y");
        await pane.keys("Enter");
        s = await pane.waitFor(/\$ touch first\.txt[\s\S]*\[Y\/a\/n\] $/m, "the second question");
        assert.match(s, /don't ask again this session for commands starting with "touch"/);
        await pane.type("a");
        await pane.keys("Enter");
        // touch second.txt is covered; the compound command is asked about again.
        s = await pane.waitFor(/\$ touch third\.txt; touch fourth\.txt[\s\S]*\[Y\/a\/n\] $/m, "q3");
        assert.match(s, /^Remembered for this session: commands starting with "touch"$/m);
        assert.match(s, /^✓ approved for this session: commands starting with "touch"$/m);
        await denyWithNote(pane, "use one touch per call");
        const done = await pane.waitFor(/^\[exited \d+\]$/m, "run to exit");
        assert.match(done, /^\[exited 0\]$/m);
        await Deno.stat(join(sb.workspace, "second.txt"));
        await assert.rejects(Deno.stat(join(sb.workspace, "third.txt")), Deno.errors.NotFound);
        const records = await assertGoodTrace(sb.root, sessionOf(done));
        const ds = ofKind(records, "approval_decision");
        assert.deepEqual(ds.map((d) => [d.decision, d.by, d.scope, d.rule, d.note]), [
          ["allow", "user", "call", undefined, undefined],
          ["allow", "user", "session", 'commands starting with "touch"', undefined],
          ["allow", "session_rule", "session", 'commands starting with "touch"', undefined],
          ["deny", "user", "call", undefined, "use one touch per call"],
        ]);
        const outputs = ofKind(records, "tool_call_output");
        const denied = outputs.find((o) => o.tool_call_id === ds[3]!.tool_call_id)!;
        assert.match(String(denied.output), /The user says: use one touch per call/);
      },
    );
  },
});

Deno.test({
  name: "run never asks about a call whose arguments do not validate",
  ignore: !hasTmux,
  async fn() {
    await inPane(
      {
        turns: [
          call("write_file", { file_path: "x.txt" }, "bad"),
          call("write_file", { file_path: "y.txt", content: "y" }, "ok"),
          turn.text("Done."),
        ],
      },
      "Write.",
      async (pane, sb) => {
        const s = await pane.waitFor(PROMPT, "the question");
        // Only the valid call is on screen with a question.
        assert.match(s, /write_file y\.txt/);
        assert.equal(s.match(/Approve this tool call/g)!.length, 1);
        await pane.keys("Enter");
        const done = await pane.waitFor(/^\[exited \d+\]$/m, "run to exit");
        const records = await assertGoodTrace(sb.root, sessionOf(done));
        const first = ofKind(records, "tool_call_output").find((o) =>
          String(o.tool_call_id).endsWith("bad")
        );
        assert.match(String(first?.output), /required argument "content" is missing/);
      },
    );
  },
});

for (const key of ["C-c", "Escape"]) {
  Deno.test({
    name: `run: ${key} at the question stops the task; the trace is valid and resumable`,
    ignore: !hasTmux,
    async fn() {
      await inPane(
        {
          turns: [
            call("write_file", { file_path: "a.txt", content: "a" }, "a"),
            turn.text("Resumed fine."),
          ],
        },
        "Write a.",
        async (pane, sb, server) => {
          await pane.waitFor(PROMPT, "the question");
          await pane.keys(key);
          const done = await pane.waitFor(/^\[exited \d+\]$/m, "run to exit");
          assert.match(done, /^\[exited 1\]$/m);
          assert.doesNotMatch(done, /Resumed fine/);
          await assert.rejects(Deno.stat(join(sb.workspace, "a.txt")), Deno.errors.NotFound);
          const sid = sessionOf(done);
          const records = await assertGoodTrace(sb.root, sid);
          assert.equal(ofKind(records, "approval_decision").length, 0);
          assert.equal(ofKind(records, "abort").length, 1);
          const r = await runCli([
            "--root",
            sb.root,
            "run",
            "--resume",
            sid,
            "--approve",
            "deny-all",
            "-m",
            "go on",
          ]);
          assert.equal(r.code, 0, r.stderr);
          assert.match(r.stdout, /Resumed fine\./);
          assert.ok(requestMessages(server, server.requests.length - 1).length > 2);
        },
      );
    },
  });
}
