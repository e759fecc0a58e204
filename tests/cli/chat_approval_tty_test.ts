// Approvals in an interactive `penguin chat` (raw-mode terminal under tmux):
// `a` remembers a command prefix for the session, `n` takes a note for the
// model, Ctrl-C at the question stops the task and the chat goes on.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, turn } from "../support/model_server.ts";
import { hasTmux } from "../support/tmux.ts";
import { inRoot } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { assertGoodTrace, ofKind } from "../agent/_support.ts";
import { denyWithNote } from "./_approval_pane.ts";
import { expandFirst, inHomePane } from "./_home_pane.ts";

const PROMPT = /\? Approve this tool call\? \[Y\/a\/n\]\s*$/m;

Deno.test({
  name: "chat: a remembers for the session, n sends a note, Ctrl-C at the question stops the task",
  ignore: !hasTmux,
  async fn() {
    await withModelRoot({
      turns: [
        turn.of(item.toolCall("exec_command", { cmd: "touch one.txt" }, { id: "c1" })),
        turn.of(item.toolCall("exec_command", { cmd: "touch two.txt" }, { id: "c2" })),
        turn.of(item.toolCall("write_file", { file_path: "n.txt", content: "n" }, { id: "w" })),
        turn.text("Fine, no notes."),
        turn.of(item.toolCall("exec_command", { cmd: "rm one.txt" }, { id: "c3" })),
        turn.text("Back again."),
      ],
    }, async (sb, server) => {
      await inHomePane(
        sb.workspace,
        inRoot(sb, "chat", "--approve", "always-ask"),
        { NO_COLOR: "1" },
        async (pane) => {
          await pane.waitFor(/^>\s*$/m, "the prompt");
          await pane.type("touch things");
          await pane.keys("Enter");
          await pane.waitFor(PROMPT, "the first question");
          await pane.type("a");
          await pane.keys("Enter");
          let s = await pane.waitFor(
            /write_file n\.txt[\s\S]*\[Y\/a\/n\]\s*$/m,
            "the write question",
          );
          assert.match(s, /^Remembered for this session: commands starting with "touch"$/m);
          assert.match(s, /^✓ approved for this session: commands starting with "touch"$/m);
          assert.match(s, /^ {2}\+ n$/m);
          await denyWithNote(pane, "keep notes out of it");
          await pane.waitFor(/^Fine, no notes\.$/m, "the answer");
          await pane.waitFor(/^\[stats\] .*\n>\s*$/m, "the prompt after the task");
          await pane.type("remove one");
          await pane.keys("Enter");
          await pane.waitFor(/\$ rm one\.txt[\s\S]*\[Y\/a\/n\]\s*$/m, "the rm question");
          await pane.keys("C-c");
          s = await pane.waitFor(/^\[current conversation interrupted\]\n>\s*$/m, "the stop");
          await Deno.stat(join(sb.workspace, "one.txt"));
          await pane.type("go on");
          await pane.keys("Enter");
          // The prompt back after the task's stats: a Ctrl-D sent while the task still ended was
          // lost under load (the chat then never exited).
          s = await pane.waitFor(/^Back again\.\n\[stats\] .*\n>\s*$/m, "the next task");
          console.log(`--- screen: chat approvals ---\n${s}`);
          await pane.keys("C-d");
          s = await pane.waitFor(/^\[exited \d+\]$/m, "chat to exit");
          const sid = /--resume (session-\S+)/.exec(s)![1]!;
          const records = await assertGoodTrace(sb.root, sid);
          const ds = ofKind(records, "approval_decision");
          assert.deepEqual(ds.map((d) => [d.decision, d.by, d.scope, d.note]), [
            ["allow", "user", "session", undefined],
            ["allow", "session_rule", "session", undefined],
            ["deny", "user", "call", "keep notes out of it"],
          ]);
          await Deno.stat(join(sb.workspace, "two.txt"));
          await assert.rejects(Deno.stat(join(sb.workspace, "n.txt")), Deno.errors.NotFound);
          // The request after the stop carries the conversation so far.
          const body = JSON.stringify(server.requests.at(-1)!.body);
          assert.match(body, /keep notes out of it/);
          assert.match(body, /go on/);
        },
        120,
        60,
      );
    });
  },
});

Deno.test({
  name: "chat: /help lists every command, Tab completes one, /status and /cost show the figures",
  ignore: !hasTmux,
  async fn() {
    await withModelRoot({ turns: [turn.text("Hi there.")] }, async (sb) => {
      await inHomePane(
        sb.workspace,
        ["--root", sb.root, "chat", "--workspace", sb.workspace],
        { NO_COLOR: "1" },
        async (pane) => {
          await pane.waitFor(/^>\s*$/m, "the prompt");
          await pane.type("/he");
          await pane.keys("Tab");
          await pane.waitFor(/^> \/help\s*$/m, "Tab completing /help");
          await pane.keys("Enter");
          let s = await pane.waitFor(/^Tab completes a command.*\n>\s*$/m, "the help");
          for (
            const c of ["/help", "/model", "/status", "/cost", "/compact", "/clear", "/goal"]
              .concat(["/skill", "/thinking", "/verbose", "/exit"])
          ) assert.match(s, new RegExp(`^ {2}${c.replace("/", "\\/")}\\b.* {2}\\S`, "m"), c);
          await pane.type("/st");
          await pane.keys("Tab");
          await pane.waitFor(/^> \/status\s*$/m, "Tab completing /status");
          await pane.keys("C-u");
          await pane.type("hello");
          await pane.keys("Enter");
          await pane.waitFor(/^Hi there\.\n\[stats\] .*\n>\s*$/m, "the answer");
          await pane.type("/status");
          await pane.keys("Enter");
          s = await pane.waitFor(/^ {2}context .*\n>\s*$/m, "/status");
          assert.match(s, /^\[status\] model m \(custom\)$/m);
          assert.match(s, new RegExp(`^ {2}workspace ${sb.workspace}$`, "m"));
          assert.match(s, /^ {2}session session-\S+$/m);
          assert.match(s, /^ {2}tokens 120 · cost unknown \(the model has no price\)$/m);
          assert.match(s, /^ {2}context 120$/m);
          await pane.type("/cost");
          await pane.keys("Enter");
          s = await pane.waitFor(/^\[cost\] .*\n>\s*$/m, "/cost");
          assert.match(s, /^\[cost\] unknown \(the model has no price\) so far · tokens 120$/m);
          console.log(`--- screen: chat commands ---\n${s}`);
        },
        120,
        60,
      );
    });
  },
});

Deno.test({
  name: "chat: an edit's output sits under its call as a coloured diff; /expand shows it whole",
  ignore: !hasTmux,
  async fn() {
    await withModelRoot({
      turns: [
        turn.of(item.toolCall("edit_file", {
          file_path: "list.txt",
          old_string: "item",
          new_string: "entry",
          replace_all: true,
        }, { id: "ed1" })),
        turn.text("Renamed."),
      ],
    }, async (sb) => {
      const original = Array.from({ length: 12 }, (_, i) => `item ${i + 1}`).join("\n") + "\n";
      await Deno.writeTextFile(join(sb.workspace, "list.txt"), original);
      await inHomePane(
        sb.workspace,
        ["--root", sb.root, "chat", "--workspace", sb.workspace],
        {},
        async (pane) => {
          await pane.waitFor(/^>\s*$/m, "the prompt");
          await pane.type("rename the items");
          await pane.keys("Enter");
          const s = await pane.waitFor(/^Renamed\.\n\[stats\] .*\n>\s*$/m, "the answer");
          console.log(`--- screen: a task's output with a diff ---\n${s}`);
          // One header line, then the output behind the gutter, collapsed.
          assert.match(
            s,
            /^\[#1\] edit_file list\.txt\n {2}│ Replaced 12 occurrences in "list\.txt"\.\n {2}│ @@ -1,12 \+1,12 @@\n {2}│ -item 1\n {2}│ -item 2\n {2}│ … \d+ more lines \(\/expand #1 for full output\)\n/m,
          );
          assert.doesNotMatch(s, /edit_file -> /);
          const colours = await pane.screen({ escapes: true });
          // (tmux may put other attributes between the colour and the text.)
          const coloured = (code: number, text: string) =>
            new RegExp(`\\x1b\\[${code}m(?:\\x1b\\[\\d+m)*${text.replace("+", "\\+")}`).test(
              colours,
            );
          assert.ok(coloured(31, "-item 1"), "removed lines are red");
          assert.ok(coloured(32, "+entry 12"), "added lines are green");
          const full = await expandFirst(pane, "edit_file");
          for (let i = 1; i <= 12; i++) {
            assert.match(full, new RegExp(`^ {2}│ -item ${i}$`, "m"));
            assert.match(full, new RegExp(`^ {2}│ \\+entry ${i}$`, "m"));
          }
        },
        120,
        80,
      );
    });
  },
});
