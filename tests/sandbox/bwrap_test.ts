import assert from "node:assert/strict";
import {
  bwrapArgv,
  bwrapEnvArgs,
  bwrapMountArgs,
  type SandboxPlan,
} from "../../lib/sandbox/mod.ts";
import { SHM_BYTES, TMP_BYTES } from "../../lib/sandbox/bwrap.ts";

function plan(over: Partial<SandboxPlan> = {}): SandboxPlan {
  return {
    writableRoots: true,
    roots: ["/home/u/proj"],
    protect: [],
    protectMissing: [],
    hideDirs: [],
    hideFiles: [],
    network: false,
    cwd: "/home/u/proj",
    env: { PATH: "/usr/bin:/bin", TERM: "dumb" },
    ...over,
  };
}

/** Index of the first occurrence of the consecutive tokens `seq` in `argv`. */
function at(argv: string[], ...seq: string[]): number {
  for (let i = 0; i + seq.length <= argv.length; i++) {
    if (seq.every((s, j) => argv[i + j] === s)) return i;
  }
  return -1;
}

Deno.test("bwrapArgv confines with every namespace, a read-only root and no capabilities", () => {
  const argv = bwrapArgv(plan(), ["/usr/bin/true"]);
  for (
    const flag of [
      "--unshare-user",
      "--disable-userns",
      "--unshare-pid",
      "--unshare-ipc",
      "--unshare-uts",
      "--unshare-cgroup-try",
      "--unshare-net",
      "--die-with-parent",
      "--new-session",
      "--clearenv",
    ]
  ) assert.ok(argv.includes(flag), flag);
  assert.ok(at(argv, "--ro-bind", "/", "/") >= 0);
  assert.ok(at(argv, "--dev", "/dev") >= 0);
  assert.ok(at(argv, "--proc", "/proc") >= 0);
  assert.ok(at(argv, "--tmpfs", "/tmp") > at(argv, "--ro-bind", "/", "/"));
  assert.ok(at(argv, "--cap-drop", "ALL") >= 0);
  assert.ok(at(argv, "--chdir", "/home/u/proj") >= 0);
  assert.deepEqual(argv.slice(-2), ["--", "/usr/bin/true"]);
});

Deno.test("bwrapArgv shares the network only when the plan allows it", () => {
  assert.ok(bwrapArgv(plan({ network: false }), ["x"]).includes("--unshare-net"));
  assert.ok(!bwrapArgv(plan({ network: true }), ["x"]).includes("--unshare-net"));
});

Deno.test("bwrapArgv omits --disable-userns for old bubblewrap", () => {
  assert.ok(!bwrapArgv(plan(), ["x"], { disableUserns: false }).includes("--disable-userns"));
});

Deno.test("the workspace is bound writable in workspace-write and read-only in read-only mode", () => {
  assert.ok(at(bwrapArgv(plan(), ["x"]), "--bind", "/home/u/proj", "/home/u/proj") >= 0);
  const ro = bwrapArgv(plan({ writableRoots: false }), ["x"]);
  assert.equal(at(ro, "--bind", "/home/u/proj", "/home/u/proj"), -1);
  assert.ok(at(ro, "--ro-bind", "/home/u/proj", "/home/u/proj") >= 0);
});

Deno.test("a workspace inside the hidden data root is bound after the data root is hidden", () => {
  const root = "/home/u/.penguin/data";
  const ws = `${root}/default_project/agents/default_agent/workspaces/tmp-1a2b3c4d`;
  const argv = bwrapArgv(plan({ roots: [ws], hideDirs: [root], cwd: ws }), ["x"]);
  const hide = at(argv, "--tmpfs", root);
  const bind = at(argv, "--bind", ws, ws);
  assert.ok(hide > 0 && bind > hide, `hide at ${hide}, bind at ${bind}`);
  // The hidden dir becomes read-only only after everything below it is mounted.
  assert.ok(at(argv, "--remount-ro", root) > bind);
});

Deno.test("a secret inside the workspace is hidden after the workspace is bound", () => {
  const argv = bwrapArgv(
    plan({ roots: ["/home/u"], hideDirs: ["/home/u/.ssh"], hideFiles: ["/home/u/.netrc"] }),
    ["x"],
  );
  const bind = at(argv, "--bind", "/home/u", "/home/u");
  assert.ok(at(argv, "--tmpfs", "/home/u/.ssh") > bind);
  assert.ok(at(argv, "--ro-bind", "/dev/null", "/home/u/.netrc") > bind);
});

Deno.test(".git/hooks and .git/config are re-bound read-only after the writable workspace", () => {
  const argv = bwrapArgv(
    plan({ protect: ["/home/u/proj/.git/hooks", "/home/u/proj/.git/config"] }),
    ["x"],
  );
  const bind = at(argv, "--bind", "/home/u/proj", "/home/u/proj");
  assert.ok(at(argv, "--ro-bind", "/home/u/proj/.git/hooks", "/home/u/proj/.git/hooks") > bind);
  assert.ok(at(argv, "--ro-bind", "/home/u/proj/.git/config", "/home/u/proj/.git/config") > bind);
});

Deno.test("a missing .git/hooks is covered by an empty read-only tmpfs", () => {
  const argv = bwrapArgv(plan({ protectMissing: ["/home/u/proj/.git/hooks"] }), ["x"]);
  const tmpfs = at(argv, "--tmpfs", "/home/u/proj/.git/hooks");
  assert.ok(tmpfs > at(argv, "--bind", "/home/u/proj", "/home/u/proj"));
  assert.ok(at(argv, "--remount-ro", "/home/u/proj/.git/hooks") > tmpfs);
});

Deno.test("a workspace under /tmp is bound after the private /tmp", () => {
  const argv = bwrapArgv(plan({ roots: ["/tmp/ws"], cwd: "/tmp/ws" }), ["x"]);
  assert.ok(at(argv, "--bind", "/tmp/ws", "/tmp/ws") > at(argv, "--tmpfs", "/tmp"));
});

Deno.test("a hidden directory or file under the private /tmp gets a mount only where a bind shows it", () => {
  const args = bwrapMountArgs(plan({
    roots: ["/tmp/ws"],
    hideDirs: ["/tmp/other-root", "/tmp/ws/data", "/home/u/.ssh"],
    privateDirs: ["/tmp/penguin-0", "/tmp/ws/run", "/tmp/pinned/run", "/tmp/a"],
    pinned: ["/tmp/pinned"],
    protect: ["/tmp/a/b/c"],
    hideFiles: ["/tmp/other.env", "/tmp/ws/.env"],
  }));
  const tmpfs = args.flatMap((a, i) => args[i - 1] === "--tmpfs" ? [a] : []);
  // /tmp/a holds a protected bind: hidden, so the bind shows only itself.
  assert.deepEqual(tmpfs.sort(), [
    "/dev/shm",
    "/home/u/.ssh",
    "/tmp",
    "/tmp/a",
    "/tmp/pinned/run",
    "/tmp/ws/data",
    "/tmp/ws/run",
  ]);
  assert.ok(!args.includes("/tmp/other-root") && !args.includes("/tmp/penguin-0"));
  assert.ok(!args.includes("/tmp/other.env"));
  assert.ok(args.join(" ").includes("--ro-bind /dev/null /tmp/ws/.env"));
});

Deno.test("a workspace of /tmp itself keeps every hidden directory under it", () => {
  const args = bwrapMountArgs(plan({ roots: ["/tmp"], privateDirs: ["/tmp/penguin-0"] }));
  assert.ok(args.includes("/tmp/penguin-0"));
});

Deno.test("mount arguments sort parents before children whatever the input order", () => {
  const args = bwrapMountArgs(
    plan({ roots: ["/a/b/c"], hideDirs: ["/a/b/c/d", "/a"], hideFiles: ["/a/b/f"] }),
  );
  assert.deepEqual(args, [
    "--size",
    String(TMP_BYTES),
    "--tmpfs",
    "/tmp",
    "--tmpfs",
    "/a",
    "--size",
    String(SHM_BYTES),
    "--tmpfs",
    "/dev/shm",
    "--ro-bind",
    "/dev/null",
    "/a/b/f",
    "--bind",
    "/a/b/c",
    "/a/b/c",
    "--tmpfs",
    "/a/b/c/d",
    "--remount-ro",
    "/a/b/c/d",
    "--remount-ro",
    "/a",
  ]);
});

Deno.test("/tmp and /dev/shm are sized, and /dev turns read-only after penguin's own binds", () => {
  const own = ["--ro-bind", "/run/launcher", "/dev/.penguin-launcher"];
  const argv = bwrapArgv(plan(), ["x"], { ownBinds: own });
  assert.ok(at(argv, "--size", String(TMP_BYTES), "--tmpfs", "/tmp") >= 0);
  assert.ok(
    at(argv, "--size", String(SHM_BYTES), "--tmpfs", "/dev/shm") > at(argv, "--dev", "/dev"),
  );
  assert.ok(at(argv, ...own, "--remount-ro", "/dev") > at(argv, "--tmpfs", "/dev/shm"));
  assert.ok(at(argv, "--remount-ro", "/dev") < argv.indexOf("--"));
  // Bubblewrap before 0.8.0, or setuid: no --size.
  const old = bwrapArgv(plan(), ["x"], { sizeTmpfs: false });
  assert.ok(!old.includes("--size"));
  assert.ok(at(old, "--tmpfs", "/dev/shm") >= 0 && at(old, "--remount-ro", "/dev") >= 0);
});

Deno.test("the environment goes on the command line or, with envFd, through --args", () => {
  const inline = bwrapArgv(plan(), ["x"]);
  assert.ok(
    at(inline, "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "TERM", "dumb") >= 0,
  );
  const viaFd = bwrapArgv(plan({ env: { SECRET: "s3cr3t" } }), ["x"], { envFd: 3 });
  assert.ok(at(viaFd, "--clearenv", "--args", "3") >= 0);
  assert.ok(!viaFd.includes("s3cr3t"));
  assert.deepEqual(bwrapEnvArgs({ B: "2", A: "1" }), ["--setenv", "A", "1", "--setenv", "B", "2"]);
});

Deno.test("capabilities are dropped before the command and after every mount", () => {
  const argv = bwrapArgv(plan({ hideDirs: ["/x"] }), ["cmd"]);
  const cap = at(argv, "--cap-drop", "ALL");
  assert.ok(cap > at(argv, "--remount-ro", "/x"));
  assert.ok(cap < argv.indexOf("--"));
});

Deno.test("with commandIsInit, the command is PID 1 and bwrap passes its environment through", () => {
  const args = bwrapArgv(plan({ env: { SECRET: "s3cr3t" } }), ["x"], { commandIsInit: true });
  assert.ok(args.includes("--as-pid-1"));
  assert.ok(!args.includes("--clearenv"));
  assert.ok(!args.includes("--setenv"));
  assert.ok(!args.includes("s3cr3t"));
  assert.deepEqual(args.slice(-2), ["--", "x"]);
});
