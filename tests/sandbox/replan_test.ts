// A path the plan hides or mounts that goes away before bubblewrap gets to it (another data root
// removed meanwhile, a repository deleted) makes penguin plan again instead of failing the command.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, detectSandbox, resolvePlan, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { planPathVanished } from "../../lib/sandbox/plan.ts";
import { collect, visibleTempDir } from "./_helpers.ts";
import { evalInRunDir } from "./_run_dir_eval.ts";
import { knownDataRoots, rememberDataRoot } from "../../lib/sandbox/_data_roots.ts";

const bwrap = Deno.build.os === "linux" && (await detectSandbox()).kind === "bwrap";

/**
 * Runs `fn` with a policy hiding a directory that is removed after the plan, before bwrap starts
 * (when the seccomp filter file is looked at); `removed()` tells whether that happened.
 */
async function withHiddenDirGoneAfterPlan(
  prefix: string,
  fn: (
    ws: string,
    policy: ReturnType<typeof createPolicy>,
    removed: () => boolean,
  ) => Promise<void>,
): Promise<void> {
  const base = await visibleTempDir(prefix);
  const ws = join(base, "ws");
  const gone = join(base, "other-data-root");
  await Deno.mkdir(ws);
  await Deno.mkdir(gone);
  const deno = Deno as unknown as { lstat: (p: string | URL) => Promise<Deno.FileInfo> };
  const real = deno.lstat;
  let removed = false;
  deno.lstat = (p) => {
    if (!removed && String(p).endsWith("/filter")) {
      removed = true;
      Deno.removeSync(gone);
    }
    return real(p);
  };
  try {
    const policy = createPolicy({
      workspace: ws,
      home: "",
      hostEnv: { PATH: "/usr/bin:/bin" },
      hide: [gone],
    });
    await fn(ws, policy, () => removed);
  } finally {
    deno.lstat = real;
    await Deno.remove(base, { recursive: true });
  }
}

Deno.test({
  name: "a hidden directory removed between the plan and the sandbox's start is planned again",
  ignore: !bwrap,
  async fn() {
    await withHiddenDirGoneAfterPlan("penguin-replan-", async (_ws, policy, removed) => {
      const r = await collect(await spawnSandboxed({ shell: "echo ran", policy, stdin: "null" }));
      assert.ok(removed(), "the directory went away after the plan");
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /^ran$/m);
    });
  },
});

Deno.test({
  name: "a command sharing penguin's stdio starts again when a hidden directory went away first",
  ignore: !bwrap,
  async fn() {
    await withHiddenDirGoneAfterPlan("penguin-replan-inherit-", async (ws, policy, removed) => {
      // No control channel here: bwrap's failure shows only once it has exited.
      const child = await spawnSandboxed({
        shell: "echo ran >> runs.txt",
        policy,
        stdin: "null",
        stdio: "inherit",
      });
      const st = await child.status;
      assert.ok(removed(), "the directory went away after the plan");
      assert.equal(st.code, 0);
      assert.equal(await Deno.readTextFile(join(ws, "runs.txt")), "ran\n");
    });
  },
});

Deno.test({
  name: "a command sharing penguin's stdio that fails is not started again",
  ignore: !bwrap,
  async fn() {
    const ws = await visibleTempDir("penguin-replan-once-");
    try {
      const policy = createPolicy({ workspace: ws, home: "", hostEnv: { PATH: "/usr/bin:/bin" } });
      const child = await spawnSandboxed({
        shell: "echo ran >> runs.txt; exit 1",
        policy,
        stdin: "null",
        stdio: "inherit",
      });
      assert.equal((await child.status).code, 1);
      assert.equal(await Deno.readTextFile(join(ws, "runs.txt")), "ran\n");
    } finally {
      await Deno.remove(ws, { recursive: true });
    }
  },
});

Deno.test("the probe's plan leaves other data roots alone; a session's hides them", async () => {
  const base = await visibleTempDir("penguin-replan-roots-");
  const root = join(base, "other-root");
  const ws = join(base, "ws");
  await Deno.mkdir(join(root, "p"), { recursive: true });
  await Deno.writeTextFile(join(root, "p", ".project_config.toml"), "");
  await Deno.mkdir(ws);
  try {
    await rememberDataRoot(root);
    const policy = createPolicy({ workspace: ws, home: "", hostEnv: { PATH: "/usr/bin:/bin" } });
    assert.ok((await resolvePlan(policy, ws)).hideDirs.includes(root));
    policy.hideOtherDataRoots = false;
    assert.ok(!(await resolvePlan(policy, ws)).hideDirs.includes(root));
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("data roots noted at the same time are all kept in the list", async () => {
  const base = await visibleTempDir("penguin-roots-race-");
  try {
    const roots = Array.from({ length: 24 }, (_, i) => join(base, `r${i}`));
    for (const r of roots) await Deno.mkdir(r);
    await Promise.all(roots.map((r) => rememberDataRoot(r)));
    const known = await knownDataRoots();
    assert.deepEqual(roots.filter((r) => !known.includes(r)), [], "none dropped");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a root noted before it exists stays in the list while its parent does; a gone one is dropped", async () => {
  const base = await visibleTempDir("penguin-roots-early-");
  const gone = await visibleTempDir("penguin-roots-gone-");
  try {
    const early = join(base, "not-made-yet");
    const other = join(base, "other");
    const dropped = join(gone, "root");
    await Deno.mkdir(other);
    await rememberDataRoot(early);
    await rememberDataRoot(dropped);
    await Deno.remove(gone, { recursive: true });
    // Another penguin notes its root meanwhile (it rewrites the list).
    await rememberDataRoot(other);
    const known = await knownDataRoots();
    assert.ok(known.includes(early), "the root about to be made is kept");
    assert.ok(!known.includes(dropped), "a root gone with its parent is dropped");
  } finally {
    await Deno.remove(base, { recursive: true });
    await Deno.remove(gone, { recursive: true }).catch(() => {});
  }
});

Deno.test("a noted root whose project has only a vault (no configuration yet) is hidden", async () => {
  const base = await visibleTempDir("penguin-roots-vault-only-");
  const root = join(base, "other-root");
  const ws = join(base, "ws");
  await Deno.mkdir(join(root, "p", "agents", "a", "agent_state"), { recursive: true });
  await Deno.writeTextFile(join(root, "p", "agents", "a", "agent_state", ".vault.toml"), "");
  await Deno.mkdir(join(base, "plain", "sub"), { recursive: true });
  await Deno.mkdir(ws);
  try {
    await rememberDataRoot(root);
    await rememberDataRoot(join(base, "plain"));
    const policy = createPolicy({ workspace: ws, home: "", hostEnv: { PATH: "/usr/bin:/bin" } });
    const plan = await resolvePlan(policy, ws);
    assert.ok(plan.hideDirs.includes(root));
    assert.ok(!plan.hideDirs.includes(join(base, "plain")), "a directory with no project is not");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test({
  name:
    "a command sharing penguin's stdio leaves no setup log behind, whether it ends or is killed",
  ignore: !bwrap,
  async fn() {
    // In a process with a run directory of its own, so other tests' logs do not count.
    const base = await visibleTempDir("penguin-setup-log-");
    try {
      await new Deno.Command("mkfifo", { args: [join(base, "f")] }).output();
      const mod = new URL("../../lib/sandbox/mod.ts", import.meta.url).href;
      const script = `
        import { createPolicy, spawnSandboxed } from ${JSON.stringify(mod)};
        const policy = createPolicy({ workspace: ${JSON.stringify(base)}, home: "",
          hostEnv: { PATH: "/usr/bin:/bin" } });
        const ended = await spawnSandboxed({ shell: "true", policy, stdin: "null", stdio: "inherit" });
        await ended.status;
        const killed = await spawnSandboxed({ shell: "cat f >/dev/null", policy, stdin: "null",
          stdio: "inherit" });
        // Opening the fifo returns once the command has opened it: it runs.
        const writer = await Deno.open(${JSON.stringify(join(base, "f"))}, { write: true });
        await killed.kill(100);
        writer.close();
        const logs = [];
        for await (const e of Deno.readDir(Deno.env.get("PENGUIN_RUN_DIR"))) {
          if (e.name.startsWith("setup-")) logs.push(e.name);
        }
        console.log(JSON.stringify(logs));`;
      const text = await evalInRunDir(script, join(base, ".run"));
      assert.deepEqual(JSON.parse(text.trim().split("\n").at(-1)!), []);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test("a setup failure naming a path that is gone counts as a vanished path, whichever list held it", async () => {
  const base = await visibleTempDir("penguin-replan-named-");
  const ws = join(base, "ws");
  await Deno.mkdir(ws);
  try {
    const policy = createPolicy({ workspace: ws, home: "", hostEnv: { PATH: "/usr/bin:/bin" } });
    // Only this test's paths: another test's run directory or data root in the plan may vanish
    // while the suite runs, which is news of its own (CI of 78639a8).
    const mine = (ps: readonly string[]) =>
      ps.filter((p) => p === base || p.startsWith(base + "/"));
    const whole = await resolvePlan(policy, ws);
    const plan = {
      ...whole,
      roots: mine(whole.roots),
      hideDirs: mine(whole.hideDirs),
      privateDirs: mine(whole.privateDirs ?? []),
      hideFiles: mine(whole.hideFiles),
      protect: mine(whole.protect),
      pinned: mine(whole.pinned ?? []),
      reveals: (whole.reveals ?? []).filter((r) => mine([r.source]).length > 0),
    };
    const gone = join(base, "removed-with-its-parent", "run");
    const said = (p: string) => `bwrap: Can't mkdir parents for ${p}: Read-only file system`;
    // The protected .git and penguin.jsonc are missing: their stand-ins are made at the start.
    assert.equal(planPathVanished(plan), false, "every path the plan found is there");
    assert.equal(planPathVanished(plan, said(gone)), true, "the path bwrap named is gone");
    assert.equal(planPathVanished(plan, said(ws)), false, "the path bwrap named is there");
    // A path the plan knew to be missing (a tmpfs in its place, a stand-in) is no news.
    assert.equal(planPathVanished({ ...plan, protectMissing: [gone] }, said(gone)), false);
    assert.ok(plan.placeholders?.some((p) => p.path === join(ws, ".git")), "a stand-in is planned");
    assert.equal(planPathVanished(plan, said(join(ws, ".git"))), false);
    assert.equal(
      planPathVanished(plan, `bwrap: Can't find source path ${gone}: No such file`),
      true,
    );
    assert.equal(planPathVanished(plan, "bwrap: setting up uid map: Permission denied"), false);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
