// The sandbox's mounts inside its roots, watched by its init (lib/sandbox/_mount_watch.ts): a
// stand-in removed from outside while a command runs (a mount point only in the sandbox's
// namespace, which the kernel then detaches there) left the command free to make the real `.git`
// (attack round 28 e23). Now the command is killed with a line saying so, in a sandbox of its own
// and in the one kept for a session; mount points are named as the kernel writes them, so a
// workspace whose path has a space or a backslash runs as any other.
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import { createPolicy } from "../../lib/sandbox/mod.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import {
  mountGoneMessage,
  mountinfoPath,
  MOUNTS_HELD,
  WATCH_FROM_DATA,
} from "../../lib/sandbox/_mount_watch.ts";
import { mountWatchEnv } from "../../lib/sandbox/_mount_watch_env.ts";
import { resolvePlan } from "../../lib/sandbox/plan.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { visibleTempDir } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();

Deno.test("a mount point is named as /proc/self/mountinfo writes it", () => {
  assert.equal(mountinfoPath("/a b\tc\nd\\e/f"), "/a\\040b\\011c\\012d\\134e/f");
  assert.equal(mountinfoPath("/plain/path"), "/plain/path");
});

/** A workspace (no `.git`) whose name has a space and a backslash. */
async function withOddWorkspace(fn: (ws: string) => Promise<void>): Promise<void> {
  const base = await visibleTempDir("penguin-mount-watch-");
  const ws = join(base, "w s\\x");
  await Deno.mkdir(ws);
  try {
    await fn(ws);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

const policyFor = (ws: string) => ({
  ...createPolicy({
    workspace: ws,
    home: "",
    hostEnv: { PATH: Deno.env.get("PATH") ?? "", HOME: ws },
  }),
  hideOtherDataRoots: false,
});

for (const reuse of [false, true]) {
  const where = reuse ? "kept sandbox" : "own sandbox";

  Deno.test({
    name: `a command whose .git stand-in is removed from outside is killed (${where})`,
    ignore: !bwrap,
    fn: () =>
      withOddWorkspace(async (ws) => {
        const keeping = reuse ? keepStandIns() : undefined;
        try {
          let out = "";
          const up = Promise.withResolvers<void>();
          // Waits on stdin (at most 300 s: without the watch the test fails then, not hangs).
          const child = await spawnSandboxed({
            shell: "echo up; read -r -t 300 x; echo went-on",
            policy: policyFor(ws),
            reuse,
            stdin: "piped",
            onOutput: (chunk) => {
              out += chunk;
              if (out.includes("up")) up.resolve();
            },
          });
          await Promise.race([up.promise, child.status]);
          assert.match(out, /^up/, out);
          // The stand-in is a plain empty directory on the host: removed, the sandbox's mount of it
          // is detached.
          await Deno.remove(join(ws, ".git"));
          const status = await child.status;
          assert.ok(out.includes(mountGoneMessage(mountinfoPath(join(ws, ".git")), true)), out);
          assert.ok(!out.includes("went-on"), out);
          assert.ok(status.code === 137 || status.signal === "SIGKILL", JSON.stringify(status));
        } finally {
          await keeping?.end();
        }
      }),
  });

  Deno.test({
    name: `a workspace whose path has a space and a backslash runs its commands (${where})`,
    ignore: !bwrap,
    fn: () =>
      withOddWorkspace(async (ws) => {
        const keeping = reuse ? keepStandIns() : undefined;
        try {
          for (let i = 0; i < 2; i++) {
            let out = "";
            const child = await spawnSandboxed({
              shell: "echo ran",
              policy: policyFor(ws),
              reuse,
              onOutput: (chunk) => void (out += chunk),
            });
            const status = await child.status;
            assert.equal(status.code, 0, out);
            assert.equal(out, "ran\n");
          }
        } finally {
          await keeping?.end();
        }
      }),
  });
}

Deno.test({
  name: "a nested repository's git directory (a --ro-bind-try mount) is watched while it exists",
  ignore: !bwrap,
  fn: () =>
    withOddWorkspace(async (ws) => {
      // The user's repository in the workspace: bwrap skips its `--ro-bind-try` mount when the
      // model renames a parent away while the sandbox is set up (attack round 30 m02).
      const r = join(ws, "r");
      await Deno.mkdir(r);
      assert.ok((await new Deno.Command("git", { args: ["init", "-q", r] }).output()).success);
      const plan = await resolvePlan(policyFor(ws), ws);
      assert.ok(plan.protectTry?.includes(join(r, ".git")), JSON.stringify(plan.protectTry));
      const watched = Object.values(mountWatchEnv(plan));
      assert.ok(watched.includes(mountinfoPath(join(r, ".git"))), JSON.stringify(watched));
      // Gone by the time the sandbox starts (a command removed it): bwrap rightly skips it.
      await Deno.remove(r, { recursive: true });
      assert.ok(!Object.values(mountWatchEnv(plan)).includes(mountinfoPath(join(r, ".git"))));
    }),
});

/** Whether this process may make a mount namespace of its own (root, `unshare`). */
const unshareHere = Deno.uid() === 0 &&
  (await new Deno.Command("unshare", { args: ["-m", "true"] }).output().then(
    (o) => o.success,
    () => false,
  ));

Deno.test({
  name:
    "the init's check finds a watched mount by path, then by ID: moved along it holds, gone not",
  ignore: !unshareHere,
  fn: async () => {
    const base = await visibleTempDir("penguin-mheld-");
    try {
      // In a mount namespace of its own: a tmpfs at <base>/d/m, watched; its directory renamed
      // (the mount moves with it, as a command's `mv vendor v2` moves the mounts below); then
      // the mount removed (as a detach from outside does).
      const script = `${WATCH_FROM_DATA}
${MOUNTS_HELD}
b=$1
mkdir -p "$b/d/m" && mount -t tmpfs none "$b/d/m" || exit 9
__PW=("$b/d/m")
mheld && echo start-held
mv "$b/d" "$b/e"
mheld && echo moved-held
umount "$b/e/m"
mheld || echo "gone $__PWG"
__PW=("$b/missing") __PWI=() __PML=
mheld || echo "missing $__PWG"`;
      const o = await new Deno.Command("unshare", {
        args: ["-m", "--propagation", "private", "bash", "-c", script, "mheld", base],
      }).output();
      const out = new TextDecoder().decode(o.stdout);
      assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
      assert.equal(
        out,
        `start-held\nmoved-held\ngone ${base}/d/m\nmissing ${base}/missing\n`,
      );
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
