// Escapes attempted through the real file tools, each proven by looking at the
// outside world afterwards: outside files keep their content, nothing is created.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createEditFileTool } from "../../lib/tools/edit_file.ts";
import { createReadFileTool } from "../../lib/tools/read_file.ts";
import { createWriteFileTool } from "../../lib/tools/write_file.ts";
import { type Dirs, entries, readOrUndefined, run, withDirs } from "./_support.ts";

const read = createReadFileTool();
const write = createWriteFileTool();
const edit = createEditFileTool();
const SECRET = "TOP-SECRET-CONTENT";

function refused(output: string): boolean {
  return output.includes("outside the workspace") || output.startsWith("Refusing to");
}

/** The outside file `name`, holding SECRET; its path. */
async function outsideSecret(d: Dirs, name: string): Promise<string> {
  const target = join(d.outside, name);
  await Deno.writeTextFile(target, SECRET);
  return target;
}

Deno.test("'../' paths cannot read, create, overwrite or edit outside files", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.outside, "s.txt"), SECRET);
    const r = await run(read, { file_path: "../outside/s.txt" }, d);
    assert.ok(refused(r.output) && !r.output.includes(SECRET));
    assert.equal(r.status, "failed");
    const w = await run(write, { file_path: "../outside/s.txt", content: "pwned" }, d);
    assert.ok(refused(w.output));
    const c = await run(write, { file_path: "../outside/new.txt", content: "pwned" }, d);
    assert.ok(refused(c.output));
    const e = await run(edit, {
      file_path: "../outside/s.txt",
      old_string: "TOP",
      new_string: "pwned",
    }, d);
    assert.ok(refused(e.output));
    assert.equal(await Deno.readTextFile(join(d.outside, "s.txt")), SECRET);
    assert.equal(await readOrUndefined(join(d.outside, "new.txt")), undefined);
  });
});

Deno.test("absolute paths outside the workspace are refused: /etc/passwd and another temp dir", async () => {
  await withDirs(async (d) => {
    const passwd = await run(read, { file_path: "/etc/passwd" }, d);
    assert.ok(refused(passwd.output) && !passwd.output.includes("root:"));
    const target = await outsideSecret(d, "abs.txt");
    const w = await run(write, { file_path: target, content: "pwned" }, d);
    assert.ok(refused(w.output));
    const e = await run(edit, { file_path: target, old_string: SECRET, new_string: "pwned" }, d);
    assert.ok(refused(e.output));
    const fresh = await run(write, { file_path: join(d.outside, "fresh.txt"), content: "x" }, d);
    assert.ok(refused(fresh.output));
    assert.equal(await Deno.readTextFile(target), SECRET);
    assert.equal(await readOrUndefined(join(d.outside, "fresh.txt")), undefined);
  });
});

Deno.test("a symlink inside the workspace pointing outside cannot be read, written or edited through", async () => {
  await withDirs(async (d) => {
    const target = await outsideSecret(d, "secret.txt");
    await Deno.symlink(target, join(d.ws, "link"));
    const r = await run(read, { file_path: "link" }, d);
    assert.ok(refused(r.output) && !r.output.includes(SECRET));
    const w = await run(write, { file_path: "link", content: "pwned" }, d);
    assert.ok(refused(w.output));
    const e = await run(edit, { file_path: "link", old_string: "TOP", new_string: "pwned" }, d);
    assert.ok(refused(e.output));
    assert.equal(await Deno.readTextFile(target), SECRET);
    assert.ok((await Deno.lstat(join(d.ws, "link"))).isSymlink, "the link itself is left alone");
  });
});

Deno.test("a dangling symlink pointing outside cannot be used to create the outside file", async () => {
  await withDirs(async (d) => {
    await Deno.symlink(join(d.outside, "planted.txt"), join(d.ws, "dangling"));
    const w = await run(write, { file_path: "dangling", content: "pwned" }, d);
    assert.ok(refused(w.output));
    assert.equal(await readOrUndefined(join(d.outside, "planted.txt")), undefined);
  });
});

Deno.test("a symlinked directory pointing outside cannot receive new files or parents", async () => {
  await withDirs(async (d) => {
    await Deno.symlink(d.outside, join(d.ws, "dir"));
    const w = await run(write, { file_path: "dir/new.txt", content: "pwned" }, d);
    assert.ok(refused(w.output));
    const deep = await run(write, { file_path: "dir/a/b/c.txt", content: "pwned" }, d);
    assert.ok(refused(deep.output));
    assert.deepEqual(await entries(d.outside), []);
  });
});

Deno.test("/proc/self/root and /proc/self/cwd cannot reach outside files", async () => {
  await withDirs(async (d) => {
    const target = await outsideSecret(d, "p.txt");
    const viaRoot = `/proc/self/root${target}`;
    const r = await run(read, { file_path: viaRoot }, d);
    assert.ok(refused(r.output) && !r.output.includes(SECRET));
    const w = await run(write, { file_path: viaRoot, content: "pwned" }, d);
    assert.ok(refused(w.output));
    const cwd = await run(read, { file_path: "/proc/self/cwd/deno.json" }, d);
    assert.ok(refused(cwd.output));
    assert.equal(await Deno.readTextFile(target), SECRET);
  });
});

Deno.test("secret files are refused by every file tool even when the workspace holds them", async () => {
  await withDirs(async (d) => {
    const vault = join(d.ws, ".vault.toml");
    await Deno.writeTextFile(vault, `API_KEY = "${SECRET}"`);
    await Deno.writeTextFile(join(d.ws, ".project_config.toml"), `api_key = "${SECRET}"`);
    await Deno.symlink(".vault.toml", join(d.ws, "notes.txt"));
    for (const p of [".vault.toml", ".project_config.toml", "notes.txt", ".Vault.TOML"]) {
      const r = await run(read, { file_path: p }, d);
      assert.ok(r.output.startsWith(`Refusing to read "${p}"`), r.output);
      assert.ok(!r.output.includes(SECRET));
    }
    const w = await run(write, { file_path: ".vault.toml", content: "x" }, d);
    assert.ok(w.output.startsWith('Refusing to write ".vault.toml"'));
    const e = await run(edit, { file_path: "notes.txt", old_string: "API", new_string: "x" }, d);
    assert.ok(e.output.startsWith('Refusing to edit "notes.txt"'));
    assert.equal(await Deno.readTextFile(vault), `API_KEY = "${SECRET}"`);
  });
});

Deno.test("a symlink pointing inside the workspace works for read, write and edit", async () => {
  await withDirs(async (d) => {
    await Deno.mkdir(join(d.ws, "real"));
    await Deno.writeTextFile(join(d.ws, "real", "f.txt"), "one\n");
    await Deno.symlink("real/f.txt", join(d.ws, "alias.txt"));
    assert.equal((await run(read, { file_path: "alias.txt" }, d)).output, "     1\tone");
    const w = await run(write, { file_path: "alias.txt", content: "two\n" }, d);
    assert.equal(w.status, "completed");
    const e = await run(
      edit,
      { file_path: "alias.txt", old_string: "two", new_string: "three" },
      d,
    );
    assert.equal(e.status, "completed");
    assert.equal(await Deno.readTextFile(join(d.ws, "real", "f.txt")), "three\n");
    assert.ok(
      (await Deno.lstat(join(d.ws, "alias.txt"))).isSymlink,
      "the link survives the atomic writes",
    );
  });
});

Deno.test("the session scratchpad is reachable by absolute path, and created on demand", async () => {
  await withDirs(async (d) => {
    const file = join(d.scratch, "notes", "n.md");
    const w = await run(write, { file_path: file, content: "note\n" }, d);
    assert.equal(w.status, "completed");
    assert.equal((await run(read, { file_path: file }, d)).output, "     1\tnote");
  });
});

// Documented limit: a hard link to an outside file reads like any workspace
// file (the OS sandbox prevents creating one); writes replace the link by
// rename, so the outside inode is never modified.
Deno.test("writes through a hard link replace the link and leave the outside file unchanged", async () => {
  await withDirs(async (d) => {
    const target = await outsideSecret(d, "hl.txt");
    await Deno.link(target, join(d.ws, "hl.txt"));
    const r = await run(read, { file_path: "hl.txt" }, d);
    assert.ok(r.output.includes(SECRET), "a hard link is not detectable by path");
    await run(write, { file_path: "hl.txt", content: "new" }, d);
    await run(edit, { file_path: "hl.txt", old_string: "new", new_string: "newer" }, d);
    assert.equal(await Deno.readTextFile(target), SECRET);
    assert.equal(await Deno.readTextFile(join(d.ws, "hl.txt")), "newer");
  });
});
