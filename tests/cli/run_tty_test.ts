// `penguin run` on a real terminal (tmux): the waiting line and Markdown answers.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "../support/model_server.ts";
import { denoDir, inRoot, penguinArgv, REPO, runCli } from "../support/cli.ts";
import { hasTmux, shellQuote, startPane } from "../support/tmux.ts";
import { makeRoot } from "../agent/_support.ts";
import { withModelRoot } from "../support/roots.ts";

const ANSWER = [
  "# Release notes",
  "",
  "Some **bold** text and `code`.",
  "",
  "> quoted line",
  "",
  "- one",
  "- two",
  "",
  "| Name | Qty |",
  "|------|----:|",
  "| apple | 3 |",
  "",
  "```sh",
  "echo hi",
  "```",
].join("\n");

Deno.test({
  name:
    "run on a terminal shows 'waiting for <provider>/<model>… Ns' until the first token, then the answer as Markdown",
  ignore: !hasTmux,
  async fn() {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const server = await startModelServer({
      handler: async (_req, i) => {
        if (i === 0) await released; // held until the test has seen the waiting line
        return i === 0 ? turn.text(ANSWER) : undefined;
      },
    });
    const sb = await makeRoot(server);
    const home = await Deno.makeTempDir({ prefix: "penguin-tty-home-" });
    const script = join(home, "run.sh");
    const argv = [Deno.execPath(), ...penguinArgv(), "--root", sb.root, "run"];
    argv.push("--workspace", sb.workspace, "-m", "Write release notes.");
    await Deno.writeTextFile(
      script,
      `unset NO_COLOR\nexport HOME=${shellQuote(home)} DENO_DIR=${shellQuote(denoDir())}\n` +
        `cd ${shellQuote(REPO)}\n${argv.map(shellQuote).join(" ")}\n` +
        `echo "[exited $?]"\nsleep 120\n`,
    );
    const pane = await startPane(`bash ${shellQuote(script)}`);
    try {
      await pane.waitFor(/^⠋? ?.*waiting for custom\/m… \d+s/m, "the waiting line");
      release();
      const s = await pane.waitFor(/^\[exited \d+\]$/m, "run to exit");
      assert.match(s, /^\[exited 0\]$/m);
      // The waiting line is gone once the answer arrived.
      assert.doesNotMatch(s, /waiting for/);
      const answer = s.slice(s.indexOf("Release notes"), s.indexOf("[stats]"));
      assert.match(answer, /^Release notes\n/, "the heading without its #");
      assert.match(answer, /^Some bold text and code\.$/m);
      assert.match(answer, /^│ quoted line$/m, "a quote behind a bar, not '> '");
      assert.match(answer, /^• one\n• two$/m);
      assert.match(answer, /^│ Name +│ Qty │$/m);
      assert.match(answer, /^┌─+┬─+┐$/m);
      assert.match(answer, /^ echo hi\s*$/m);
      assert.doesNotMatch(answer, /^#|^> |```|\*\*/m);
      // Code sits on a background colour; the heading is bold.
      const colored = await pane.screen({ escapes: true });
      // deno-lint-ignore no-control-regex
      assert.match(colored, /\x1b\[1;4mRelease notes|\x1b\[1m\x1b\[4mRelease notes/);
      assert.match(colored, /48;5;236/);
      assert.match(s, /^\[stats\] 1 turn · /m);
    } finally {
      await pane.close();
      await server.close();
      await sb.cleanup();
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test("run into a pipe, or under NO_COLOR, prints the Markdown raw and no waiting line", async () => {
  await withModelRoot({ turns: [turn.text(ANSWER)] }, async (sb) => {
    const r = await runCli(inRoot(sb, "run", "-m", "Write release notes."));
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.startsWith(`${ANSWER}\n`), r.stdout);
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(r.stdout + r.stderr, /waiting for|\x1b/);
  });
});
