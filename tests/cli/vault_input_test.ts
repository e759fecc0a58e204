// `config vault set` takes the value from standard input (piped, or with
// `--value -`) and, on a terminal, from a prompt that does not echo: the
// secret stays out of the shell history and the process list.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";
import { hasTmux, penguinScript, startPane } from "../support/tmux.ts";
import { loadVault } from "../../lib/state/vault.ts";

const vaultOf = (root: string) =>
  join(root, "default_project", "agents", "default_agent", "agent_state", ".vault.toml");

function vaultSet(root: string, stdin: string | undefined, ...args: string[]) {
  return runCli(
    ["config", "vault", "set", "--root", root, ...args],
    stdin === undefined ? {} : { stdin },
  );
}

Deno.test("config vault set reads the value from piped stdin, without --value or with --value -", async () => {
  await withRoot(async (root) => {
    const piped = await vaultSet(root, "ghp_piped_secret\n", "--key", "TOKEN");
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(piped.stdout, "Saved vault key TOKEN for agent default_agent.\n");
    // The value is never echoed back.
    assert.ok(!(piped.stdout + piped.stderr).includes("ghp_piped_secret"));
    const dash = await vaultSet(root, "with spaces -\r\n", "--key", "DASH", "--value", "-");
    assert.equal(dash.code, 0, dash.stderr);
    // Only one trailing newline is dropped: a value may end in other whitespace or newlines.
    const twoLines = await vaultSet(root, "a\n\n", "--key", "TWO");
    assert.equal(twoLines.code, 0, twoLines.stderr);
    assert.deepEqual(await loadVault(vaultOf(root)), {
      TOKEN: "ghp_piped_secret",
      DASH: "with spaces -",
      TWO: "a\n",
    });
  });
});

Deno.test("config vault set: an empty value on stdin is refused (exit 2) and nothing is written", async () => {
  await withRoot(async (root) => {
    for (const stdin of ["", "\n"]) {
      const r = await vaultSet(root, stdin, "--key", "EMPTY", "--value", "-");
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        /^penguin: The value of EMPTY read from standard input is empty; nothing was stored/,
      );
    }
    await assert.rejects(Deno.stat(vaultOf(root)), Deno.errors.NotFound);
  });
});

Deno.test({
  name:
    "config vault set on a terminal prompts without echo; Backspace edits; Ctrl-C stores nothing",
  ignore: !hasTmux,
  async fn() {
    await withRoot(async (root) => {
      const run = async (keys: (pane: Awaited<ReturnType<typeof startPane>>) => Promise<void>) => {
        const script = await penguinScript(
          root,
          ["config", "vault", "set", "--root", root, "--key", "API_TOKEN"],
          { NO_COLOR: "1" },
        );
        const pane = await startPane(script.command);
        try {
          await pane.waitFor(/Value for API_TOKEN \(not shown\): /, "the prompt");
          await keys(pane);
          return await pane.waitFor(/\[exited \d+\]/, "the exit");
        } finally {
          await pane.close();
          await Deno.remove(script.path);
        }
      };
      const cancelled = await run(async (pane) => {
        await pane.type("half");
        await pane.keys("C-c");
      });
      assert.match(cancelled, /Cancelled: no value of API_TOKEN was entered; nothing was stored/);
      assert.match(cancelled, /\[exited 2\]/);
      assert.ok(!cancelled.includes("half"), cancelled);
      await assert.rejects(Deno.stat(vaultOf(root)), Deno.errors.NotFound);

      const screen = await run(async (pane) => {
        await pane.type("s3cret-valuX");
        await pane.keys("BSpace");
        await pane.type("é");
        await pane.keys("Enter");
      });
      assert.match(screen, /Saved vault key API_TOKEN for agent default_agent\./);
      assert.match(screen, /\[exited 0\]/);
      assert.ok(!screen.includes("s3cret"), `the value is not echoed:\n${screen}`);
      assert.deepEqual(await loadVault(vaultOf(root)), { API_TOKEN: "s3cret-valué" });
    });
  },
});
