// The approval question of `penguin run` reads its answer key by key under a
// real terminal (tmux), with stdin the terminal and with stdin a pipe (then
// /dev/tty is set raw with stty): one Escape or Ctrl-C stops the task at
// once, no Enter needed; an arrow key (ESC [ A) is not Escape; the answer is
// drawn as typed and Enter settles it, as in chat; and the terminal is back
// in line mode afterwards (`stty -a` in the pane shows icanon and echo).
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, turn } from "../support/model_server.ts";
import { hasTmux, type Pane, penguinScript, startPane } from "../support/tmux.ts";
import { inRoot } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { assertGoodTrace, ofKind, type Sandbox } from "../agent/_support.ts";

const PROMPT = /\? Approve this tool call\? \[Y\/a\/n\] $/m;
const EXITED = /^\[exited \d+\]$/m;
const STTY_DONE = /^\[stty done\]$/m;

const WRITE = {
  turns: [
    turn.of(item.toolCall("write_file", { file_path: "a.txt", content: "a" }, { id: "a" })),
    turn.text("Wrote it."),
  ],
};

/**
 * Run `penguin run --approve always-ask` in a pane, stdin the terminal or
 * a pipe; after it exits the pane prints `stty -a`.
 */
async function inPane(
  stdin: "tty" | "pipe",
  body: (pane: Pane, sb: Sandbox) => Promise<void>,
): Promise<void> {
  await withModelRoot(WRITE, async (sb) => {
    const script = await penguinScript(
      sb.workspace,
      inRoot(sb, "run", "--sandbox", "off", "--approve", "always-ask", "-m", "Write a."),
      { NO_COLOR: "1" },
      stdin === "pipe" ? { stdinCommand: "echo piped input" } : {},
    );
    // After penguin exits: how the terminal is set.
    const text = await Deno.readTextFile(script.path);
    const withStty = text.replace(
      'echo "[exited $?]"\n',
      'echo "[exited $?]"\nstty -a\necho "[stty done]"\n',
    );
    assert.notEqual(withStty, text, "the pane script changed shape");
    await Deno.writeTextFile(script.path, withStty);
    const pane = await startPane(script.command, 120, 60);
    try {
      await body(pane, sb);
    } finally {
      await pane.close();
      await Deno.remove(script.path).catch(() => {});
    }
  });
}

/** The terminal is in line mode with echo (what the shell expects back). */
function assertRestored(screen: string): void {
  const settings = screen.slice(screen.search(EXITED));
  assert.match(settings, /(^|\s)icanon(\s|$)/m, settings);
  assert.match(settings, /(^|\s)echo(\s|$)/m, settings);
  assert.match(settings, /(^|\s)isig(\s|$)/m, settings);
}

for (const stdin of ["tty", "pipe"] as const) {
  for (const key of ["Escape", "C-c"]) {
    Deno.test({
      name:
        `run (stdin ${stdin}): one ${key} at the question stops the task, no Enter; terminal restored`,
      ignore: !hasTmux,
      async fn() {
        await inPane(stdin, async (pane, sb) => {
          await pane.waitFor(PROMPT, "the question");
          await pane.keys(key);
          const done = await pane.waitFor(STTY_DONE, "run to exit and stty to print");
          assert.match(done, /^\[exited 1\]$/m);
          assert.doesNotMatch(done, /Wrote it/);
          await assert.rejects(Deno.stat(join(sb.workspace, "a.txt")), Deno.errors.NotFound);
          const sid = /--resume (session-\S+)/.exec(done)![1]!;
          const records = await assertGoodTrace(sb.root, sid);
          assert.equal(ofKind(records, "approval_decision").length, 0);
          assert.equal(ofKind(records, "abort").length, 1);
          assertRestored(done);
        });
      },
    });
  }

  Deno.test({
    name: `run (stdin ${stdin}): an arrow key is not Escape; the typed answer shows, Enter settles`,
    ignore: !hasTmux,
    async fn() {
      await inPane(stdin, async (pane, sb) => {
        await pane.waitFor(PROMPT, "the question");
        await pane.keys("Up", "Left");
        await pane.type("y");
        await pane.waitFor(/\[Y\/a\/n\] y$/m, "the typed answer");
        await pane.keys("Enter");
        const done = await pane.waitFor(STTY_DONE, "run to exit and stty to print");
        assert.match(done, /^\[exited 0\]$/m);
        assert.match(done, /Wrote it\./);
        assert.equal(await Deno.readTextFile(join(sb.workspace, "a.txt")), "a");
        const sid = /--resume (session-\S+)/.exec(done)![1]!;
        const [d] = ofKind(await assertGoodTrace(sb.root, sid), "approval_decision");
        assert.equal(d!.decision, "allow");
        assert.equal(d!.by, "user");
        assertRestored(done);
      });
    },
  });
}
