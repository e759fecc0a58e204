// A session's `.git` stand-in removed by a command of an enclosing session whose sandbox started
// before it existed (the mount there is detached: attack round 28 e23): the session's running
// command then made a real `.git` with `core.fsmonitor`, and the user's next `git status` ran it.
// Once that command has ended, penguin renames such a `.git` aside (lib/sandbox/root_git_watch.ts),
// before the enclosing session ends, so the host's git runs nothing.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { mkfifo, startRun } from "../support/run_session.ts";
import { hostGit } from "../support/host_git.ts";

Deno.test("a .git made in place of a session's stand-in while its command ran is set aside", async () => {
  const base = await visibleTempDir("penguin-root-git-detach-");
  const ws = join(base, "ws");
  const sub = join(ws, "sub");
  const home = join(base, "home");
  const marker = join(base, "ran-fsmonitor");
  await Deno.mkdir(sub, { recursive: true });
  await Deno.mkdir(home);
  for (const f of ["up_a", "go_a", "removed", "end_a"]) await mkfifo(join(ws, f));
  for (const f of ["up_b", "go_b"]) await mkfifo(join(sub, f));
  let endA!: () => void;
  const aMayEnd = new Promise<void>((r) => endA = r);
  let endB!: () => void;
  const bMayEnd = new Promise<void>((r) => endB = r);
  const bCommandEnded = Promise.withResolvers<void>();
  const seen = { A: 0, B: 0 };
  const server = await startModelServer({
    handler: async (rec) => {
      const who = JSON.stringify(rec.body).includes("A-task") ? "A" : "B";
      const i = seen[who]++;
      if (who === "A" && i === 0) {
        return turn.of(item.toolCall("exec_command", {
          // Its command goes on until B's has been checked: its own walk after it comes later.
          cmd: "echo up > up_a; cat go_a > /dev/null; rmdir sub/.git; echo $? > removed; " +
            "cat end_a > /dev/null",
          yield_time_ms: 1000,
        }, { id: "a1" }));
      }
      if (who === "B" && i === 0) {
        return turn.of(item.toolCall("exec_command", {
          cmd: "echo up > up_b; cat go_b > /dev/null; git init -q . && " +
            `git config core.fsmonitor "touch ${marker}; false" && echo armed`,
          yield_time_ms: 1000,
        }, { id: "b1" }));
      }
      if (who === "A") await aMayEnd;
      if (who === "B") {
        // B's command has ended and its result is in: B's session goes on until released.
        bCommandEnded.resolve();
        await bMayEnd;
      }
      return turn.text("done");
    },
    maxRequests: 20,
  });
  const root = join(base, "data");
  const running: Deno.ChildProcess[] = [];
  try {
    await addServerModel(root, server);
    // A's sandbox starts before B's stand-ins exist; B's mounts them read-only.
    const a = startRun(root, ws, "A-task");
    running.push(a);
    assert.equal(await Deno.readTextFile(join(ws, "up_a")), "up\n");
    const b = startRun(root, sub, "B-task");
    running.push(b);
    assert.equal(await Deno.readTextFile(join(sub, "up_b")), "up\n");
    // A removes B's stand-in (B's mount of it is detached); B's command makes a real .git.
    await Deno.writeTextFile(join(ws, "go_a"), "go\n");
    assert.equal(await Deno.readTextFile(join(ws, "removed")), "0\n");
    await Deno.writeTextFile(join(sub, "go_b"), "go\n");
    // B's command has ended; B and A both still run: no session's last walk has run yet.
    await bCommandEnded.promise;
    assert.equal((await Deno.lstat(join(sub, ".git-disarmed-by-penguin"))).isDirectory, true);
    const status = await hostGit(home, sub, ["status"]);
    assert.equal(await Deno.lstat(marker).then(() => true, () => false), false, status.out);
    endB();
    const outB = await b.output();
    await Deno.writeTextFile(join(ws, "end_a"), "end\n");
    assert.equal(outB.code, 0, new TextDecoder().decode(outB.stderr));
    assert.match(new TextDecoder().decode(outB.stderr), /renamed ".*\/sub\/\.git" to/);
    endA();
    const outA = await a.output();
    assert.equal(outA.code, 0, new TextDecoder().decode(outA.stderr));
  } finally {
    endA();
    endB();
    // Only after a failure: a session still waiting is stopped.
    for (const c of running) {
      try {
        c.kill("SIGKILL");
      } catch {
        // Ended already.
      }
      await c.output().catch(() => {});
    }
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});
