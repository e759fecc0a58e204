// `penguin skills install|list|remove`, run as a subprocess on real files.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createTar } from "nanotar";
import { runCli } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";
import { writeTarGz } from "../support/tar_stream.ts";

/** Run `fn` with a new data root and a new src directory, both removed afterwards. */
function withRoot(fn: (root: string, src: string) => Promise<void>): Promise<void> {
  return withTempDir(
    "penguin-skills-",
    (root) => withTempDir("penguin-skill-src-", (dir) => fn(root, dir)),
  );
}

const SKILL_MD =
  "\uFEFF---\r\nname: release-notes\r\ndescription: Write release notes from git log\r\n" +
  "version: 3\r\n---\r\n# Release notes\r\nRun `git log` and group the changes.\r\n";

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

const skillsDir = (root: string) =>
  join(root, "default_project", "agents", "default_agent", "agent_state", "skills");

Deno.test("a skill directory installs, lists with its frontmatter, is replaced whole and removed", async () => {
  await withRoot(async (root, src) => {
    await Deno.mkdir(join(src, "notes", "templates"), { recursive: true });
    await Deno.writeTextFile(join(src, "notes", "SKILL.md"), SKILL_MD);
    await Deno.writeTextFile(join(src, "notes", "templates", "t.md"), "template");
    const add = await runCli(["--root", root, "skills", "install", join(src, "notes")]);
    assert.equal(add.code, 0, add.stderr);
    assert.equal(add.stdout, "Installed skill release-notes (2 files) for agent default_agent.\n");
    assert.equal(
      await Deno.readTextFile(join(skillsDir(root), "release-notes", "templates", "t.md")),
      "template",
    );
    const list = await runCli(["--root", root, "skills", "list", "--json"]);
    assert.equal(list.code, 0, list.stderr);
    const [skill] = JSON.parse(list.stdout).skills;
    assert.equal(skill.name, "release-notes");
    assert.equal(skill.version, 3);
    assert.equal(skill.description, "Write release notes from git log");

    // Reinstalling replaces the directory whole: the old template is gone.
    await Deno.remove(join(src, "notes", "templates"), { recursive: true });
    const again = await runCli(["--root", root, "skills", "install", join(src, "notes")]);
    assert.match(again.stdout, /^Replaced skill release-notes \(1 file\)/);
    await assert.rejects(Deno.stat(join(skillsDir(root), "release-notes", "templates")));

    const table = await runCli(["--root", root, "skills", "list"]);
    assert.match(
      table.stdout,
      /^NAME\s+VERSION\s+DESCRIPTION\nrelease-notes\s+3\s+Write release notes/,
    );
    const rm = await runCli(["--root", root, "skills", "remove", "release-notes"]);
    assert.equal(rm.code, 0, rm.stderr);
    const gone = await runCli(["--root", root, "skills", "remove", "release-notes"]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /has no skill "release-notes"/);
    const empty = await runCli(["--root", root, "skills", "list"]);
    assert.match(empty.stdout, /has no skills\. Install one with/);
  });
});

Deno.test("a .tar.gz skill installs from its one top-level directory, under --name if given", async () => {
  await withRoot(async (root, src) => {
    const tar = createTar([
      { name: "pkg/SKILL.md", data: "---\ndescription: packed\n---\nbody" },
      { name: "pkg/aux/data.txt", data: "aux" },
    ]);
    const file = join(src, "pkg.tar.gz");
    await Deno.writeFile(file, await gzip(tar));
    const r = await runCli(["--root", root, "skills", "install", file, "--name", "packed"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      await Deno.readTextFile(join(skillsDir(root), "packed", "aux", "data.txt")),
      "aux",
    );
    const fromName = await runCli(["--root", root, "skills", "install", file]);
    assert.match(fromName.stdout, /^Installed skill pkg \(2 files\)/);
  });
});

Deno.test("an install that would reach outside the skill is refused, and nothing is written", async () => {
  await withRoot(async (root, src) => {
    const cases: [string, Uint8Array | (() => Promise<string>), RegExp][] = [
      [
        "dotdot.tar.gz",
        createTar([{ name: "SKILL.md", data: "x" }, { name: "../evil", data: "x" }]),
        /leaves the skill/,
      ],
      [
        "abs.tar.gz",
        createTar([{ name: "SKILL.md", data: "x" }, { name: "/etc/evil", data: "x" }]),
        /absolute path/,
      ],
      [
        "slash.tar.gz",
        createTar([{ name: "SKILL.md", data: "x" }, { name: "a\\b", data: "x" }]),
        /backslash/,
      ],
      ["noskill.tar.gz", createTar([{ name: "README.md", data: "x" }]), /no SKILL\.md/],
    ];
    for (const [name, tar, expected] of cases) {
      const file = join(src, name);
      await Deno.writeFile(file, await gzip(tar as Uint8Array));
      const r = await runCli(["--root", root, "skills", "install", file, "--name", "bad"]);
      assert.equal(r.code, 2, `${name}: ${r.stderr}`);
      assert.match(r.stderr, expected, name);
    }
    // A symlink in an archive made by GNU tar is refused.
    await Deno.mkdir(join(src, "t"));
    await Deno.writeTextFile(join(src, "t", "SKILL.md"), "x");
    await Deno.symlink("/etc/passwd", join(src, "t", "passwd"));
    const tarred = await new Deno.Command("tar", {
      args: ["-czf", join(src, "link.tar.gz"), "-C", join(src, "t"), "."],
    }).output();
    assert.ok(tarred.success);
    const link = await runCli([
      "--root",
      root,
      "skills",
      "install",
      join(src, "link.tar.gz"),
      "--name",
      "bad",
    ]);
    assert.equal(link.code, 2, link.stderr);
    assert.match(link.stderr, /"\.\/passwd" is a symlink \(skills hold plain files\)/);
    // A directory with a symlink to a secret is refused too.
    await Deno.mkdir(join(src, "linked"));
    await Deno.writeTextFile(join(src, "linked", "SKILL.md"), "x");
    await Deno.symlink("/etc/passwd", join(src, "linked", "passwd"));
    const r = await runCli(["--root", root, "skills", "install", join(src, "linked")]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /passwd is a symbolic link/);
    const list = await runCli(["--root", root, "skills", "list", "--json"]);
    assert.deepEqual(JSON.parse(list.stdout).skills, []);
    const left = (await Array.fromAsync(Deno.readDir(skillsDir(root)))).map((e) => e.name);
    assert.deepEqual(left, [], "no staging directory is left behind");
  });
});

Deno.test("a skill archive with a name too long or a path given twice is refused, not an internal error", async () => {
  await withRoot(async (root, src) => {
    const long = join(src, "long.tar.gz");
    await writeTarGz(long, [
      { name: "skill/SKILL.md", data: "x" },
      { longName: `skill/${Array(30).fill("d".repeat(200)).join("/")}/f`, data: "x" },
    ]);
    const dup = join(src, "dup.tar.gz");
    await writeTarGz(dup, [
      { name: "skill/SKILL.md", data: "x" },
      { name: "skill/a", data: "one" },
      { name: "skill/a/", data: "", type: "5" },
      { name: "skill/a/b", data: "two" },
    ]);
    const twice = join(src, "twice.tar.gz");
    await writeTarGz(twice, [
      { name: "skill/SKILL.md", data: "x" },
      { name: "skill/a", data: "one" },
      { name: "skill/a", data: "two" },
    ]);
    const cases: [string, RegExp][] = [
      [long, /long\.tar\.gz": "skill\/d{114}"… is too long \(names up to 255 bytes/],
      [
        dup,
        /dup\.tar\.gz": cannot unpack "skill\/a\/b": the path is given twice, or is both a file/,
      ],
      [twice, /twice\.tar\.gz": "skill\/a" appears twice/],
    ];
    for (const [file, expected] of cases) {
      const r = await runCli(["--root", root, "skills", "install", file]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, expected);
      assert.doesNotMatch(r.stderr, /internal error/);
    }
    const left = await Array.fromAsync(Deno.readDir(skillsDir(root))).catch(() => []);
    assert.deepEqual(left.map((e) => e.name), [], "no skill and no stage left");
  });
});

Deno.test("skills install refuses a SKILL.md over 1 MiB, naming its size and the limit", async () => {
  await withRoot(async (root, src) => {
    const head = "---\nname: big\ndescription: a large skill\n---\n";
    const fits = join(src, "fits.tar.gz");
    await writeTarGz(fits, [{ name: "SKILL.md", data: head.padEnd(1024 * 1024, "x") }]);
    const ok = await runCli(["--root", root, "skills", "install", fits]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^Installed skill big \(1 file\)/);

    const big = join(src, "big.tar.gz");
    await writeTarGz(big, [
      { name: "big/SKILL.md", data: head + "x\r\n".repeat(700_000) },
      { name: "big/notes.md", data: "n" },
    ]);
    const r = await runCli(["--root", root, "skills", "install", big]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /Cannot install the skill from ".*big\.tar\.gz": its SKILL\.md is 2100045 bytes, over the 1 MiB a SKILL\.md may hold/,
    );
    // Nothing replaced, nothing staged.
    const names = (await Array.fromAsync(Deno.readDir(skillsDir(root)))).map((e) => e.name);
    assert.deepEqual(names, ["big"]);
    assert.equal((await Deno.stat(join(skillsDir(root), "big", "SKILL.md"))).size, 1024 * 1024);
  });
});
