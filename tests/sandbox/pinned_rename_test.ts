// Attack round 20 concgit R4, R7: penguin renamed a `.git` aside by its absolute path, and a
// command running beside it had swapped a directory above it for a link: the user's other
// repository's `.git` (and, through `.git/logs` -> ~/.ssh, `authorized_keys`) was renamed.
// renameInDir renames by name in the directory penguin checked, never through a link.
import assert from "node:assert/strict";
import { join } from "node:path";
import { renameInDir } from "../../lib/sandbox/pinned_rename.ts";
import { exists } from "./_helpers.ts";

Deno.test("renameInDir renames in place, and refuses when a link now lies on the way", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "penguin-pinned-rename-" }));
  try {
    const ws = join(base, "ws");
    const other = join(base, "other");
    await Deno.mkdir(join(ws, "sub", ".git"), { recursive: true });
    await Deno.mkdir(join(other, ".git"), { recursive: true });
    // In place: renamed.
    await renameInDir(join(ws, "sub", ".git"), join(ws, "sub", ".git-aside"));
    assert.equal(await exists(join(ws, "sub", ".git-aside")), true);
    // `sub` swapped for a link to the user's other repository: nothing of it is renamed.
    await Deno.remove(join(ws, "sub"), { recursive: true });
    await Deno.symlink(other, join(ws, "sub"));
    await assert.rejects(
      renameInDir(join(ws, "sub", ".git"), join(ws, "sub", ".git-aside")),
      /a link now lies on the way/,
    );
    assert.equal(await exists(join(other, ".git")), true, "the other repository keeps its .git");
    assert.equal(await exists(join(other, ".git-aside")), false);
    // A taken name is never overwritten.
    await Deno.mkdir(join(base, "d", "a"), { recursive: true });
    await Deno.mkdir(join(base, "d", "b"));
    await assert.rejects(renameInDir(join(base, "d", "a"), join(base, "d", "b")), /taken/);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("renameInDir with replace takes the place of a link, never writing where it leads", async () => {
  // Attack round 20 imports G1: `-o report.md` resolved the path again after checking it, and a
  // link flipped in meanwhile had the export overwrite ~/.bashrc.
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "penguin-pinned-replace-" }));
  try {
    const victim = join(base, "bashrc");
    await Deno.writeTextFile(victim, "the user's rc\n");
    await Deno.mkdir(join(base, "ws"));
    const target = join(base, "ws", "report.md");
    await Deno.symlink(victim, target);
    const tmp = join(base, "ws", ".report.md.tmp");
    await Deno.writeTextFile(tmp, "the export\n");
    await renameInDir(tmp, target, { replace: true });
    assert.equal(await Deno.readTextFile(victim), "the user's rc\n");
    assert.equal((await Deno.lstat(target)).isFile, true);
    assert.equal(await Deno.readTextFile(target), "the export\n");
    // A directory is never replaced.
    await Deno.writeTextFile(tmp, "x");
    await Deno.mkdir(join(base, "ws", "dir"));
    await assert.rejects(renameInDir(tmp, join(base, "ws", "dir"), { replace: true }), /taken/);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
