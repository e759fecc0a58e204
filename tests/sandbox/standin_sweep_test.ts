// Stand-ins shared by penguin processes: recorded in a registry outside every sandbox, held
// through kernel locks, so a stand-in outlives the process that made it while another one still
// holds it, and one a killed penguin left is removed by the next one, only when unchanged.
import assert from "node:assert/strict";
import { join } from "node:path";
import { holdPlaceholders, sweepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { privateRunDir } from "../../lib/sandbox/_standin_registry.ts";
import { createPolicy, type Placeholder, resolvePlan } from "../../lib/sandbox/mod.ts";
import { isStandInShape } from "../../lib/sandbox/plan.ts";
import { exists, visibleTempDir } from "./_helpers.ts";
import { withWorkspace } from "../support/roots.ts";
import { standinHolderArgv, startStandinHolder } from "./_standin_holder_process.ts";

const linux = Deno.build.os === "linux";

interface Holder {
  pid: number;
  held: Placeholder[];
  /** SIGKILL it and reap it: a crash. */
  crash(): Promise<void>;
  /** Close its stdin: it releases its stand-ins and exits. */
  finish(): Promise<void>;
}

async function startHolder(args: string[], home?: string): Promise<Holder> {
  const { child, lines, out } = await startStandinHolder(args, home ? { env: { HOME: home } } : {});
  assert.ok(out.includes("\n"), `holder did not start: ${out}`);
  const stdin = child.stdin.getWriter();
  const end = async () => {
    await stdin.close().catch(() => {});
    await lines.cancel();
    return await child.status;
  };
  return {
    pid: child.pid,
    held: JSON.parse(out),
    crash: async () => {
      child.kill("SIGKILL");
      assert.equal((await end()).signal, "SIGKILL");
    },
    finish: async () => {
      assert.equal((await end()).code, 0);
    },
  };
}

async function writeAtomically(path: string, write: (tmp: string) => Promise<void>) {
  // The replacement exists before the original goes, so it cannot get the original's inode.
  const tmp = `${path}.new`;
  await write(tmp);
  await Deno.rename(tmp, path);
}

const policyOf = (ws: string) =>
  createPolicy({ workspace: ws, home: "", hostEnv: { PATH: "/usr/bin:/bin" } });

/** A test named `name`, Linux only, whose body runs in a fresh workspace. */
function inLinuxWorkspace(name: string, fn: (ws: string) => Promise<void>): Deno.TestDefinition {
  return { name, ignore: !linux, fn: () => withWorkspace(fn) };
}

/** A holder started with `args` and then crashed, leaving its stand-ins. */
async function crashedHolder(args: string[]): Promise<Holder> {
  const holder = await startHolder(args);
  await holder.crash();
  return holder;
}

Deno.test(
  inLinuxWorkspace(
    "a stand-in another penguin still holds outlives the release of the one that made it",
    async (ws) => {
      const maker = await startHolder(["plan", ws]);
      const paths = maker.held.map((p) => p.path).sort();
      assert.deepEqual(paths, [join(ws, ".git"), join(ws, "penguin.jsonc")]);
      // This process plans next: the other's stand-ins count as missing, so it holds them too.
      const plan = await resolvePlan(policyOf(ws), ws);
      assert.deepEqual(plan.placeholders?.map((p) => p.path).sort(), paths);
      const release = await holdPlaceholders(plan.placeholders ?? []);
      await maker.finish();
      for (const p of paths) assert.equal(await exists(p), true, `${p} still held here`);
      await release();
      for (const p of paths) assert.equal(await exists(p), false, `${p} removed by the last`);
    },
  ),
);

Deno.test(
  inLinuxWorkspace(
    "a stand-in made here outlives this process's release while another penguin holds it",
    async (ws) => {
      const plan = await resolvePlan(policyOf(ws), ws);
      const release = await holdPlaceholders(plan.placeholders ?? []);
      const joiner = await startHolder(["plan", ws]);
      assert.deepEqual(joiner.held, plan.placeholders);
      await release();
      for (const p of joiner.held) assert.equal(await exists(p.path), true, p.path);
      await joiner.finish();
      for (const p of joiner.held) assert.equal(await exists(p.path), false, p.path);
    },
  ),
);

Deno.test(
  inLinuxWorkspace(
    "the stand-ins of a killed penguin are removed by the next sweep",
    async (ws) => {
      const holder = await startHolder(["plan", ws]);
      const paths = holder.held.map((p) => p.path).sort();
      await holder.crash();
      for (const p of paths) assert.equal(await exists(p), true, `${p} left by the crash`);
      await sweepStandIns(isStandInShape);
      for (const p of paths) assert.equal(await exists(p), false, `${p} swept`);
    },
  ),
);

Deno.test(
  inLinuxWorkspace(
    "after a crash the next plan takes the left stand-ins for penguin's, not the user's",
    async (ws) => {
      const crashed = await crashedHolder(["plan", ws]);
      const next = await startHolder(["plan", ws]);
      assert.deepEqual(next.held, crashed.held);
      await next.finish();
      for (const p of next.held) assert.equal(await exists(p.path), false);
    },
  ),
);

Deno.test(
  inLinuxWorkspace(
    "a left stand-in the user changed, replaced or swapped for a link or FIFO is kept",
    async (ws) => {
      const git = join(ws, "g");
      await Deno.mkdir(git);
      const held: Placeholder[] = [
        { path: join(ws, ".git"), kind: "dir" },
        { path: join(git, "hooks"), kind: "dir" },
        { path: join(git, "commondir"), kind: "file", content: "." },
        { path: join(git, "config"), kind: "file", content: "" },
        { path: join(git, "config.worktree"), kind: "file", content: "" },
      ];
      await crashedHolder(["hold", JSON.stringify(held)]);
      const [dotGit, hooks, commondir, config, worktree] = held.map((p) => p.path);

      await Deno.writeTextFile(join(dotGit!, "HEAD"), "ref: refs/heads/main\n");
      // An empty directory again, but another one.
      await writeAtomically(hooks!, (tmp) => Deno.mkdir(tmp));
      await Deno.writeTextFile(join(ws, "dot"), ".");
      await writeAtomically(commondir!, (tmp) => Deno.symlink(join(ws, "dot"), tmp));
      await writeAtomically(config!, (tmp) => Deno.writeTextFile(tmp, ""));
      await Deno.remove(worktree!);
      const mkfifo = await new Deno.Command("mkfifo", { args: [worktree!] }).output();
      assert.ok(mkfifo.success);

      await sweepStandIns(isStandInShape);
      assert.equal(await Deno.readTextFile(join(dotGit!, "HEAD")), "ref: refs/heads/main\n");
      assert.ok((await Deno.lstat(hooks!)).isDirectory);
      assert.ok((await Deno.lstat(commondir!)).isSymlink);
      assert.equal(await Deno.readTextFile(config!), "");
      assert.ok((await Deno.lstat(worktree!)).isFifo);
      // Nothing left to sweep: the records of changed stand-ins are dropped.
      const next = await resolvePlan(policyOf(ws), ws);
      assert.ok(!next.placeholders?.some((p) => p.path === dotGit), "the .git is the user's now");
    },
  ),
);

Deno.test(
  inLinuxWorkspace(
    "the stand-ins of a running penguin are not swept; it removes them itself",
    async (ws) => {
      const holder = await startHolder(["plan", ws]);
      await sweepStandIns(isStandInShape);
      for (const p of holder.held) assert.equal(await exists(p.path), true);
      await holder.finish();
      for (const p of holder.held) {
        assert.equal(await exists(p.path), false);
      }
    },
  ),
);

Deno.test(
  inLinuxWorkspace(
    "a stand-in of a shape no plan makes is never swept, even when recorded",
    async (ws) => {
      const odd = { path: join(ws, "notes.txt"), kind: "file" as const, content: "keep me\n" };
      await crashedHolder(["hold", JSON.stringify([odd])]);
      await sweepStandIns(isStandInShape);
      assert.equal(await exists(odd.path), true);
    },
  ),
);

Deno.test(
  inLinuxWorkspace(
    "a penguin keeping its records elsewhere (another HOME) never removes what this one mounts",
    async (ws) => {
      const otherHome = await Deno.makeTempDir({ prefix: "penguin-other-home-" });
      try {
        const other = await startHolder(["plan", ws], otherHome);
        const dotGit = join(ws, ".git");
        assert.ok(other.held.some((p) => p.path === dotGit));
        // This process has no record of it: an empty .git counts as missing, but the hold finds
        // it there, not its own, and locks it as it locks every protected path.
        const plan = await resolvePlan(policyOf(ws), ws);
        assert.ok(plan.protect.includes(dotGit));
        const release = await holdPlaceholders(plan.placeholders ?? [], plan.protect);
        await other.finish();
        assert.equal(await exists(dotGit), true, "still mounted here: not removed");
        await release();
        // Left for a sweep of the other records: the next penguin with that HOME removes it.
        const next = await startHolder(["plan", ws], otherHome);
        await next.finish();
        assert.equal(await exists(dotGit), false);
      } finally {
        await Deno.remove(otherHome, { recursive: true });
      }
    },
  ),
);

/**
 * Run `script` in a sandbox of a workspace holding penguin's run directory two levels down, in a
 * penguin (the holder helper) whose HOME is a fresh directory: `$HOME` is the workspace, so the
 * run directory is `<workspace>/.penguin/run` (`PENGUIN_RUN_DIR`). Returns the command's output
 * and the HOME.
 */
async function inHomeWorkspace(script: string): Promise<{ out: string; home: string }> {
  const home = await visibleTempDir("penguin-standin-home-");
  const out = await new Deno.Command(Deno.execPath(), {
    args: standinHolderArgv(["sandbox", home, script]),
    env: { HOME: home, PENGUIN_RUN_DIR: join(home, ".penguin", "run") },
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).output();
  return { out: new TextDecoder().decode(out.stdout), home };
}

Deno.test({
  name: "the stand-in registry is out of every sandbox's reach, also in a workspace holding it",
  ignore: !linux,
  async fn() {
    const { out, home } = await inHomeWorkspace(
      `r=$HOME/.penguin/run/stand-ins; ls -A "$r" | wc -l; echo forged > "$r/forged.json"; ` +
        `echo st=$?; ls -A "$HOME/.penguin/run" | wc -l`,
    );
    try {
      // Inside, the run directory is an empty read-only directory: no registry to list or write.
      assert.match(out, /st=[1-9]\n0\n$/, `the run directory looks empty inside: ${out}`);
      const registry = join(home, ".penguin", "run", "stand-ins");
      assert.equal(await exists(registry), true, "the helper's registry exists on the host");
      assert.equal(await exists(join(registry, "forged.json")), false, "nothing written there");
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name: "penguin's private run directory cannot be moved aside and forged by a command",
  ignore: !linux,
  async fn() {
    const { out, home } = await inHomeWorkspace(
      `mv "$HOME/.penguin" "$HOME/.penguin-moved" 2>&1; echo mv=$?; ` +
        `mv "$HOME/.penguin/run" "$HOME/run-moved" 2>&1; echo mv2=$?`,
    );
    try {
      assert.match(out, /mv=[1-9]/, out);
      assert.match(out, /mv2=[1-9]/, out);
      assert.equal(await exists(join(home, ".penguin", "run")), true);
      assert.equal(await exists(join(home, ".penguin-moved")), false);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test("a workspace inside penguin's private run directory is refused", async () => {
  const run = await privateRunDir();
  const ws = join(run, "ws-inside");
  await Deno.mkdir(ws, { recursive: true });
  try {
    await assert.rejects(resolvePlan(policyOf(ws), ws), /private run directory/);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});
