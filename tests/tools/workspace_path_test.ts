import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveWorkspacePath } from "../../lib/tools/workspace_path.ts";
import { withDirs } from "./_support.ts";

function outsideMessage(input: string, real: string, ws: string): string {
  return `Path "${input}" resolves to "${real}", outside the workspace "${ws}"; file tools can only reach the workspace and the session scratchpad.`;
}

Deno.test("a relative path resolves inside the workspace and reports lexical and real paths", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "a.txt"), "a");
    const r = await resolveWorkspacePath("a.txt", { workspace: d.ws });
    assert.ok(r.ok);
    assert.equal(r.path, join(d.ws, "a.txt"));
    assert.equal(r.real, join(d.ws, "a.txt"));
    assert.equal(r.root, "workspace");
    assert.equal(r.viaSymlink, false);
    const inner = await resolveWorkspacePath("sub/../a.txt", { workspace: d.ws });
    assert.ok(inner.ok && inner.real === join(d.ws, "a.txt"));
  });
});

Deno.test("a path that does not exist yet resolves to its real parent plus the missing segments", async () => {
  await withDirs(async (d) => {
    const r = await resolveWorkspacePath("new/deep/file.txt", { workspace: d.ws });
    assert.ok(r.ok);
    assert.equal(r.real, join(d.ws, "new", "deep", "file.txt"));
  });
});

Deno.test("'..' out of the workspace is refused with the resolved real path", async () => {
  await withDirs(async (d) => {
    const r = await resolveWorkspacePath("../outside/x", { workspace: d.ws });
    assert.deepEqual(r, {
      ok: false,
      message: outsideMessage("../outside/x", join(d.outside, "x"), d.ws),
    });
    const up = await resolveWorkspacePath("../x", { workspace: d.ws });
    assert.equal(up.ok, false);
  });
});

Deno.test("absolute paths are allowed inside and refused outside (/etc/passwd, another temp dir)", async () => {
  await withDirs(async (d) => {
    const inside = await resolveWorkspacePath(join(d.ws, "a.txt"), { workspace: d.ws });
    assert.ok(inside.ok);
    const etc = await resolveWorkspacePath("/etc/passwd", { workspace: d.ws });
    assert.deepEqual(etc, {
      ok: false,
      message: outsideMessage("/etc/passwd", "/etc/passwd", d.ws),
    });
    const other = await Deno.realPath(await Deno.makeTempDir());
    try {
      const r = await resolveWorkspacePath(join(other, "f.txt"), { workspace: d.ws });
      assert.equal(r.ok, false);
    } finally {
      await Deno.remove(other, { recursive: true });
    }
  });
});

Deno.test("symlinks are judged by their target: outside refused, inside allowed", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.outside, "secret.txt"), "s");
    await Deno.writeTextFile(join(d.ws, "real.txt"), "r");
    await Deno.symlink(join(d.outside, "secret.txt"), join(d.ws, "link_out"));
    await Deno.symlink("real.txt", join(d.ws, "link_in"));
    await Deno.symlink(d.outside, join(d.ws, "dir_out"));
    await Deno.symlink(join(d.outside, "missing.txt"), join(d.ws, "dangling_out"));
    await Deno.symlink("not-yet.txt", join(d.ws, "dangling_in"));

    const out = await resolveWorkspacePath("link_out", { workspace: d.ws }, "write");
    assert.deepEqual(out, {
      ok: false,
      message: outsideMessage("link_out", join(d.outside, "secret.txt"), d.ws),
    });
    const dirOut = await resolveWorkspacePath("dir_out/new.txt", { workspace: d.ws }, "write");
    assert.deepEqual(dirOut, {
      ok: false,
      message: outsideMessage("dir_out/new.txt", join(d.outside, "new.txt"), d.ws),
    });
    const danglingOut = await resolveWorkspacePath("dangling_out", { workspace: d.ws }, "write");
    assert.equal(danglingOut.ok, false);

    const inside = await resolveWorkspacePath("link_in", { workspace: d.ws }, "write");
    assert.ok(inside.ok);
    assert.equal(inside.real, join(d.ws, "real.txt"));
    assert.equal(inside.viaSymlink, true);
    const danglingIn = await resolveWorkspacePath("dangling_in", { workspace: d.ws }, "write");
    assert.ok(danglingIn.ok && danglingIn.real === join(d.ws, "not-yet.txt"));
  });
});

Deno.test("/proc/self/root and /proc/self/cwd are refused where they lead outside", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.outside, "x.txt"), "x");
    const root = await resolveWorkspacePath(`/proc/self/root${d.outside}/x.txt`, {
      workspace: d.ws,
    });
    assert.equal(root.ok, false);
    assert.ok(!root.ok && root.message.includes(`resolves to "${join(d.outside, "x.txt")}"`));
    const cwd = await resolveWorkspacePath("/proc/self/cwd/deno.json", { workspace: d.ws });
    assert.equal(cwd.ok, false);
    const environ = await resolveWorkspacePath("/proc/self/environ", { workspace: d.ws });
    assert.equal(environ.ok, false);
    // The same trick leading back into the workspace is the workspace file itself.
    const back = await resolveWorkspacePath(`/proc/self/root${d.ws}/a.txt`, { workspace: d.ws });
    assert.ok(back.ok && back.real === join(d.ws, "a.txt"));
  });
});

Deno.test("secret basenames are refused even inside the workspace, by lexical or real name, any case", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, ".vault.toml"), "KEY='v'");
    await Deno.writeTextFile(join(d.ws, ".project_config.toml"), "name='p'");
    await Deno.symlink(".vault.toml", join(d.ws, "innocent.txt"));
    const vault = await resolveWorkspacePath(".vault.toml", { workspace: d.ws }, "read");
    assert.deepEqual(vault, {
      ok: false,
      message:
        'Refusing to read ".vault.toml": .vault.toml holds the user\'s secrets and must never enter the conversation.',
    });
    const cased = await resolveWorkspacePath(
      "sub/.PROJECT_CONFIG.TOML",
      { workspace: d.ws },
      "write",
    );
    assert.ok(
      !cased.ok &&
        cased.message.startsWith(
          'Refusing to write "sub/.PROJECT_CONFIG.TOML": .project_config.toml',
        ),
    );
    const viaLink = await resolveWorkspacePath("innocent.txt", { workspace: d.ws }, "edit");
    assert.ok(
      !viaLink.ok && viaLink.message.startsWith('Refusing to edit "innocent.txt": .vault.toml'),
    );
  });
});

Deno.test("the session scratchpad is reachable even before it exists", async () => {
  await withDirs(async (d) => {
    const r = await resolveWorkspacePath(join(d.scratch, "notes", "n.md"), {
      workspace: d.ws,
      scratchpad: d.scratch,
    });
    assert.ok(r.ok);
    assert.equal(r.root, "scratchpad");
    assert.equal(r.rootReal, d.scratch);
    const sibling = await resolveWorkspacePath(join(d.root, "scratch", "other-session", "x"), {
      workspace: d.ws,
      scratchpad: d.scratch,
    });
    assert.equal(sibling.ok, false);
  });
});

Deno.test("revealed writable directories are reachable, their siblings, parents and links out are not", async () => {
  await withDirs(async (d) => {
    const state = join(d.root, "agent_state");
    const mem = join(state, "memory", "user");
    await Deno.mkdir(mem, { recursive: true });
    await Deno.writeTextFile(join(state, "system_config.yaml"), "x: 1\n");
    await Deno.symlink("../../system_config.yaml", join(mem, "cfg.md"));
    const roots = { workspace: d.ws, sandbox: { revealWritable: [mem] } };
    const ok = await resolveWorkspacePath(join(mem, "topic.md"), roots, "write");
    assert.ok(ok.ok && ok.root === "shared" && ok.rootReal === mem);
    for (
      const p of [
        join(mem, "cfg.md"),
        join(mem, "..", "x.md"),
        join(mem, "../../system_config.yaml"),
      ]
    ) {
      const r = await resolveWorkspacePath(p, roots, "write");
      assert.ok(!r.ok && r.message.includes("memory and shared_env directories"), p);
    }
    const secret = await resolveWorkspacePath(join(mem, ".vault.toml"), roots, "write");
    assert.ok(!secret.ok && secret.message.includes("holds the user's secrets"));
    const worker = await resolveWorkspacePath(join(mem, "t.md"), {
      workspace: d.ws,
      revealWritable: [mem],
    });
    assert.ok(worker.ok, "the worker's own list works when no sandbox policy is at hand");
  });
});

Deno.test("a workspace given through a symlink is compared by its real path", async () => {
  await withDirs(async (d) => {
    const alias = join(d.root, "ws_alias");
    await Deno.symlink(d.ws, alias);
    const r = await resolveWorkspacePath(join(alias, "f.txt"), { workspace: alias });
    assert.ok(r.ok && r.real === join(d.ws, "f.txt") && r.rootReal === d.ws);
  });
});

Deno.test("a symlink loop is refused with a clear message", async () => {
  await withDirs(async (d) => {
    await Deno.symlink("loop_b", join(d.ws, "loop_a"));
    await Deno.symlink("loop_a", join(d.ws, "loop_b"));
    const r = await resolveWorkspacePath("loop_a", { workspace: d.ws });
    assert.ok(!r.ok && r.message.startsWith('Cannot resolve "loop_a": '));
  });
});

Deno.test("a path with a NUL byte is refused", async () => {
  await withDirs(async (d) => {
    const r = await resolveWorkspacePath("a\0b", { workspace: d.ws });
    assert.equal(r.ok, false);
  });
});

// A hard link is a second name for the same inode: no path check can tell it
// from an ordinary file, so it resolves inside unless the file is one penguin
// protects (below). File tools write by rename, which replaces the link rather
// than writing through it (see confinement_test).
Deno.test("a hard link to an outside file is not detectable by path (documented limit)", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.outside, "target.txt"), "outside");
    await Deno.link(join(d.outside, "target.txt"), join(d.ws, "hard.txt"));
    const r = await resolveWorkspacePath("hard.txt", { workspace: d.ws });
    assert.ok(r.ok && r.real === join(d.ws, "hard.txt"));
  });
});

Deno.test("another name of a protected file is refused by identity: a secret's for any use, a kept file's for writes", async () => {
  await withDirs(async (d) => {
    const key = join(d.outside, "id_ed25519");
    const rc = join(d.outside, ".bashrc");
    await Deno.writeTextFile(key, "k");
    await Deno.writeTextFile(rc, "r");
    await Deno.link(key, join(d.ws, "key"));
    await Deno.link(rc, join(d.ws, "rc"));
    const id = async (path: string, kind: "secret" | "kept") => {
      const info = await Deno.lstat(path);
      return { dev: info.dev!, ino: info.ino!, path, kind };
    };
    const roots = {
      workspace: d.ws,
      protectedFiles: [await id(key, "secret"), await id(rc, "kept")],
    };
    for (const verb of ["read", "write", "edit"] as const) {
      const r = await resolveWorkspacePath("key", roots, verb);
      assert.ok(!r.ok);
      assert.equal(
        r.message,
        `Refusing to ${verb} "key": it is another name (a hard link) of "${key}", which holds ` +
          `the user's secrets and must never enter the conversation.`,
      );
    }
    assert.ok((await resolveWorkspacePath("rc", roots, "read")).ok);
    for (const verb of ["write", "edit"] as const) {
      const r = await resolveWorkspacePath(join(d.ws, "rc"), roots, verb);
      assert.ok(!r.ok && r.message.includes(`another name (a hard link) of "${rc}"`), verb);
    }
    // The protected names themselves are outside; a single-name file of the same text is not hit.
    await Deno.writeTextFile(join(d.ws, "plain"), "k");
    assert.ok((await resolveWorkspacePath("plain", roots, "write")).ok);
  });
});

Deno.test("a read-only root (the agent's skills) can be read, by absolute path or through a link, never written or edited", async () => {
  await withDirs(async (d) => {
    const skills = join(d.outside, "skills");
    await Deno.mkdir(join(skills, "notes"), { recursive: true });
    await Deno.writeTextFile(join(skills, "notes", "SKILL.md"), "x");
    await Deno.writeTextFile(join(d.outside, "neighbour.txt"), "y");
    const roots = { workspace: d.ws, readOnlyRoots: [skills] };
    const skillMd = join(skills, "notes", "SKILL.md");
    const r = await resolveWorkspacePath(skillMd, roots, "read");
    assert.ok(r.ok);
    assert.equal(r.root, "read-only");
    assert.equal(r.rootReal, skills);
    await Deno.symlink(skills, join(d.ws, "skills-link"));
    const viaLink = await resolveWorkspacePath("skills-link/notes/SKILL.md", roots, "read");
    assert.ok(viaLink.ok && viaLink.real === skillMd);
    for (const verb of ["write", "edit"] as const) {
      for (const p of [skillMd, join(skills, "new.md"), "skills-link/notes/SKILL.md"]) {
        const w = await resolveWorkspacePath(p, roots, verb);
        assert.ok(!w.ok, `${verb} ${p}`);
        assert.match(
          w.message,
          new RegExp(`^Refusing to ${verb} .*which the file tools can read but never change`),
        );
      }
    }
    // Only the root itself: its neighbours stay outside; without the option nothing of it is reachable.
    assert.equal((await resolveWorkspacePath(join(d.outside, "neighbour.txt"), roots)).ok, false);
    assert.equal(
      (await resolveWorkspacePath(join(skills, "..", "neighbour.txt"), roots)).ok,
      false,
    );
    assert.equal((await resolveWorkspacePath(skillMd, { workspace: d.ws })).ok, false);
    // Secrets stay refused inside it, and a missing root is skipped.
    assert.equal((await resolveWorkspacePath(join(skills, ".vault.toml"), roots)).ok, false);
    const missing = { workspace: d.ws, readOnlyRoots: [join(d.outside, "none")] };
    assert.equal((await resolveWorkspacePath(join(d.outside, "none", "x"), missing)).ok, false);
  });
});

/** `d.outside/home`, with `files` (home-relative name to text) and `links` (name to target). */
async function makeHome(
  d: { outside: string },
  files: Record<string, string>,
  links: Record<string, string> = {},
): Promise<string> {
  const home = join(d.outside, "home");
  await Deno.mkdir(home, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(join(home, name), text);
  }
  for (const [name, target] of Object.entries(links)) await Deno.symlink(target, join(home, name));
  return home;
}

Deno.test("a missing path a startup file sources through a link into the workspace is refused", async () => {
  await withDirs(async (d) => {
    await Deno.mkdir(join(d.ws, "dotfiles"));
    const home = await makeHome(d, { ".bashrc": ". ~/dots/local.sh\nX=~/later/run.sh\n" }, {
      dots: join(d.ws, "dotfiles"),
      // A link to a directory not made yet: what the kernel would reach once it is.
      later: join(d.ws, "not-yet"),
    });
    const roots = { workspace: d.ws, home };
    for (const path of ["dotfiles/local.sh", "not-yet/run.sh"]) {
      for (const verb of ["write", "edit"] as const) {
        const r = await resolveWorkspacePath(path, roots, verb);
        assert.ok(!r.ok, `${verb} ${path}`);
        assert.match(r.message, /(sourced|named) by a shell startup file/);
      }
      assert.ok((await resolveWorkspacePath(path, roots, "read")).ok);
    }
    assert.ok((await resolveWorkspacePath("dotfiles/other.sh", roots, "write")).ok);
  });
});

Deno.test("a startup file's `..` spelling is judged where the kernel leads it", async () => {
  await withDirs(async (d) => {
    await Deno.mkdir(join(d.ws, "sub"));
    // `~/a/../b.sh`: `a` followed first, so `..` leaves `ws/sub` for `ws`.
    const home = await makeHome(d, { ".bashrc": ". ~/a/../b.sh\n" }, { a: join(d.ws, "sub") });
    const roots = { workspace: d.ws, home };
    const missing = await resolveWorkspacePath("b.sh", roots, "write");
    assert.ok(!missing.ok);
    assert.match(missing.message, /sourced by a shell startup file/);
    await Deno.writeTextFile(join(d.ws, "b.sh"), "# b\n");
    const existing = await resolveWorkspacePath("b.sh", roots, "edit");
    assert.ok(!existing.ok);
    assert.match(existing.message, /sourced by a shell startup file/);
    assert.ok((await resolveWorkspacePath("sub/b.sh", roots, "write")).ok);
  });
});

Deno.test("a startup file naming too many paths refuses writes only where the home reaches", async () => {
  await withDirs(async (d) => {
    const many = Array.from({ length: 2100 }, (_, i) => `X${i}=~/f${i}`).join("\n") + "\n";
    const home = await makeHome(d, { ".bashrc": many });
    const roots = { workspace: d.ws, home };
    // A workspace the home cannot reach: writes go on.
    assert.ok((await resolveWorkspacePath("x.py", roots, "write")).ok);
    // A link at the top of the home into the workspace: refused, with advice for the file tools.
    await Deno.symlink(join(d.ws, "dotfiles"), join(home, "dots"));
    const r = await resolveWorkspacePath("x.py", roots, "write");
    assert.ok(!r.ok);
    assert.match(r.message, /cannot tell which files the shell startup files/);
    assert.ok(r.message.includes(`"${join(home, ".bashrc")}" names more than 2048 paths`));
    assert.doesNotMatch(r.message, /Cannot sandbox/);
    // Shortened: read again (the cache follows the file's identity), and the one sourced path refused.
    await Deno.writeTextFile(join(home, ".bashrc"), ". ~/dots/x.py\n");
    const again = await resolveWorkspacePath("dotfiles/x.py", roots, "write");
    assert.ok(!again.ok);
    assert.match(again.message, /sourced by a shell startup file/);
    assert.ok((await resolveWorkspacePath("x.py", roots, "write")).ok);
  });
});
