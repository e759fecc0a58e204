// The file helpers every layer shares (lib/state/_fs.ts) and sleep
// (lib/protocol/sleep.ts), on real files in a temp dir.
import assert from "node:assert/strict";
import { join } from "node:path";
import { exists, mkdirPrivate, writeFileAtomic } from "../../lib/state/_fs.ts";
import { sleep } from "../../lib/protocol/sleep.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "penguin-fs-" });
  try {
    await fn(dir);
  } finally {
    await Deno.chmod(dir, 0o700).catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
}

const modeOf = async (p: string) => (await Deno.lstat(p)).mode! & 0o777;
const isRoot = Deno.uid() === 0;

Deno.test("exists: kinds, links followed or not, and strict failures", async () => {
  await withDir(async (dir) => {
    const file = join(dir, "f");
    const sub = join(dir, "d");
    const link = join(dir, "l");
    const dangling = join(dir, "gone");
    await Deno.writeTextFile(file, "x");
    await Deno.mkdir(sub);
    await Deno.symlink(sub, link);
    await Deno.symlink(join(dir, "nowhere"), dangling);

    assert.equal(await exists(file), true);
    assert.equal(await exists(join(dir, "missing")), false);
    assert.equal(await exists(file, { kind: "file" }), true);
    assert.equal(await exists(sub, { kind: "file" }), false);
    assert.equal(await exists(sub, { kind: "directory" }), true);
    // A link to a directory is a directory only when followed.
    assert.equal(await exists(link, { kind: "directory" }), true);
    assert.equal(await exists(link, { kind: "directory", followLinks: false }), false);
    // A dangling link exists as an entry, not as what it points to.
    assert.equal(await exists(dangling), false);
    assert.equal(await exists(dangling, { followLinks: false }), true);
    // Not a directory: false, and strict rethrows it (only "not found" is an answer).
    assert.equal(await exists(join(file, "x")), false);
    await assert.rejects(
      () => exists(join(file, "x"), { strict: true }),
      Deno.errors.NotADirectory,
    );
    assert.equal(await exists(join(dir, "missing"), { strict: true }), false);
  });
});

Deno.test("mkdirPrivate creates each missing directory 0700 and leaves existing ones", async () => {
  await withDir(async (dir) => {
    const kept = join(dir, "kept");
    await Deno.mkdir(kept, { mode: 0o755 });
    await Deno.chmod(kept, 0o755);
    const deep = join(kept, "a", "b", "c");
    // A umask taking the owner's write bit: each created directory is chmod-ed back to 0700.
    const umask = Deno.umask(0o200);
    try {
      await mkdirPrivate(deep);
    } finally {
      Deno.umask(umask);
    }
    assert.equal(await modeOf(kept), 0o755);
    for (const p of [join(kept, "a"), join(kept, "a", "b"), deep]) {
      assert.equal(await modeOf(p), 0o700);
    }
    await mkdirPrivate(deep); // existing: fine
  });
});

Deno.test("mkdirPrivate and writeFileAtomic name the path of a failure the user must fix", {
  ignore: isRoot,
}, async () => {
  await withDir(async (dir) => {
    const locked = join(dir, "locked");
    await Deno.mkdir(locked);
    await Deno.chmod(locked, 0o500);
    const err = await mkdirPrivate(join(locked, "x")).catch((e) => e);
    assert.ok(err instanceof PenguinError, String(err));
    assert.match(err.message, /Cannot create the directory ".*locked\/x": permission denied/);
    const werr = await writeFileAtomic(join(locked, "f"), "x").catch((e) => e);
    assert.ok(werr instanceof PenguinError, String(werr));
    assert.match(werr.message, /Cannot write ".*locked\/f": permission denied/);
    await Deno.chmod(locked, 0o700);
  });
});

Deno.test("writeFileAtomic: text or bytes, exact mode or the default, links replaced", async () => {
  await withDir(async (dir) => {
    const p = join(dir, "f.txt");
    await writeFileAtomic(p, "héllo", 0o640);
    assert.equal(await Deno.readTextFile(p), "héllo");
    assert.equal(await modeOf(p), 0o640);
    // The mode is applied exactly on every write, whatever the file had.
    await Deno.chmod(p, 0o666);
    await writeFileAtomic(p, new Uint8Array([104, 105]), 0o600);
    assert.equal(await Deno.readTextFile(p), "hi");
    assert.equal(await modeOf(p), 0o600);
    // Without a mode: 0666 minus the umask.
    const q = join(dir, "g.txt");
    const umask = Deno.umask(0o022);
    try {
      await writeFileAtomic(q, "x");
    } finally {
      Deno.umask(umask);
    }
    assert.equal(await modeOf(q), 0o644);
    // A hard link is replaced, not written through; a symlink is replaced by the file.
    const other = join(dir, "other");
    await Deno.writeTextFile(other, "keep");
    const hard = join(dir, "hard");
    await Deno.link(other, hard);
    await writeFileAtomic(hard, "new", 0o600);
    assert.equal(await Deno.readTextFile(other), "keep");
    const soft = join(dir, "soft");
    await Deno.symlink(other, soft);
    await writeFileAtomic(soft, "new", 0o600);
    assert.equal(await Deno.readTextFile(other), "keep");
    assert.equal((await Deno.lstat(soft)).isFile, true);
    // No temp file is left behind.
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names.filter((n) => n.includes(".tmp-")), []);
    // A long name still gets a temp file (its base is cut).
    const long = join(dir, "n".repeat(250));
    await writeFileAtomic(long, "x", 0o600);
    assert.equal(await Deno.readTextFile(long), "x");
  });
});

Deno.test("sleep resolves after the time, or at once on abort, and never rejects", async () => {
  const order: string[] = [];
  await Promise.all([
    sleep(20).then(() => order.push("later")),
    sleep(1).then(() => order.push("sooner")),
  ]);
  assert.deepEqual(order, ["sooner", "later"]);
  const ac = new AbortController();
  const pending = sleep(3_600_000, ac.signal);
  ac.abort();
  await pending; // an hour-long timer left running would fail the test's leak check
  const pre = new AbortController();
  pre.abort();
  await sleep(3_600_000, pre.signal);
});
