// The garbage of the nested-repository record directories (`_repo_trust_gc.ts`): the record of a
// root that is gone, and the `.lock`/`.active` of roots without a record, are removed; never a
// root a live process holds; and a process that opened a lock file before it was removed and
// locked it after does not keep a lock no other process can see. Records are made by penguin
// sessions in processes of their own (`_dying_session.ts`), with the test's run directory; the
// other processes holding lock files are `_trust_lock_holder.ts`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { visibleTempDir } from "./_helpers.ts";
import { collectRecordGarbage } from "../../lib/sandbox/_repo_trust_gc.ts";
import { runScriptInRunDir as runIn } from "./_run_dir_eval.ts";

const DYING = new URL("./_dying_session.ts", import.meta.url).pathname;
const HOLDER = new URL("./_trust_lock_holder.ts", import.meta.url).pathname;

async function keyOf(root: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(root));
  return [...new Uint8Array(hash)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const there = (path: string) => Deno.lstat(path).then(() => true, () => false);

/** The names of `dir`'s index entries, all `.below` directories together. */
async function indexEntries(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (!e.name.endsWith(".below")) continue;
    for await (const f of Deno.readDir(join(dir, e.name))) out.push(f.name);
  }
  return out;
}

/** A process of `_trust_lock_holder.ts`: its output lines, and its stdin to go on or end it. */
function holder(mode: "share" | "join", path: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", HOLDER, mode, path],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const out = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stdin = child.stdin.getWriter();
  let buffered = "";
  return {
    async line(): Promise<string> {
      while (!buffered.includes("\n")) {
        const { value, done } = await out.read();
        if (done) throw new Error(`the holder ended; output: ${buffered}`);
        buffered += value;
      }
      const at = buffered.indexOf("\n");
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      return line;
    },
    go: () => stdin.write(new TextEncoder().encode("go\n")),
    async end() {
      await stdin.close();
      await out.cancel();
      assert.equal((await child.status).code, 0);
    },
  };
}

async function withBase(fn: (base: string, runDir: string, dir: string) => Promise<void>) {
  const base = await Deno.realPath(await visibleTempDir("penguin-trustgc-"));
  try {
    const runDir = join(base, "run");
    await fn(base, runDir, join(runDir, "nested-repos"));
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

Deno.test("the record of a root that is gone is removed, with its index and locks", async () => {
  await withBase(async (base, runDir, dir) => {
    const gone = join(base, "gone", "ws");
    const kept = join(base, "kept");
    await Deno.mkdir(gone, { recursive: true });
    await Deno.mkdir(kept);
    // Two penguins died there: their records stay.
    await runIn(runDir, [DYING, gone]);
    await runIn(runDir, [DYING, kept]);
    const [g, k] = [await keyOf(gone), await keyOf(kept)];
    assert.ok(await there(join(dir, `${g}.json`)));
    assert.ok((await indexEntries(dir)).includes(g));
    await Deno.remove(join(base, "gone"), { recursive: true });

    const collected = await collectRecordGarbage([dir], dir);
    assert.equal(collected.records, 1);
    for (const suffix of [".json", ".lock", ".active"]) {
      assert.equal(await there(join(dir, g + suffix)), false, suffix);
    }
    assert.equal((await indexEntries(dir)).includes(g), false, "the gone root's index entries");
    // The record of a root that exists stays, and is still indexed.
    assert.ok(await there(join(dir, `${k}.json`)));
    assert.ok((await indexEntries(dir)).includes(k));
  });
});

Deno.test("lock files of a root without a record are removed; a held .active never", async () => {
  await withBase(async (base, runDir, dir) => {
    const gone = join(base, "gone");
    await Deno.mkdir(gone);
    await runIn(runDir, [DYING, gone]);
    await Deno.remove(gone);
    const g = await keyOf(gone);
    // A root used and left clean: no record, its .lock and .active left.
    const idle = "a".repeat(64);
    await Deno.writeTextFile(join(dir, `${idle}.lock`), "");
    await Deno.writeTextFile(join(dir, `${idle}.active`), "");
    // A live penguin holds both roots (a share lock on their .active).
    const holders = [
      holder("share", join(dir, `${g}.active`)),
      holder("share", join(dir, `${idle}.active`)),
    ];
    try {
      for (const h of holders) assert.equal(await h.line(), "held");
      await collectRecordGarbage([dir], dir);
      assert.ok(await there(join(dir, `${g}.json`)), "the held root's record");
      for (const key of [g, idle]) {
        assert.ok(await there(join(dir, `${key}.active`)), `${key}.active`);
        assert.ok(await there(join(dir, `${key}.lock`)), `${key}.lock`);
      }
    } finally {
      for (const h of holders) await h.end();
    }
    // Once they are gone, so is the garbage.
    await collectRecordGarbage([dir], dir);
    for (const path of [`${g}.json`, `${g}.active`, `${idle}.active`, `${idle}.lock`]) {
      assert.equal(await there(join(dir, path)), false, path);
    }
  });
});

Deno.test("a lock file removed between another process's open and flock is opened again", async () => {
  await withBase(async (_base, _runDir, dir) => {
    await Deno.mkdir(dir, { recursive: true });
    const key = "b".repeat(64);
    const lock = join(dir, `${key}.lock`);
    await Deno.writeTextFile(lock, "");
    await Deno.writeTextFile(join(dir, `${key}.active`), "");
    // A joining process opens the root's .lock and pauses before its flock...
    const joiner = holder("join", lock);
    try {
      assert.equal(await joiner.line(), "opened");
      // ...while the collection (nothing holds the root) removes it.
      assert.equal((await collectRecordGarbage([dir], dir)).idle, 1);
      assert.equal(await there(lock), false);
      await joiner.go();
      // The joiner holds the file at the path, not the removed one.
      const { held, path } = JSON.parse(await joiner.line()) as { held: number; path: number };
      assert.equal(path, held);
      const mine = await Deno.open(lock, { read: true, write: true });
      try {
        assert.equal(await mine.tryLock(true), false, "the joiner's lock is on the path's file");
      } finally {
        mine.close();
      }
    } finally {
      await joiner.end();
    }
  });
});

Deno.test("another penguin's record directory gets no file made in it by the collection", async () => {
  await withBase(async (base, runDir, dir) => {
    const gone = join(base, "gone");
    await Deno.mkdir(gone);
    await runIn(runDir, [DYING, gone]);
    await Deno.remove(gone);
    const g = await keyOf(gone);
    // The record of a root that is gone, without its .lock (as another penguin, removing its run
    // directory, has left it at that moment).
    await Deno.remove(join(dir, `${g}.lock`));
    const before = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();

    const collected = await collectRecordGarbage([dir], join(base, "own", "nested-repos"));
    assert.equal(collected.records, 0, "left to the processes of that directory");
    const after = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
    assert.deepEqual(after, before, "nothing made there");

    // Its own processes collect it (the .lock is made there).
    assert.equal((await collectRecordGarbage([dir], dir)).records, 1);
    assert.equal(await there(join(dir, `${g}.json`)), false);
  });
});
