// Stand-ins a killed penguin left behind: journaled outside the workspace, and removed by a later
// penguin only when their owner is gone and they are still exactly what it created.
import assert from "node:assert/strict";
import { join } from "node:path";
import { holdPlaceholders, sweepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { fileIds, journalDir, journalFile } from "../../lib/sandbox/_standin_journal.ts";
import { isStandInShape, type Placeholder } from "../../lib/sandbox/plan.ts";
import { exists } from "./_helpers.ts";
import { withWorkspace } from "../support/roots.ts";
import { penguinArgv, REPO } from "../support/cli.ts";
import { processStarts } from "../../lib/sandbox/_proc_facts.ts";

const HELPER = join(REPO, "tests/sandbox/_standin_holder.ts");
const linux = Deno.build.os === "linux";

interface Holder {
  pid: number;
  held: Placeholder[];
  /** The holder's journal file. */
  journal: string;
  /** SIGKILL it and reap it: a crash. */
  crash(): Promise<void>;
  /** Close its stdin: it releases its stand-ins and exits. */
  finish(): Promise<void>;
}

async function startHolder(args: string[]): Promise<Holder> {
  const child = new Deno.Command(Deno.execPath(), {
    // Under penguin's own permission set, which refuses every /proc read of its own.
    args: [...penguinArgv().slice(0, -1), HELPER, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await lines.read();
    if (done) break;
    out += value;
  }
  const start = (await processStarts([child.pid]))?.get(child.pid) ?? null;
  const journal = start === null ? undefined : await journalFile(child.pid, start);
  assert.ok(journal !== undefined, `holder did not start: ${out}`);
  const stdin = child.stdin.getWriter();
  const end = async () => {
    await stdin.close().catch(() => {});
    await lines.cancel();
    return await child.status;
  };
  return {
    pid: child.pid,
    held: JSON.parse(out),
    journal,
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

Deno.test({
  name: "the stand-ins of a killed penguin are removed by the next sweep, with their journal",
  ignore: !linux,
  async fn() {
    await withWorkspace(async (ws) => {
      const holder = await startHolder(["plan", ws]);
      const paths = holder.held.map((p) => p.path).sort();
      assert.deepEqual(paths, [join(ws, ".git"), join(ws, "penguin.jsonc")]);
      await holder.crash();
      for (const p of paths) assert.equal(await exists(p), true, `${p} left by the crash`);
      assert.equal(await exists(holder.journal), true);

      await sweepStandIns(isStandInShape);
      for (const p of paths) assert.equal(await exists(p), false, `${p} swept`);
      assert.equal(await exists(holder.journal), false);
    });
  },
});

Deno.test({
  name: "the next penguin sweeps before its first plan, which then holds the stand-ins anew",
  ignore: !linux,
  async fn() {
    await withWorkspace(async (ws) => {
      const crashed = await startHolder(["plan", ws]);
      await crashed.crash();
      const next = await startHolder(["plan", ws]);
      // Not taken for the user's .git and penguin.jsonc: held (and journaled) by the new one.
      assert.deepEqual(next.held, crashed.held);
      assert.equal(await exists(crashed.journal), false);
      await next.finish();
      for (const p of next.held) assert.equal(await exists(p.path), false);
    });
  },
});

Deno.test({
  name: "a left stand-in the user changed, replaced or swapped for a link or FIFO is kept",
  ignore: !linux,
  async fn() {
    await withWorkspace(async (ws) => {
      const git = join(ws, "g");
      await Deno.mkdir(git);
      const held: Placeholder[] = [
        { path: join(ws, ".git"), kind: "dir" },
        { path: join(git, "hooks"), kind: "dir" },
        { path: join(git, "commondir"), kind: "file", content: "." },
        { path: join(git, "config"), kind: "file", content: "" },
        { path: join(git, "config.worktree"), kind: "file", content: "" },
        { path: join(ws, "penguin.jsonc"), kind: "file", content: "{}\n" },
      ];
      const holder = await startHolder(["hold", JSON.stringify(held)]);
      await holder.crash();
      const [dotGit, hooks, commondir, config, worktree, policy] = held.map((p) => p.path);

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
      // The right shape and untouched, but not one a plan makes: a forged entry could name it.
      assert.equal(await Deno.readTextFile(policy!), "{}\n");
      assert.equal(await exists(holder.journal), false, "the entries are dropped all the same");
    });
  },
});

Deno.test({
  name: "the stand-ins of a running penguin are not touched; it removes them itself",
  ignore: !linux,
  async fn() {
    await withWorkspace(async (ws) => {
      const holder = await startHolder(["plan", ws]);
      await sweepStandIns(isStandInShape);
      for (const p of holder.held) assert.equal(await exists(p.path), true);
      assert.equal(await exists(holder.journal), true);
      await holder.finish();
      for (const p of holder.held) assert.equal(await exists(p.path), false);
      assert.equal(await exists(holder.journal), false, "nothing held, no journal");
    });
  },
});

Deno.test({
  name: "a journal written but not yet renamed into place when its owner died still counts",
  ignore: !linux,
  async fn() {
    await withWorkspace(async (ws) => {
      const holder = await startHolder(["plan", ws]);
      await holder.crash();
      await Deno.rename(holder.journal, `${holder.journal}.3.tmp`);
      await sweepStandIns(isStandInShape);
      for (const p of holder.held) assert.equal(await exists(p.path), false);
      assert.equal(await exists(`${holder.journal}.3.tmp`), false);
    });
  },
});

Deno.test({
  name: "a dead process's entry never removes a stand-in this process holds",
  ignore: !linux,
  async fn() {
    await withWorkspace(async (ws) => {
      const dotGit = join(ws, ".git");
      const release = await holdPlaceholders([{ path: dotGit, kind: "dir" }]);
      const gone = new Deno.Command("true").spawn();
      await gone.status;
      const forged = await journalFile(gone.pid, "0") ?? "";
      const ids = await fileIds(dotGit);
      await Deno.writeTextFile(
        forged,
        JSON.stringify({ standIns: [{ path: dotGit, kind: "dir", ids }] }),
      );
      await sweepStandIns(isStandInShape);
      assert.equal(await exists(dotGit), true, "still held: a sandbox mounts it");
      assert.equal(await exists(forged), false);
      await release();
      assert.equal(await exists(dotGit), false);
    });
  },
});

Deno.test({
  name: "a journal whose pid now belongs to another process (another start time) is swept",
  ignore: !linux,
  async fn() {
    await withWorkspace(async (ws) => {
      const holder = await startHolder(["plan", ws]);
      await holder.crash();
      // This test's own pid, alive, but not the process that wrote the journal.
      const reused = await journalFile(Deno.pid, "1") ?? "";
      await Deno.rename(holder.journal, reused);
      await sweepStandIns(isStandInShape);
      for (const p of holder.held) assert.equal(await exists(p.path), false);
      assert.equal(await exists(reused), false);
    });
  },
});

Deno.test({
  name: "corrupt, unreadable or blocking journal files, and entries without identity, are dropped",
  ignore: !linux,
  async fn() {
    await withWorkspace(async (ws) => {
      // A pid no process has any more, and with a start time no process had.
      const gone = new Deno.Command("true").spawn();
      await gone.status;
      const names = await Promise.all(
        [0, 1, 2, 3, 4].map(async (i) => await journalFile(gone.pid, `${i}`) ?? ""),
      );
      await Deno.writeTextFile(names[0]!, "{not json");
      await Deno.writeTextFile(names[1]!, JSON.stringify({ standIns: [{ path: 7 }, null, "x"] }));
      await Deno.mkdir(names[2]!);
      assert.ok((await new Deno.Command("mkfifo", { args: [names[3]!] }).output()).success);
      // Killed between creating a stand-in and noting its identity: it may be the user's by now.
      const dotGit = join(ws, ".git");
      await Deno.mkdir(dotGit);
      await Deno.writeTextFile(
        names[4]!,
        JSON.stringify({ standIns: [{ path: dotGit, kind: "dir" }] }),
      );
      await sweepStandIns(isStandInShape);
      for (const name of names) assert.equal(await exists(name), false, name);
      assert.equal(await exists(dotGit), true);
    });
  },
});

Deno.test({
  name: "the journal of another PID namespace (a /tmp shared with a container) is left alone",
  ignore: !linux,
  async fn() {
    await withWorkspace(async (ws) => {
      const dotGit = join(ws, ".git");
      await Deno.mkdir(dotGit);
      const ids = await fileIds(dotGit);
      const ns = /\[(\d+)\]/.exec(await Deno.readLink("/proc/self/ns/pid"))![1]!;
      const other = join(await journalDir() ?? "", `${Number(ns) + 1}-1-0.json`);
      await Deno.writeTextFile(
        other,
        JSON.stringify({ standIns: [{ path: dotGit, kind: "dir", ids }] }),
      );
      try {
        await sweepStandIns(isStandInShape);
        assert.equal(await exists(dotGit), true, "pid 1 there may be a live penguin");
        assert.equal(await exists(other), true);
      } finally {
        await Deno.remove(other);
      }
    });
  },
});
