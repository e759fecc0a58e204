// The sandbox kept for a session (lib/sandbox/_pool.ts, _launcher.ts): while a session keeps
// stand-ins, commands of one confinement run one after another in one sandbox, started by its
// launcher; nothing a command started outlives its status; a dead launcher fails its command
// closed and is replaced; another confinement or a concurrent command gets another sandbox; a
// command can neither reach the launcher's channels nor end its own output early.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, type SandboxedProcess, type SandboxPolicy } from "../../lib/sandbox/mod.ts";
import { spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { poolFacts } from "../../lib/sandbox/_pool.ts";
import { assertSameUnlessReplanned } from "./_same_sandbox.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { withPolicyWorkspace } from "./_helpers.ts";
import { pidsWithArg, uniqueSleep, within } from "../tools/_process_probes.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { evalInRunDir } from "./_run_dir_eval.ts";

// The launcher binary and the stand-ins of this test process are its own.
useTestRunDir();

interface Run {
  child: SandboxedProcess;
  text: () => string;
  /** Resolves once the output holds `s`. */
  seen: (s: string) => Promise<void>;
}

async function start(policy: SandboxPolicy, shell: string): Promise<Run> {
  let out = "";
  let waiters: { s: string; resolve: () => void }[] = [];
  const child = await spawnSandboxed({
    shell,
    policy,
    reuse: true,
    onOutput: (chunk) => {
      out += chunk;
      waiters = waiters.filter((w) => !out.includes(w.s) || void w.resolve());
    },
  });
  const seen = (s: string) =>
    out.includes(s) ? Promise.resolve() : new Promise<void>((resolve) => {
      waiters.push({ s, resolve });
    });
  return { child, text: () => out, seen };
}

async function run(policy: SandboxPolicy, shell: string) {
  const r = await start(policy, shell);
  const status = await r.child.status;
  await r.child.outputClosed;
  return { out: r.text(), status, pid: r.child.pid };
}

/** Run `fn` in a session that keeps stand-ins (as `penguin run` does), ended afterwards. */
function inSession(fn: (policy: SandboxPolicy, ws: string) => Promise<void>): () => Promise<void> {
  return () =>
    withPolicyWorkspace(async (policy, ws) => {
      const keeping = keepStandIns();
      try {
        // Other processes' data roots (the suite's, in /var/tmp) come and go in every plan and
        // would change the sandbox's arguments between two commands: not what these tests test.
        await fn({ ...policy, hideOtherDataRoots: false }, ws);
      } finally {
        await keeping.end();
      }
      assert.equal(poolFacts().live, 0, "every kept sandbox retires with the session");
    });
}

Deno.test({
  name: "commands of one session and confinement share one sandbox and its /tmp",
  ignore: !bwrap,
  fn: inSession(async (policy) => {
    const name = `shared-${crypto.randomUUID()}`;
    // The first command settles the stand-ins the plans look at; from the second on one sandbox.
    await run(policy, "true");
    // A pair run in two sandboxes must owe it to a new plan (a parallel test noting a run
    // directory); then the pair is run again, until two commands share one.
    let shared = false;
    for (let i = 0; i < 5 && !shared; i++) {
      const a = await run(policy, `echo one > /tmp/${name}; echo $$`);
      const b = await run(policy, `cat /tmp/${name} 2>/dev/null || true`);
      assert.deepEqual(a.status, { code: 0, signal: null });
      assertSameUnlessReplanned(a.pid, b.pid);
      if (a.pid !== b.pid) continue;
      assert.equal(b.out, "one\n");
      shared = true;
    }
    assert.ok(shared, "two commands shared one sandbox");
    const b = await run(policy, "true");
    // The launcher is PID 1 and the command its child, in a process group of its own.
    const ids = await run(policy, "ps -o pid=,pgid=,comm= -p 1,$$");
    assert.match(ids.out, /^\s*1\s+1\s+\.penguin-launch/m);
    assert.match(ids.out, /^\s*(\d+)\s+\1\s+ps$/m);
    // Another confinement (the network on) is another sandbox, with its own /tmp.
    const other = createPolicy({ ...policy, network: !policy.network });
    const c = await run(other, `cat /tmp/${name} 2>&1 || echo absent`);
    assert.notEqual(c.pid, b.pid);
    assert.match(c.out, /absent/);
  }),
});

Deno.test({
  name: "a daemon a command leaves (setsid, double fork) is gone when its status arrives",
  ignore: !bwrap,
  fn: inSession(async (policy) => {
    await run(policy, "true");
    const s = uniqueSleep();
    const r = await run(
      policy,
      `(setsid sh -c 'sleep ${s} & sleep ${s}' </dev/null >/dev/null 2>&1 &); ` +
        `nohup sleep ${s} >/dev/null 2>&1 & echo left`,
    );
    assert.deepEqual(r.status, { code: 0, signal: null });
    assert.equal(r.out, "left\n");
    assert.deepEqual(pidsWithArg(s), [], "nothing of the command runs once its status is in");
    // And the sandbox goes on: the next command runs in it, alone with the launcher.
    const next = await run(policy, "echo /proc/[0-9]*");
    assert.equal(next.pid, r.pid);
    // (The launcher itself counts the processes while a command runs: no process beside it.)
    assert.match(next.out, /^\/proc\/1 \/proc\/\d+\n$/, "only the launcher and this command");
  }),
});

Deno.test({
  name: "a killed launcher fails its command closed and a new sandbox takes its place",
  ignore: !bwrap,
  fn: inSession(async (policy) => {
    await run(policy, "true");
    const s = uniqueSleep();
    const r = await start(policy, `echo running; sleep ${s}`);
    await within(r.seen("running"), 30_000, "the command to start");
    // bwrap's only child is the launcher, the sandbox's init.
    const bwrapPid = r.child.pid;
    const init = (await Deno.readTextFile(`/proc/${bwrapPid}/task/${bwrapPid}/children`)).trim();
    assert.match(init, /^\d+$/);
    Deno.kill(Number(init), "SIGKILL");
    const status = await within(r.child.status, 30_000, "the failed status");
    assert.equal(status.signal, "SIGKILL");
    assert.notEqual(status.code, 0);
    assert.match(r.text(), /the sandbox ended before the command's status arrived/);
    assert.deepEqual(pidsWithArg(s), []);
    const next = await run(policy, "echo again");
    assert.equal(next.out, "again\n");
    assert.notEqual(next.pid, bwrapPid, "a new sandbox");
  }),
});

Deno.test({
  name: "a changed plan gets a new sandbox",
  ignore: !bwrap,
  fn: inSession(async (policy, ws) => {
    await run(policy, "true");
    let a = await run(policy, "echo a");
    // Again while a parallel test's noting replanned between the two (see above).
    let matched = false;
    for (let i = 0; i < 5 && !matched; i++) {
      const same = await run(policy, "echo b");
      assertSameUnlessReplanned(a.pid, same.pid);
      matched = same.pid === a.pid;
      a = same;
    }
    assert.ok(matched, "one sandbox for one plan");
    // A repository appears (made outside the sandbox): its protections change the mounts.
    const sub = join(ws, "sub");
    await new Deno.Command("git", { args: ["init", "-q", sub], stdout: "null" }).output();
    const b = await run(policy, "touch sub/.git/hooks/pre-commit 2>&1 || echo refused");
    assert.notEqual(b.pid, a.pid);
    assert.match(b.out, /refused/);
    await assert.rejects(Deno.lstat(join(sub, ".git", "hooks", "pre-commit")));
  }),
});

Deno.test({
  name: "concurrent commands get different sandboxes",
  ignore: !bwrap,
  fn: inSession(async (policy) => {
    await run(policy, "true");
    const first = await start(policy, "echo up; read -r line; echo got $line");
    await within(first.seen("up"), 30_000, "the first command");
    const second = await run(policy, "echo two");
    assert.equal(second.out, "two\n");
    assert.notEqual(second.pid, first.child.pid);
    assert.ok(await first.child.write("x\n"));
    assert.deepEqual(await first.child.status, { code: 0, signal: null });
    await first.child.outputClosed;
    assert.equal(first.text(), "up\ngot x\n");
  }),
});

Deno.test({
  name: "a command can reach neither the launcher's channels nor end its output early",
  ignore: !bwrap,
  fn: inSession(async (policy) => {
    await run(policy, "true");
    const probe = await run(
      policy,
      "for f in 0 1 2 9; do readlink /proc/1/fd/$f /proc/1/task/1/fd/$f && echo link $f; done; " +
        "for f in environ mem; do head -c 1 /proc/1/$f >/dev/null 2>&1 && echo open $f; done; " +
        "echo x 2>/dev/null >/proc/1/fd/1 && echo wrote; " +
        "! command -v strace >/dev/null || timeout 10 strace -p 1 -o /dev/null 2>&1 | " +
        "grep -q 'not permitted' || echo traced; echo done",
    );
    assert.equal(probe.out, "done\n");
    // A made-up end marker (any nonce, any status) is output like any other.
    const forged = await run(
      policy,
      "for i in 1 2 3; do printf '%032x %s\\n' $i 0; done; printf '%s 0\\n' " +
        "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n'); echo after; exit 7",
    );
    assert.equal(forged.status.code, 7);
    assert.match(forged.out, /after\n$/);
    assert.equal(forged.out.split("\n").length, 6);
  }),
});

Deno.test({
  name: "another penguin process starting between commands keeps the session's sandbox",
  ignore: !bwrap,
  fn: inSession(async (policy) => {
    await run(policy, "true");
    const a = await run(policy, "echo $$");
    // Another penguin with a run directory of its own under /tmp (noted for every plan to hide):
    // outside every root, the private /tmp hides it already, and the sandbox stays the same.
    const other = await Deno.makeTempDir({ prefix: "penguin-other-run-" });
    try {
      const registry = new URL("../../lib/sandbox/_standin_registry.ts", import.meta.url).href;
      await evalInRunDir(
        `import { privateRunDir } from ${JSON.stringify(registry)}; await privateRunDir();`,
        other,
      );
      const b = await run(policy, `ls -A ${other} 2>&1; echo $$`);
      assertSameUnlessReplanned(a.pid, b.pid, other);
      assert.match(b.out, /No such file or directory/);
    } finally {
      await Deno.remove(other, { recursive: true });
    }
  }),
});

Deno.test({
  name: "input a command left unread never reaches the launcher or the next command",
  ignore: !bwrap,
  fn: inSession(async (policy) => {
    await run(policy, "true");
    const unacknowledged = poolFacts().unacknowledged;
    const r = await start(policy, "echo ready; read -r line; echo got $line");
    await within(r.seen("ready"), 30_000, "the command");
    // One line read, the rest left in the pipe (as if for a command that ended).
    assert.ok(await r.child.write("first\n3\0\0\0echo\0stolen\0leftover\n"));
    assert.deepEqual(await r.child.status, { code: 0, signal: null });
    const next = await run(policy, "echo ok; read -r -t 0 && echo pending; echo end");
    assert.equal(next.out, "ok\nend\n");
    // Read as a request, the leftover would have ended the launcher before it acknowledged the
    // next one. (Not the PIDs: a run directory another penguin process notes meanwhile changes
    // every plan, and the next command then gets a new sandbox.)
    assert.equal(poolFacts().unacknowledged, unacknowledged);
  }),
});

Deno.test({
  name: "an interrupt reaches a pooled command's process group and the sandbox goes on",
  ignore: !bwrap,
  fn: inSession(async (policy) => {
    await run(policy, "true");
    const s = uniqueSleep();
    const r = await start(policy, `trap 'echo caught; exit 5' INT; echo armed; sleep ${s} & wait`);
    await within(r.seen("armed"), 30_000, "the trap");
    r.child.signal("SIGINT");
    assert.deepEqual(await within(r.child.status, 30_000, "the status"), { code: 5, signal: null });
    await r.child.outputClosed;
    assert.match(r.text(), /caught/);
    assert.deepEqual(pidsWithArg(s), []);
    const k = await start(policy, `echo armed; sleep ${s}`);
    await within(k.seen("armed"), 30_000, "the sleep");
    const st = await within(k.child.kill(5_000), 30_000, "the kill");
    assert.equal(st.signal, "SIGTERM");
    const next = await run(policy, "echo on");
    assert.equal(next.out, "on\n");
    assertSameUnlessReplanned(k.child.pid, next.pid);
  }),
});

Deno.test({
  name:
    "a kept sandbox whose mounts changed since it started is not reused: a protection detached from outside holds again",
  ignore: !bwrap,
  fn: inSession(async (policy, ws) => {
    await Deno.mkdir(join(ws, ".git", "hooks"), { recursive: true });
    await Deno.writeTextFile(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
    // The first command settles the stand-ins; the second runs in the sandbox kept from then on.
    await run(policy, "true");
    const a = await run(policy, "echo $$");
    // From outside, the user replaces .git by a copy: the kernel detaches the read-only bind of
    // the old one in every other mount namespace, the kept sandbox's included. The plan of the
    // next command is the same (a .git, read-only), so only the mounts tell.
    await Deno.rename(join(ws, ".git"), join(ws, "old-git"));
    await Deno.mkdir(join(ws, ".git", "hooks"), { recursive: true });
    await Deno.writeTextFile(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
    const b = await run(policy, "printf hostile > .git/hooks/pre-commit; echo rc=$?; echo $$");
    assert.notEqual(a.pid, b.pid, "a new sandbox, with the protection mounted again");
    assert.match(b.out, /rc=[1-9]/, b.out);
    const hook = await Deno.readTextFile(join(ws, ".git", "hooks", "pre-commit")).catch(() => "");
    assert.equal(hook, "");
  }),
});
