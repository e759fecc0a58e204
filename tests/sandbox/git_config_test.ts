// git's configuration syntax and include rules, as penguin reads them without
// running git: the parser on the syntax corners, the resolver on real files in
// a temp dir (includes, includeIf conditions, config.worktree), and the
// commands' words that name paths.
import assert from "node:assert/strict";
import { join } from "node:path";
import { accountHome } from "../../lib/sandbox/_user_homes.ts";
import { parseGitConfig } from "../../lib/sandbox/git_config_parse.ts";
import { resolveGitConfig, wildmatchRegExp } from "../../lib/sandbox/git_config.ts";
import {
  commandWords,
  execKeyOf,
  GIT_EXEC_KEYS,
  gitExecTargets,
} from "../../lib/sandbox/git_exec_keys.ts";
import { visibleTempDir } from "./_helpers.ts";

const kv = (text: string) =>
  parseGitConfig(text, "f").entries.map((e) => [e.key, e.value] as [string, string | null]);

Deno.test("parser: sections, subsections, legacy names, case and bare booleans", () => {
  assert.deepEqual(
    kv(
      '[Core]\n\tHooksPath = .husky\n[diff "LFS"]\ntextconv = x\n[Alias.Sub]\nx=1\n' +
        "[core] editor = vim\n[core]\nbare\n",
    ),
    [["core.hookspath", ".husky"], ["diff.LFS.textconv", "x"], ["alias.sub.x", "1"], [
      "core.editor",
      "vim",
    ], ["core.bare", null]],
  );
});

Deno.test("parser: quoting, escapes, comments, whitespace and line continuation", () => {
  assert.deepEqual(
    kv(
      '[a]\nq = "  two  spaces ; #not comment"  # comment\n' +
        "w = one\t two   ; trailing comment\n" +
        'e = a\\tb\\\\c\\"d\\n\n' +
        "c = first \\\n  second\n" +
        '[s "we\\"ird\\\\ sub"]\nk = v\n',
    ),
    [
      ["a.q", "  two  spaces ; #not comment"],
      ["a.w", "one  two"],
      ["a.e", 'a\tb\\c"d\n'],
      ["a.c", "first   second"],
      ['s.we"ird\\ sub.k', "v"],
    ],
  );
});

Deno.test("parser: a bad line is reported and parsing goes on", () => {
  const p = parseGitConfig('[a]\nx = "open\n9bad = 1\ny = ok\n[b\nz = 1\n', "cfg");
  assert.deepEqual(p.entries.map((e) => e.key), ["a.y"]);
  assert.equal(p.errors.length, 4, p.errors.join("\n"));
  assert.match(p.errors[0]!, /^cfg:2: unterminated quoted value/);
});

Deno.test("wildmatch: * stops at /, ** crosses it, classes", () => {
  assert.ok(wildmatchRegExp("**/work/**").test("/home/u/work/ws/.git"));
  assert.ok(!wildmatchRegExp("/home/*/.git").test("/home/u/x/.git"));
  assert.ok(wildmatchRegExp("/home/*/.git").test("/home/u/.git"));
  assert.ok(wildmatchRegExp("feat/[a-c]?").test("feat/b1"));
  assert.ok(wildmatchRegExp("/W/**", true).test("/w/x"));
});

/** A work tree `ws` with a .git directory, a home, and helpers to write files. */
async function layout() {
  const base = await Deno.realPath(await visibleTempDir("penguin-git-config-"));
  const ws = join(base, "ws");
  const home = join(base, "home");
  await Deno.mkdir(join(ws, ".git"), { recursive: true });
  await Deno.mkdir(home);
  await Deno.writeTextFile(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
  const put = (rel: string, text: string) => Deno.writeTextFile(join(base, rel), text);
  const resolve = (extra: Record<string, never> = {}) =>
    resolveGitConfig({
      workTree: ws,
      gitDirs: [join(ws, ".git")],
      gitDir: join(ws, ".git"),
      home,
      env: (n) => (n === "XDG_CONFIG_HOME" ? join(base, "xdg") : undefined),
      ...extra,
    });
  return { base, ws, home, put, resolve };
}

/** Run `fn` with a fresh {@linkcode layout}, removed afterwards. */
async function withLayout(
  fn: (l: Awaited<ReturnType<typeof layout>>) => Promise<void>,
): Promise<void> {
  const l = await layout();
  try {
    await fn(l);
  } finally {
    await Deno.remove(l.base, { recursive: true });
  }
}

Deno.test("resolver: global, repository and included files with relative, ~/ and chained paths", () =>
  withLayout(async (l) => {
    await Deno.mkdir(join(l.base, "xdg", "git"), { recursive: true });
    await l.put("xdg/git/config", "[core]\n\tpager = xdg-pager\n");
    await l.put("home/.gitconfig", "[include]\n\tpath = ~/more.gitconfig\n");
    await l.put("home/more.gitconfig", "[core]\n\teditor = home-editor\n");
    await l.put(
      "ws/.git/config",
      "[include]\n\tpath = ../shared.gitconfig\n\tpath = missing.gitconfig\n",
    );
    await l.put("ws/shared.gitconfig", "[include]\n\tpath = deeper.gitconfig\n");
    await l.put("ws/deeper.gitconfig", "[core]\n\tfsmonitor = ./fsmon.sh\n");
    const c = await l.resolve();
    const values = Object.fromEntries(c.entries.map((e) => [e.key, e.value]));
    assert.equal(values["core.pager"], "xdg-pager");
    assert.equal(values["core.editor"], "home-editor");
    assert.equal(values["core.fsmonitor"], "./fsmon.sh");
    const states = Object.fromEntries(c.files.map((f) => [f.path, f.state]));
    assert.equal(states[join(l.ws, "shared.gitconfig")], "read");
    assert.equal(states[join(l.ws, "deeper.gitconfig")], "read");
    assert.equal(states[join(l.ws, ".git", "missing.gitconfig")], "missing");
    assert.equal(states[join(l.home, "more.gitconfig")], "read");
  }));

Deno.test("resolver: every includeIf counts, whatever its condition", () =>
  withLayout(async (l) => {
    await l.put(
      "ws/.git/config",
      [
        `[includeIf "gitdir:${l.ws}/"]\n\tpath = ../gitdir-yes`,
        `[includeIf "gitdir:/nowhere/"]\n\tpath = ../gitdir-no`,
        `[includeIf "gitdir/i:${l.ws.toUpperCase()}/.GIT"]\n\tpath = ../gitdiri-yes`,
        `[includeIf "gitdir:ws/.git"]\n\tpath = ../gitdir-rel-yes`,
        `[includeIf "onbranch:main"]\n\tpath = ../branch-yes`,
        `[includeIf "onbranch:feature/"]\n\tpath = ../branch-no`,
        `[includeIf "hasconfig:remote.*.url:https://x/**"]\n\tpath = ../hasconfig-yes`,
      ].join("\n") + "\n",
    );
    const included = async () =>
      (await l.resolve()).files.filter((f) => f.scope === "include")
        .map((f) => f.path.slice(l.ws.length + 1)).sort();
    // Every condition counts: the user may switch to a matching branch later (attempt 06), and
    // git matches `gitdir:` against the path the user's shell names too, a link penguin never
    // sees (round 31 r02, r03).
    assert.deepEqual(await included(), [
      "branch-no",
      "branch-yes",
      "gitdir-no",
      "gitdir-rel-yes",
      "gitdir-yes",
      "gitdiri-yes",
      "hasconfig-yes",
    ]);
  }));

Deno.test("resolver: config.worktree only with extensions.worktreeConfig", () =>
  withLayout(async (l) => {
    await l.put("ws/.git/config.worktree", "[core]\n\thooksPath = wt-hooks\n");
    await l.put("ws/.git/config", "[core]\n\tbare = false\n");
    assert.ok(!(await l.resolve()).entries.some((e) => e.key === "core.hookspath"));
    await l.put("ws/.git/config", "[extensions]\n\tworktreeConfig = true\n");
    assert.ok((await l.resolve()).entries.some((e) => e.key === "core.hookspath"));
  }));

Deno.test("resolver: an include cycle ends, and a chain stops at git's depth limit", () =>
  withLayout(async (l) => {
    await l.put("ws/.git/config", "[include]\n\tpath = ../a\n\tpath = ../c0\n");
    await l.put("ws/a", "[include]\n\tpath = b\n");
    await l.put("ws/b", "[include]\n\tpath = a\n");
    for (let i = 0; i < 12; i++) await l.put(`ws/c${i}`, `[include]\n\tpath = c${i + 1}\n`);
    const c = await l.resolve();
    const read = c.files.filter((f) => f.state === "read").map((f) => f.path);
    assert.ok(read.includes(join(l.ws, "b")));
    assert.ok(read.includes(join(l.ws, "c9")) && !read.includes(join(l.ws, "c10")));
    assert.ok(c.errors.some((e) => /deeper than 10/.test(e)));
  }));

Deno.test("command words: paths, options and assignments", () => {
  assert.deepEqual(commandWords(`sh -c "./x.sh --out=tools/y" -F ~/cfg; less -R | z>q`), [
    "sh",
    "./x.sh",
    "tools/y",
    "~/cfg",
    "less",
    "z",
    "q",
  ]);
  assert.deepEqual(commandWords("!f() { ./run; }; f"), ["f", "{", "./run", "}", "f"]);
});

Deno.test("exec keys: table lookup and the targets of a configuration", async () => {
  assert.equal(execKeyOf("diff.LFS.textconv")?.key, "diff.*.textconv");
  assert.equal(execKeyOf("gpg.ssh.program")?.key, "gpg.*.program");
  assert.equal(execKeyOf("core.bare"), undefined);
  const entry = (key: string, value: string | null) => ({ key, value, file: "/c", line: 1 });
  const targets = await gitExecTargets(
    {
      entries: [
        entry("core.hookspath", ".husky"),
        entry("core.fsmonitor", "true"),
        entry("pager.log", "false"),
        entry("alias.st", "status"),
        entry("alias.x", "!./scripts/x.sh"),
        entry("filter.lfs.smudge", "tools/smudge %f"),
      ],
      files: [],
      errors: [],
    },
    "/w",
    "/h",
  );
  assert.deepEqual(targets.map((t) => [t.key, t.path, t.ifExists ?? false]), [
    ["core.hooksPath", "/w/.husky", false],
    ["alias.*", "/w/scripts/x.sh", false],
    ["filter.*.smudge", "/w/tools/smudge", false],
    ["filter.*.smudge", "/w/%f", true],
  ]);
});

Deno.test("docs/security.md lists every key of the table", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/security.md", import.meta.url));
  for (const row of GIT_EXEC_KEYS) {
    const cell = row.key.replace(/[.*]/g, "\\$&");
    assert.match(doc, new RegExp(`^\\| \`${cell}\` +\\| `, "m"), `${row.key} is not in the docs`);
  }
});

Deno.test("resolver: GIT_CONFIG_COUNT/KEY/VALUE and GIT_CONFIG_PARAMETERS come last, includes followed", () =>
  withLayout(async (l) => {
    await l.put("env.gitconfig", "[core]\n\tpager = ./env-pager\n");
    const vars: Record<string, string> = {
      GIT_CONFIG_COUNT: "2",
      GIT_CONFIG_KEY_0: "Core.HooksPath",
      GIT_CONFIG_VALUE_0: ".hk",
      GIT_CONFIG_KEY_1: "include.path",
      GIT_CONFIG_VALUE_1: join(l.base, "env.gitconfig"),
      GIT_CONFIG_PARAMETERS: `'filter.X.clean'='./cl'\\''ean' 'alias.st=!./st'`,
    };
    const c = await resolveGitConfig({
      workTree: l.ws,
      gitDirs: [join(l.ws, ".git")],
      gitDir: join(l.ws, ".git"),
      home: l.home,
      env: (n) => vars[n],
    });
    const got = c.entries.filter((e) => e.file !== "/etc/gitconfig").map((
      e,
    ) => [e.key, e.value, e.file]);
    assert.deepEqual(got, [
      ["core.hookspath", ".hk", "GIT_CONFIG_KEY_0"],
      ["include.path", join(l.base, "env.gitconfig"), "GIT_CONFIG_KEY_1"],
      ["core.pager", "./env-pager", join(l.base, "env.gitconfig")],
      ["filter.X.clean", "./cl'ean", "GIT_CONFIG_PARAMETERS"],
      ["alias.st", "!./st", "GIT_CONFIG_PARAMETERS"],
    ]);
  }));

Deno.test("a section header whose subsection follows a CR or a newline is read as git reads it", () => {
  // Attack round 20 concgit R1: penguin refused `[filter\r"x"]`, git read it, and the key it
  // hid (a clean filter, an fsmonitor through includeIf) ran at the user's git status.
  for (const sep of ["\r", "\n", " \r\t"]) {
    const parsed = parseGitConfig(`[filter${sep}"x"]\n\tclean = sh run.sh\n`, "/c");
    assert.deepEqual(parsed.errors, [], JSON.stringify(sep));
    assert.deepEqual(parsed.entries.map((e) => [e.key, e.value]), [[
      "filter.x.clean",
      "sh run.sh",
    ]]);
  }
});

Deno.test("a NUL byte ends a key or a value where git ends it, and is reported", () => {
  // Attack round 28 f01: `[core "fsmonitor\0"]` kept the NUL in penguin's key
  // (`core.fsmonitor\0.x`, in no table) while git read `core.fsmonitor`.
  const p = parseGitConfig(
    '[core]\n\tbare = false\n[core "fsmonitor\0"]\n\tx = ./evil.sh\n[core\t"pager\0x"]\n\ty = p\n' +
      '[include "path\0"]\n\tz = ../inc.cfg\n[alias]\n\tst = "!./st.sh\0 and more"\n',
    "/c",
  );
  assert.deepEqual(p.entries.map((e) => [e.key, e.value]), [
    ["core.bare", "false"],
    ["core.fsmonitor", "./evil.sh"],
    ["core.pager", "p"],
    ["include.path", "../inc.cfg"],
    ["alias.st", "!./st.sh"],
  ]);
  assert.equal(p.errors.length, 1, p.errors.join("\n"));
  assert.match(p.errors[0]!, /^\/c:3: a NUL byte/);
  assert.equal(execKeyOf(p.entries[1]!.key)?.key, "core.fsmonitor");
  // Only in a comment: still reported (a file that reads two ways is never plain).
  assert.equal(parseGitConfig("[a]\n# \0\nx = 1\n", "/d").errors.length, 1);
});

Deno.test("resolver: an include hidden behind a NUL is followed, its keys read", () =>
  withLayout(async (l) => {
    await l.put("inc.cfg", "[core]\n\tfsmonitor = ./evil.sh\n");
    await l.put("ws/.git/config", '[include "path\0"]\n\tx = ../../inc.cfg\n');
    const c = await resolveGitConfig({
      workTree: l.ws,
      gitDirs: [join(l.ws, ".git")],
      gitDir: join(l.ws, ".git"),
      home: l.home,
      env: () => undefined,
    });
    const targets = await gitExecTargets(c, l.ws, l.home);
    assert.ok(
      targets.some((t) => t.key === "core.fsmonitor" && t.path === join(l.ws, "evil.sh")),
      JSON.stringify(targets),
    );
    assert.ok(c.errors.some((e) => e.includes("a NUL byte")), c.errors.join("\n"));
  }));

Deno.test("resolver: an include of ~user/ is that account's home, as git expands it (round 32 u02)", () =>
  withLayout(async (l) => {
    const name = "penguin-no-such-file.gitconfig";
    await l.put("home/.gitconfig", `[include]\n\tpath = ~root/${name}\n`);
    const files = (await l.resolve()).files.map((f) => f.path);
    const rootHome = accountHome("root");
    assert.ok(rootHome, "root has a home in /etc/passwd");
    assert.ok(files.includes(join(rootHome, name)), files.join("\n"));
  }));
