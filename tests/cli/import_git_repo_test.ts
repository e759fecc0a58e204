// Git repositories in what penguin takes in (attack final18 imports B3): a snapshot or a skill
// holding a `.git` whose configuration sets `core.fsmonitor` (or a directory laid out as a bare
// repository) was imported silently, and the user's host `git status` there ran its program.
// `agent import` now leaves every one out and names it; `skills install` of an archive refuses
// it, and of a directory (a clone) leaves the `.git` out and names it.
import assert from "node:assert/strict";
import { join } from "node:path";
import { packTar } from "modern-tar";
import { runCli } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";

type Entry = Parameters<typeof packTar>[0][number];
const file = (name: string, body: string, mode = 0o644): Entry => ({
  header: { name, size: new TextEncoder().encode(body).length, type: "file", mode },
  body,
});
const dir = (name: string): Entry => ({
  header: { name, size: 0, type: "directory", mode: 0o755 },
});

async function archive(at: string, name: string, entries: Entry[]): Promise<string> {
  const path = join(at, name);
  const tar = await packTar(entries);
  const stream = new Blob([tar as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  await Deno.writeFile(path, new Uint8Array(await new Response(stream).arrayBuffer()));
  return path;
}

/** The parts of a repository (under `at`, "" for the top) whose fsmonitor touches `marker`. */
function armedRepo(at: string, marker: string, bare = false): Entry[] {
  const p = at === "" ? "" : `${at}/`;
  return [
    file(`${p}HEAD`, "ref: refs/heads/main\n"),
    file(
      `${p}config`,
      `[core]\n\trepositoryformatversion = 0\n\tbare = ${bare}\n` +
        `\tfsmonitor = "touch ${marker}; false"\n`,
    ),
    dir(`${p}objects/`),
    dir(`${p}refs/heads/`),
    file(`${p}hooks/post-checkout`, `#!/bin/sh\ntouch ${marker}\n`, 0o755),
  ];
}

/** The user's host git in `at`, as a shell prompt runs it; whether the marker appeared. */
async function hostGitRuns(at: string, home: string, marker: string): Promise<boolean> {
  await new Deno.Command("git", {
    args: ["-C", at, "status", "--short"],
    env: { HOME: home, GIT_CONFIG_NOSYSTEM: "1", PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    clearEnv: true,
    stdout: "null",
    stderr: "null",
  }).output();
  return await Deno.stat(marker).then(() => true, () => false);
}

/** The names in directory `d`, sorted. */
async function namesIn(d: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(d))).map((e) => e.name).sort();
}

const stateOf = (root: string) =>
  join(root, "default_project", "agents", "default_agent", "agent_state");

const REASON = "a git repository (the host's git would run what its configuration and hooks name)";

Deno.test("agent import leaves out every .git and bare repository of a snapshot, naming each; host git runs none", async () => {
  await withTempDir("penguin-gitimport-", async (base) => {
    const root = join(base, "data");
    const marker = join(base, "SNAPSHOT-PROGRAM-RAN");
    const notes = "agent_state/memory/user/notes";
    const path = await archive(base, "snap.tar.gz", [
      file("agent_state/system_config.yaml", "version: 4\nsystem_prompt: x\n"),
      ...armedRepo("agent_state/.git", marker),
      file(`${notes}/readme.md`, "hello\n"),
      ...armedRepo(`${notes}/.git`, marker),
      file(`${notes}/.GIT`, "gitdir: ../elsewhere\n"),
      ...armedRepo("agent_state/memory/user/b", marker, true),
      file("agent_state/skills/s/SKILL.md", "---\nname: s\n---\nhi\n"),
      ...armedRepo("agent_state/skills/s/.git", marker),
    ]);
    const r = await runCli(["--root", root, "agent", "import", path]);
    assert.equal(r.code, 0, r.stderr);
    for (
      const left of [
        "agent_state/.git",
        `${notes}/.git`,
        `${notes}/.GIT`,
        "agent_state/memory/user/b",
        "agent_state/skills/s/.git",
      ]
    ) {
      assert.ok(r.stderr.includes(`penguin: skipped ${left}: ${REASON}\n`), `${left}: ${r.stderr}`);
    }
    const state = stateOf(root);
    const names = (d: string) => namesIn(join(state, d));
    assert.deepEqual(await names("memory/user/notes"), ["readme.md"]);
    assert.deepEqual(await names("memory/user"), ["notes"]);
    assert.deepEqual(await names("skills/s"), ["SKILL.md"]);
    assert.ok(!(await names("")).includes(".git"));
    const home = join(base, "home");
    await Deno.mkdir(home);
    for (const d of ["", "memory/user/notes", "skills/s"]) {
      assert.equal(await hostGitRuns(join(state, d), home, marker), false, d);
    }
  });
});

Deno.test("agent import refuses a snapshot whose agent_state/ is itself a repository", async () => {
  await withTempDir("penguin-gitimport-", async (base) => {
    const root = join(base, "data");
    const path = await archive(base, "top.tar.gz", [
      file("agent_state/system_config.yaml", "version: 4\nsystem_prompt: x\n"),
      ...armedRepo("agent_state", join(base, "RAN"), true),
    ]);
    const r = await runCli(["--root", root, "agent", "import", path, "--yes"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /Cannot import the snapshot ".*top\.tar\.gz": agent_state\/ itself holds HEAD with objects or commondir, which makes it a git repository/,
    );
    assert.equal(await Deno.stat(stateOf(root)).catch(() => null), null);
  });
});

Deno.test("skills install refuses an archive holding a .git or a bare repository, and leaves a clone's .git out", async () => {
  await withTempDir("penguin-gitskill-", async (base) => {
    const root = join(base, "data");
    const marker = join(base, "SKILL-PROGRAM-RAN");
    const skill = file("SKILL.md", "---\nname: gitskill\n---\nhi\n");
    const dotgit = await archive(base, "dotgit.tar.gz", [skill, ...armedRepo(".git", marker)]);
    const a = await runCli(["--root", root, "skills", "install", dotgit]);
    assert.equal(a.code, 2, a.stderr);
    assert.match(
      a.stderr,
      /Cannot install the skill from ".*dotgit\.tar\.gz": "\.git" is a git repository .*; a skill holds none/,
    );
    const bare = await archive(base, "bare.tar.gz", [skill, ...armedRepo("refs-here", marker)]);
    const b = await runCli(["--root", root, "skills", "install", bare]);
    assert.equal(b.code, 2, b.stderr);
    assert.match(b.stderr, /"refs-here\/" holds HEAD with objects or commondir/);
    const skills = join(stateOf(root), "skills");
    assert.deepEqual(await namesIn(skills), []);

    // A clone: its .git is the user's own, left out and named.
    const clone = join(base, "clone");
    await Deno.mkdir(join(clone, ".git", "hooks"), { recursive: true });
    await Deno.writeTextFile(join(clone, "SKILL.md"), "---\nname: cloned\n---\nhi\n");
    await Deno.writeTextFile(join(clone, ".git", "HEAD"), "ref: refs/heads/main\n");
    await Deno.writeTextFile(join(clone, ".git", "hooks", "post-checkout"), "#!/bin/sh\n");
    const c = await runCli(["--root", root, "skills", "install", clone]);
    assert.equal(c.code, 0, c.stderr);
    assert.ok(c.stderr.includes(`penguin: skipped .git: ${REASON}\n`), c.stderr);
    assert.match(c.stdout, /Installed skill cloned \(1 file\)/);
    assert.deepEqual(await namesIn(join(skills, "cloned")), ["SKILL.md"]);
  });
});
