// A root's own `.git` that a plan renames aside is named in the session's end report (attack round
// 29 i10: the user's repository was renamed without a word). Here a session on ws whose command
// armed ws/sub/.git is killed mid-command; the next session, on ws/sub, finds the dead session's
// record holding ws/sub and its `.git` not as recorded: renamed aside, and said so on stderr.
import assert from "node:assert/strict";
import { join } from "node:path";
import { penguinArgv, penguinEnv, runCli } from "../support/cli.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { exists } from "./_helpers.ts";

Deno.test({
  name: "a root's own .git a plan renames aside is named in the session's end report",
  ignore: Deno.build.os !== "linux",
  async fn() {
    let phase: "crash" | "after" = "crash";
    let after = 0;
    let killed!: () => void;
    const afterKill = new Promise<void>((r) => killed = r);
    const server = await startModelServer({
      handler: async (_req, i) => {
        if (phase === "crash") {
          if (i === 0) {
            return turn.toolCall("exec_command", {
              cmd: "mkdir sub && cd sub && git init -q . && " +
                'git config core.fsmonitor "true" && echo made > ../ready && cat ../hold',
              description: "arm a repository, then wait",
            });
          }
          await afterKill; // penguin is killed mid-command: no answer reaches it
          return turn.text("never read");
        }
        // The next session: one command (its plan looks at the root's own .git), then its answer.
        return (after++) === 0
          ? turn.toolCall("exec_command", { cmd: "true", description: "d" })
          : turn.text("done");
      },
    });
    const sb = await makeRoot(server, { visible: true });
    const ws = sb.workspace;
    try {
      for (const fifo of ["ready", "hold"]) {
        await new Deno.Command("mkfifo", { args: [join(ws, fifo)] }).output();
      }
      const child = new Deno.Command(Deno.execPath(), {
        args: [...penguinArgv(), "--root", sb.root, "run", "--workspace", ws, "-m", "go"],
        cwd: ws,
        env: penguinEnv(),
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
      assert.equal((await Deno.readTextFile(join(ws, "ready"))).trim(), "made");
      child.kill("SIGKILL");
      await child.status;
      killed();
      phase = "after";
      const sub = join(ws, "sub");
      const next = await runCli(["--root", sb.root, "run", "--workspace", sub, "-m", "again"], {
        cwd: sub,
      });
      assert.equal(next.code, 0, next.stderr);
      assert.equal(await exists(join(sub, ".git-disarmed-by-penguin")), true, next.stderr);
      assert.match(next.stderr, /renamed ".*\/sub\/\.git" to ".*\/sub\/\.git-disarmed-by-penguin"/);
    } finally {
      killed();
      await server.close();
      await sb.cleanup();
    }
  },
});
