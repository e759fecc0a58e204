// A session's `.git` stand-in removed or filled by a command of an enclosing session whose sandbox
// started before it existed (attack round 28 e23): removed, the mount in the session's sandbox is
// detached and its running command made a real `.git` with `core.fsmonitor`, which the user's next
// `git status` ran. Now the sandbox's init sees the mount go and kills the command at once
// (lib/sandbox/_mount_watch.ts); a stand-in filled in place (the mount stays) is renamed aside
// once the command has ended (lib/sandbox/root_git_watch.ts), before the enclosing session ends.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { mkfifo, startRun } from "../support/run_session.ts";
import { hostGit } from "../support/host_git.ts";

const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

/**
 * Session A on `ws` starts a command first; session B on `ws/sub` (no `.git`) then starts one
 * that waits on `go_b` (let go once A's has run, with `letBGo`) and then runs `bCmd`. A's command runs `aCmd` on B's stand-in once let go,
 * and waits on `end_a`. `check` looks while A and B both still run, after B's command's result
 * (the tool results of B's second request) is in.
 */
async function twoSessions(
  aCmd: string,
  bCmd: string,
  letBGo: boolean,
  check: (c: { sub: string; home: string; marker: string; bSaw: string }) => Promise<void>,
): Promise<{ outB: Deno.CommandOutput }> {
  const base = await visibleTempDir("penguin-root-git-detach-");
  const ws = join(base, "ws");
  const sub = join(ws, "sub");
  const home = join(base, "home");
  const marker = join(base, "ran-fsmonitor");
  await Deno.mkdir(sub, { recursive: true });
  await Deno.mkdir(home);
  for (const f of ["up_a", "go_a", "done_a", "end_a"]) await mkfifo(join(ws, f));
  for (const f of ["up_b", "go_b"]) await mkfifo(join(sub, f));
  let endA!: () => void;
  const aMayEnd = new Promise<void>((r) => endA = r);
  let endB!: () => void;
  const bMayEnd = new Promise<void>((r) => endB = r);
  const bCommandEnded = Promise.withResolvers<string>();
  const seen = { A: 0, B: 0 };
  const server = await startModelServer({
    handler: async (rec) => {
      const body = JSON.stringify(rec.body);
      const who = body.includes("A-task") ? "A" : "B";
      const i = seen[who]++;
      if (who === "A" && i === 0) {
        return turn.of(item.toolCall("exec_command", {
          // Its command goes on until B's has been checked: its own walk after it comes later.
          cmd: `echo up > up_a; cat go_a > /dev/null; ${aCmd.replaceAll("MARKER", marker)}; ` +
            "echo $? > done_a; cat end_a > /dev/null",
          yield_time_ms: 1000,
        }, { id: "a1" }));
      }
      if (who === "B" && i === 0) {
        return turn.of(item.toolCall("exec_command", {
          // The default window (60 s): its result is its end, unless it waits that long.
          cmd: `echo up > up_b; cat go_b > /dev/null; ${bCmd.replaceAll("MARKER", marker)}`,
        }, { id: "b1" }));
      }
      if (who === "A") await aMayEnd;
      if (who === "B") {
        // B's command has ended and its result is in: B's session goes on until released.
        const messages = (rec.body as { messages: { role: string; content: string }[] }).messages;
        bCommandEnded.resolve(
          messages.filter((m) => m.role === "tool").map((m) => m.content).join(""),
        );
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
    await Deno.writeTextFile(join(ws, "go_a"), "go\n");
    assert.equal(await Deno.readTextFile(join(ws, "done_a")), "0\n");
    if (letBGo) await Deno.writeTextFile(join(sub, "go_b"), "go\n");
    // B's command has ended; B and A both still run: no session's last walk has run yet.
    const bSaw = await bCommandEnded.promise;
    await check({ sub, home, marker, bSaw });
    endB();
    const outB = await b.output();
    await Deno.writeTextFile(join(ws, "end_a"), "end\n");
    assert.equal(outB.code, 0, new TextDecoder().decode(outB.stderr));
    endA();
    const outA = await a.output();
    assert.equal(outA.code, 0, new TextDecoder().decode(outA.stderr));
    return { outB };
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
}

Deno.test("a command whose .git stand-in another session removes is killed before it can use it", async () => {
  await twoSessions(
    "rmdir sub/.git",
    // Never reached: the init kills the command as the mount goes, while it waits on go_b (never
    // let go: without the watch it waits out its window and the result has no kill note).
    'git init -q . && git config core.fsmonitor "touch MARKER; false" && echo armed',
    false,
    async ({ sub, home, marker, bSaw }) => {
      assert.match(bSaw, /the sandbox's mount at [^ ]*\/sub\/\.git was removed from outside/);
      assert.match(bSaw, /everything the command started was killed/);
      assert.doesNotMatch(bSaw, /armed/);
      // Nothing, or a new stand-in of B's (an empty directory): no repository.
      const left = await Array.fromAsync(Deno.readDir(join(sub, ".git"))).catch(() => []);
      assert.deepEqual(left, []);
      const status = await hostGit(home, sub, ["status"]);
      assert.equal(await exists(marker), false, status.out);
    },
  );
});

Deno.test("a .git stand-in another session fills while a command runs is set aside after it", async () => {
  const { outB } = await twoSessions(
    // A fills B's stand-in in place (its mount stays): a repository whose fsmonitor runs MARKER.
    'git init -q sub && git -C sub config core.fsmonitor "touch MARKER; false"',
    "true",
    true,
    async ({ sub, home, marker }) => {
      assert.equal((await Deno.lstat(join(sub, ".git-disarmed-by-penguin"))).isDirectory, true);
      const status = await hostGit(home, sub, ["status"]);
      assert.equal(await exists(marker), false, status.out);
    },
  );
  assert.match(new TextDecoder().decode(outB.stderr), /renamed ".*\/sub\/\.git" to/);
});
