// penguin's stand-ins are made and removed by a shell that enters their parent directory and checks
// it lies at its path, never through a path a rename may have redirected (issue 26, red team C20):
// a workspace swapped for a link to another directory gets no stand-in there, and stand-ins of a
// workspace renamed while they were held keep their records until it is back, then go.
import assert from "node:assert/strict";
import { join } from "node:path";
import { visibleTempDir } from "../support/roots.ts";
import { standinHolderArgv, startStandinHolder } from "./_standin_holder_process.ts";
import { dirNames as names } from "../support/dir_names.ts";
const linux = Deno.build.os === "linux";

interface Holder {
  /** The first line it printed: the held placeholders, or "" when it failed to hold them. */
  started: string;
  /** Close its stdin: it lets go and exits. */
  finish(): Promise<{ code: number; stderr: string }>;
}

/** A penguin process (own run directory) holding `placeholders` until its stdin closes. */
async function hold(runDir: string, placeholders: unknown[]): Promise<Holder> {
  const { child, lines, out } = await startStandinHolder(
    ["hold", JSON.stringify(placeholders)],
    { env: { PENGUIN_RUN_DIR: runDir }, stderr: "piped" },
  );
  const stderr = new Response(child.stderr).text();
  return {
    started: out.trim(),
    finish: async () => {
      await child.stdin.close().catch(() => {});
      await lines.cancel();
      const { code } = await child.status;
      return { code, stderr: await stderr };
    },
  };
}

/** A penguin process (own run directory) sweeping stand-ins no one holds; its exit code. */
async function sweep(runDir: string): Promise<number> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: standinHolderArgv(["sweep"]),
    env: { PENGUIN_RUN_DIR: runDir },
    stdin: "null",
  }).output();
  return out.code;
}

/** `outer/ws`, `victim` (the user's, outside every workspace) and a link `outer/swap -> ../victim`. */
async function layout() {
  const base = await visibleTempDir("penguin-standin-swap-");
  const outer = join(base, "outer");
  const ws = join(outer, "ws");
  const victim = join(base, "victim");
  await Deno.mkdir(ws, { recursive: true });
  await Deno.mkdir(join(victim, ".git"), { recursive: true });
  await Deno.writeTextFile(join(victim, "keep.txt"), "the user's\n");
  await Deno.symlink("../victim", join(outer, "swap"));
  const runDir = join(base, "run");
  await Deno.mkdir(runDir, { mode: 0o700 });
  return { base, outer, ws, victim, runDir };
}

/** The swap a renaming session makes, held: `outer/ws` leads to `victim`, the workspace is `outer/moved`. */
async function swap(outer: string): Promise<void> {
  await Deno.rename(join(outer, "ws"), join(outer, "moved"));
  await Deno.rename(join(outer, "swap"), join(outer, "ws"));
}

async function records(runDir: string): Promise<string[]> {
  return (await names(join(runDir, "stand-ins"))).filter((n) => n.endsWith(".json"));
}

Deno.test({
  name: "a workspace swapped for a link: no stand-in is made in the directory it leads to",
  ignore: !linux,
  fn: async () => {
    const l = await layout();
    try {
      await swap(l.outer);
      const h = await hold(l.runDir, [
        { path: join(l.ws, "penguin.jsonc"), kind: "file", content: "{}\n" },
        { path: join(l.ws, "sub"), kind: "dir" },
      ]);
      // Looked at while the holder would hold them.
      const seen = await names(l.victim);
      const end = await h.finish();
      assert.equal(h.started, "", "nothing held");
      assert.notEqual(end.code, 0);
      assert.match(end.stderr, /no longer lies in the directory the plan saw/);
      assert.deepEqual(seen, [".git", "keep.txt"], "no stand-in in the victim");
      assert.deepEqual(await names(l.victim), [".git", "keep.txt"]);
      assert.deepEqual(await names(join(l.outer, "moved")), []);
      assert.deepEqual(await records(l.runDir), [], "no record left");
    } finally {
      await Deno.remove(l.base, { recursive: true });
    }
  },
});

Deno.test({
  name: "a workspace renamed and replaced by a link while stand-ins are held: nothing of the " +
    "same name elsewhere is removed; the stand-ins go once it is back",
  ignore: !linux,
  fn: async () => {
    const l = await layout();
    try {
      const h = await hold(l.runDir, [
        { path: join(l.ws, ".git"), kind: "dir" },
        { path: join(l.ws, "penguin.jsonc"), kind: "file", content: "{}\n" },
      ]);
      assert.notEqual(h.started, "", "held");
      assert.deepEqual(await names(l.ws), [".git", "penguin.jsonc"]);
      // The victim holds the same names, the user's: an empty .git and a penguin.jsonc.
      await Deno.writeTextFile(join(l.victim, "penguin.jsonc"), "{}\n");
      await swap(l.outer);
      const end = await h.finish();
      assert.equal(end.code, 0, end.stderr);
      assert.deepEqual(await names(l.victim), [".git", "keep.txt", "penguin.jsonc"]);
      assert.equal(await Deno.readTextFile(join(l.victim, "penguin.jsonc")), "{}\n");
      // Left where the workspace went, and still recorded: not lost track of.
      assert.deepEqual(await names(join(l.outer, "moved")), [".git", "penguin.jsonc"]);
      assert.equal((await records(l.runDir)).length, 2, "records kept");
      // A sweep while still swapped keeps them too, and touches nothing in the victim.
      assert.equal(await sweep(l.runDir), 0);
      assert.deepEqual(await names(l.victim), [".git", "keep.txt", "penguin.jsonc"]);
      assert.equal((await records(l.runDir)).length, 2, "records kept by the sweep");
      // The workspace back: the next sweep removes them.
      await Deno.rename(join(l.outer, "ws"), join(l.outer, "swap"));
      await Deno.rename(join(l.outer, "moved"), join(l.outer, "ws"));
      assert.equal(await sweep(l.runDir), 0);
      assert.deepEqual(await names(l.ws), []);
      assert.deepEqual(await names(l.victim), [".git", "keep.txt", "penguin.jsonc"]);
      assert.deepEqual(await records(l.runDir), [], "no record left");
    } finally {
      await Deno.remove(l.base, { recursive: true });
    }
  },
});
