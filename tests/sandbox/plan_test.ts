import assert from "node:assert/strict";
import { join } from "node:path";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { createPolicy, homeSecrets, parseSandboxMode, resolvePlan } from "../../lib/sandbox/mod.ts";
import { bwrapMountArgs } from "../../lib/sandbox/bwrap.ts";
import { accountHome } from "../../lib/sandbox/home.ts";
import { CONVENTIONAL_HOOK_DIRS } from "../../lib/sandbox/git_hook_scripts.ts";
import { systemSecrets } from "../../lib/sandbox/policy.ts";

/** Hidden files but the machine's own secrets, which every plan hides. */
function ownFiles(files: string[]): string[] {
  return files.filter((p) => !systemSecrets().includes(p));
}

/** The conventional hook directories at the top of the repository `ws`, held while missing. */
const hookDirs = (ws: string) => CONVENTIONAL_HOOK_DIRS.map((n) => join(ws, n));

/** The account's own home (/etc/passwd), hidden in every plan whose HOME is another directory. */
const ACCOUNT_HOME = await accountHome().then((h) => h && Deno.realPath(h)).catch(() => undefined);

/**
 * `dirs` without the account's home and without the data roots of other penguin processes
 * (other test files run at the same time note theirs in the shared list every plan hides).
 */
function own(dirs: readonly string[]): string[] {
  return dirs.filter((d) => d !== ACCOUNT_HOME && d.startsWith("/tmp/penguin-plan-test-"));
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "penguin-plan-test-" }));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("resolvePlan hides the home directory whole when it is outside the workspace", async () => {
  await withDir(async (dir) => {
    const home = join(dir, "home");
    await Deno.mkdir(join(home, ".ssh"), { recursive: true });
    await Deno.writeTextFile(join(home, ".netrc"), "machine x");
    await Deno.mkdir(join(dir, "ws"));
    const policy = createPolicy({ workspace: join(dir, "ws"), home, hostEnv: {} });
    const plan = await resolvePlan(policy, join(dir, "ws"));
    // The secrets lie under the tmpfs over the home: no mount of their own.
    assert.deepEqual(own(plan.hideDirs), [home]);
    assert.deepEqual(ownFiles(plan.hideFiles), []);
  });
});

Deno.test("resolvePlan hides only the secrets that exist in a home that is the workspace", async () => {
  await withDir(async (dir) => {
    const home = join(dir, "home");
    await Deno.mkdir(join(home, ".ssh"), { recursive: true });
    await Deno.writeTextFile(join(home, ".netrc"), "machine x");
    const policy = createPolicy({ workspace: home, home, hostEnv: {}, allowHomeWorkspace: true });
    const plan = await resolvePlan(policy, home);
    assert.deepEqual(own(plan.hideDirs), [join(home, ".ssh")]);
    assert.deepEqual(ownFiles(plan.hideFiles), [join(home, ".netrc")]);
    // Only those that exist: other penguin data roots noted on this machine are hidden too.
    assert.ok(
      homeSecrets(home).length > own(plan.hideDirs).length + ownFiles(plan.hideFiles).length,
    );
  });
});

Deno.test("resolvePlan hides the real target of a symlinked secret outside the home", async () => {
  await withDir(async (dir) => {
    await Deno.mkdir(join(dir, "ws"));
    await Deno.mkdir(join(dir, "real-aws"));
    await Deno.mkdir(join(dir, "home"));
    await Deno.symlink(join(dir, "real-aws"), join(dir, "home", ".aws"));
    const policy = createPolicy({
      workspace: join(dir, "ws"),
      home: join(dir, "home"),
      hostEnv: {},
    });
    const plan = await resolvePlan(policy, join(dir, "ws"));
    assert.deepEqual(own(plan.hideDirs), [join(dir, "home"), join(dir, "real-aws")]);
  });
});

/**
 * Run `fn` counting calls of the Deno file-system functions `names` per first argument, their
 * synchronous forms (`realPathSync`…, which a plan uses) under the same name.
 */
async function counting(
  names: ("realPath" | "lstat" | "stat" | "readDir")[],
  fn: () => Promise<void>,
): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  const d = Deno as unknown as Record<string, (...args: unknown[]) => unknown>;
  const saved = names.flatMap((n) => [[n, n, d[n]!], [`${n}Sync`, n, d[`${n}Sync`]!]] as const);
  for (const [fname, n, f] of saved) {
    d[fname] = (...args: unknown[]) => {
      const key = `${n} ${String(args[0])}`;
      calls.set(key, (calls.get(key) ?? 0) + 1);
      return f.apply(Deno, args);
    };
  }
  try {
    await fn();
  } finally {
    for (const [fname, , f] of saved) d[fname] = f;
  }
  return calls;
}

Deno.test("resolvePlan lists a home once instead of looking up each missing secret", async () => {
  await withDir(async (dir) => {
    const home = join(dir, "home");
    await Deno.mkdir(join(home, ".ssh"), { recursive: true });
    await Deno.mkdir(join(home, ".gem"));
    await Deno.writeTextFile(join(home, ".gem", "credentials"), "token");
    await Deno.mkdir(join(dir, "ws"));
    const policy = createPolicy({ workspace: join(dir, "ws"), home, hostEnv: {} });
    let plan: Awaited<ReturnType<typeof resolvePlan>> | undefined;
    const calls = await counting(["realPath", "readDir"], async () => {
      plan = await resolvePlan(policy, join(dir, "ws"));
    });
    // ~/.ssh lies under the hidden home; ~/.gem is a toolchain shown again, its credentials not.
    assert.deepEqual(own(plan!.hideDirs), [home]);
    assert.deepEqual(ownFiles(plan!.hideFiles), [join(home, ".gem", "credentials")]);
    const reveals = (plan!.reveals ?? []).filter((r) => r.target.startsWith(dir + "/"));
    assert.deepEqual(reveals, [{
      source: join(home, ".gem"),
      target: join(home, ".gem"),
      kind: "dir",
    }]);
    const secrets = [...calls].filter(([k]) => k.includes(home + "/.")).map(([k]) => k).sort();
    // The listing of home, and a look-up for each secret that exists: nothing for
    // the missing ones, not even those below a directory home lacks (.cargo/credentials).
    // A shown toolchain is also listed once for credential files planted in it.
    // ~/.ssh is also listed once for files with other names (lib/sandbox/_protected_files.ts).
    const reveal = (k: string) =>
      k.includes("/.local/lib") || k === `realPath ${join(home, ".gem")}` ||
      k === `readDir ${join(home, ".gem")}` || k === `readDir ${join(home, ".ssh")}` ||
      // ssh's configuration is read for what it includes and runs (lib/sandbox/_ssh_config.ts).
      k === `readDir ${join(home, ".ssh", "config.d")}` ||
      // The secrets in ~/.local/share: one listing (failing: this home has none) tells them
      // all missing, instead of a failed look-up of each (absentAmong).
      k === `readDir ${join(home, ".local", "share")}`;
    assert.deepEqual(secrets.filter((k) => !reveal(k)), [
      `realPath ${join(home, ".gem", "credentials")}`,
      `realPath ${join(home, ".ssh")}`,
    ]);
    // Listed nine times in all: once for the secrets, once for the toolchain directories it
    // shows, once by the walk for files with other names (lib/sandbox/_home_links_walk.ts),
    // once by each of the last two to tell the missing toolchain paths without a look-up each
    // (`expandHomePaths`), once for the missing startup files (`guardStartupFiles`), and once by
    // each of the two reads of the startup files' references (`startupReferences`), where the
    // listing replaces a failed look-up of each of some thirty startup files; and once more for
    // the hide list's names looked for links into the roots (`absentAmong`): nine.
    assert.equal(calls.get(`readDir ${home}`), 9, `readDir ${home}`);
    // Each existing one at most twice: by the plan's own rules, and again by the search for
    // files with other names (lib/sandbox/_protected_files.ts, _home_links_walk.ts).
    for (const k of secrets) assert.ok((calls.get(k) ?? 0) <= 2, `${k}: ${calls.get(k)}`);
  });
});

Deno.test("resolvePlan still looks up a secret a listing could miss: other letter case, non-ASCII name", async () => {
  await withDir(async (dir) => {
    const home = join(dir, "home");
    // On a case-insensitive file system ~/.ssh is this directory.
    await Deno.mkdir(join(home, ".SSH"), { recursive: true });
    const odd = [join(home, "cl\u00e9s"), join(home, "cle\u0301s")];
    await Deno.mkdir(odd[1]!);
    // The home is the workspace: hidden paths in it need mounts of their own.
    const policy = createPolicy({
      workspace: home,
      home,
      hostEnv: {},
      hide: odd,
      allowHomeWorkspace: true,
    });
    let plan: Awaited<ReturnType<typeof resolvePlan>> | undefined;
    const calls = await counting(["realPath"], async () => {
      plan = await resolvePlan(policy, home);
    });
    assert.ok(calls.has(`realPath ${join(home, ".ssh")}`), "~/.ssh is looked up");
    for (const p of odd) assert.ok(calls.has(`realPath ${p}`), `${p} is looked up`);
    assert.ok(plan!.hideDirs.includes(odd[1]!));
  });
});

Deno.test("resolvePlan looks up no guarded git entry when the whole .git is read-only", async () => {
  await withDir(async (dir) => {
    const ws = join(dir, "ws");
    await Deno.mkdir(join(ws, ".git", "hooks"), { recursive: true });
    const policy = createPolicy({ workspace: ws, home: "", hostEnv: {} });
    const calls = await counting(["realPath", "lstat", "stat"], async () => {
      const plan = await resolvePlan(policy, ws);
      // (A missing penguin.jsonc is protected by a stand-in of its own.)
      assert.deepEqual(plan.protect, [
        join(ws, "penguin.jsonc"),
        join(ws, ".git"),
        ...hookDirs(ws),
      ]);
    });
    // Only the configuration git reads (git_config.ts) and the hooks directory, whose files'
    // other names in a root are held read-only (hard links of hooks), are looked at.
    const hooks = join(ws, ".git", "hooks");
    const inside = [...calls.keys()].filter((k) =>
      k.includes(join(ws, ".git") + "/") && !k.endsWith(join(ws, ".git", "config")) &&
      !k.endsWith(hooks) && !k.includes(hooks + "/")
    );
    assert.deepEqual(
      inside,
      [],
      "nothing inside .git but its config and hooks (hard links of hooks)",
    );
  });
});

Deno.test("resolvePlan protects the whole .git by default, and only its guarded entries when git is writable", async () => {
  await withDir(async (dir) => {
    const ws = join(dir, "ws");
    const git = join(ws, ".git");
    for (const d of ["hooks", "info", "objects/info", "refs"]) {
      await Deno.mkdir(join(git, d), { recursive: true });
    }
    await Deno.writeTextFile(join(git, "config"), "[core]\n");
    // penguin.jsonc stays the user's: no command may create one.
    await Deno.writeTextFile(join(ws, "penguin.jsonc"), "{}\n");
    const policy = createPolicy({ workspace: ws, home: "", hostEnv: {} });
    let plan = await resolvePlan(policy, ws);
    assert.deepEqual(plan.protect, [join(ws, "penguin.jsonc"), git, ...hookDirs(ws)]);
    assert.deepEqual(plan.placeholders, hookDirs(ws).map((path) => ({ path, kind: "dir" })));

    policy.git = "writable";
    plan = await resolvePlan(policy, ws);
    // `objects` too, on the way to `objects/info` (attack round 18 concgit B3).
    assert.deepEqual(plan.pinned, [git, join(git, "objects")]);
    assert.deepEqual(
      plan.protect.slice(1),
      [
        "config",
        "config.worktree",
        "commondir",
        "hooks",
        "info",
        "modules",
        "worktrees",
        "remotes",
        "branches",
        "objects/info",
        "rebase-merge",
        "rebase-apply",
        "sequencer",
      ]
        .map((e) => join(git, e)).concat(hookDirs(ws)),
    );
    // Missing guarded names get inert stand-ins ("gitdir" is never read in a main git dir).
    assert.deepEqual(plan.placeholders, [
      { path: join(git, "config.worktree"), kind: "file", content: "" },
      { path: join(git, "commondir"), kind: "file", content: "." },
      { path: join(git, "modules"), kind: "dir" },
      { path: join(git, "worktrees"), kind: "dir" },
      { path: join(git, "remotes"), kind: "dir" },
      { path: join(git, "branches"), kind: "dir" },
      { path: join(git, "rebase-merge"), kind: "dir" },
      { path: join(git, "rebase-apply"), kind: "dir" },
      { path: join(git, "sequencer"), kind: "dir" },
      ...hookDirs(ws).map((path) => ({ path, kind: "dir" })),
    ]);

    // No .git (and no penguin.jsonc) at all: read-only stand-ins keep commands from making them.
    await Deno.remove(git, { recursive: true });
    await Deno.remove(join(ws, "penguin.jsonc"));
    plan = await resolvePlan(policy, ws);
    assert.deepEqual(plan.placeholders?.map((p) => [p.path, p.kind]), [
      [join(ws, "penguin.jsonc"), "file"],
      [git, "dir"],
    ]);
    assert.deepEqual(plan.protect, [join(ws, "penguin.jsonc"), git]);

    policy.mode = "read-only";
    plan = await resolvePlan(policy, ws);
    assert.equal(plan.writableRoots, false);
    assert.deepEqual(plan.protect, []);
  });
});

Deno.test("resolvePlan keeps existing scratchpad and extra dirs as roots, extra only when writable", async () => {
  await withDir(async (dir) => {
    for (const d of ["ws", "scratch", "extra"]) await Deno.mkdir(join(dir, d));
    const policy = createPolicy({
      workspace: join(dir, "ws"),
      scratchpad: join(dir, "scratch"),
      extraWritable: [join(dir, "extra"), join(dir, "missing")],
      home: "",
      hostEnv: {},
    });
    assert.deepEqual(
      (await resolvePlan(policy, join(dir, "ws"))).roots,
      ["ws", "scratch", "extra"].map((d) => join(dir, d)),
    );
    policy.mode = "read-only";
    assert.deepEqual(
      (await resolvePlan(policy, join(dir, "ws"))).roots,
      ["ws", "scratch"].map((d) => join(dir, d)),
    );
  });
});

Deno.test("revealed writable dirs inside the hidden data root are roots, bound after the root is hidden", async () => {
  await withDir(async (dir) => {
    const data = join(dir, "data");
    const mem = join(data, "agent_state", "memory", "user");
    await Deno.mkdir(mem, { recursive: true });
    await Deno.writeTextFile(join(data, "agent_state", ".vault.toml"), 'K = "v"\n');
    await Deno.mkdir(join(dir, "ws"));
    const policy = createPolicy({
      workspace: join(dir, "ws"),
      dataRoot: data,
      revealWritable: [mem, join(data, "missing")],
      home: "",
      hostEnv: {},
    });
    const plan = await resolvePlan(policy, join(dir, "ws"));
    assert.deepEqual(plan.roots, [join(dir, "ws"), mem]);
    assert.deepEqual(own(plan.hideDirs), [data]);
    const argv = bwrapMountArgs(plan);
    const hide = argv.findIndex((a, i) => a === "--tmpfs" && argv[i + 1] === data);
    const bind = argv.findIndex((a, i) => a === "--bind" && argv[i + 1] === mem);
    assert.ok(hide >= 0 && bind > hide, argv.join(" "));
    policy.mode = "read-only";
    const ro = bwrapMountArgs(await resolvePlan(policy, join(dir, "ws")));
    assert.ok(
      ro.some((a, i) => a === "--ro-bind" && ro[i + 1] === mem),
      "read-only mode binds it read-only",
    );
    assert.ok(!ro.some((a, i) => a === "--bind" && ro[i + 1] === mem));
  });
});

Deno.test("resolvePlan refuses a missing workspace or working directory", async () => {
  await withDir(async (dir) => {
    const policy = createPolicy({ workspace: join(dir, "nope"), home: "", hostEnv: {} });
    await assert.rejects(
      resolvePlan(policy, dir),
      (e) => e instanceof PenguinError && /workspace .* does not exist/.test(e.message),
    );
    policy.workspace = dir;
    await assert.rejects(
      resolvePlan(policy, join(dir, "gone")),
      (e) => e instanceof PenguinError && /working directory/.test(e.message),
    );
  });
});

Deno.test("resolvePlan hides no Unix sockets: the seccomp filter refuses them instead", async () => {
  await withDir(async (dir) => {
    const ws = join(dir, "ws");
    await Deno.mkdir(ws);
    const path = join(dir, "agent.sock");
    const listener = Deno.listen({ transport: "unix", path });
    try {
      const plan = await resolvePlan(createPolicy({ workspace: ws, home: "", hostEnv: {} }), ws);
      // The seccomp filter refuses socket(AF_UNIX) instead (see seccomp_test.ts).
      assert.deepEqual(ownFiles(plan.hideFiles), []);
    } finally {
      listener.close();
    }
  });
});

Deno.test("parseSandboxMode accepts the three modes and rejects anything else", () => {
  for (const m of ["workspace-write", "read-only", "off"]) assert.equal(parseSandboxMode(m), m);
  assert.throws(
    () => parseSandboxMode("none"),
    (e) => e instanceof PenguinError && e.kind === "usage",
  );
});
