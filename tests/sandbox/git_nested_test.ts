// Repositories below the workspace root (git_nested.ts): one a command makes
// that would run its own code is disarmed once the sandbox ends, a plain one
// is left alone, an existing one is guarded like the root's, and the file
// tools write no nested .git or bare repository. The end-to-end case is a
// real `penguin run` with --git-writable whose model commits an armed nested
// repository as a submodule; the user's host `git status` (outer and inside)
// must run nothing.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, type GitAccess, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { armedReason, findNestedRepos } from "../../lib/sandbox/git_nested.ts";
import { resolvePlan } from "../../lib/sandbox/plan.ts";
import { bwrapMountArgs } from "../../lib/sandbox/bwrap.ts";
import { createWriteFileTool, DEFAULT_TOOL_DEFINITIONS } from "../../lib/tools/mod.ts";
import { hostRun } from "../support/host_git.ts";
import { run } from "../tools/_support.ts";
import { collect, exists } from "./_helpers.ts";
import { type Repo, withRepoDirs } from "./_git_repo.ts";
import { createWorld, runSession } from "./redteam/_world.ts";

async function hostGit(home: string, cwd: string, args: string[]): Promise<string> {
  return (await hostRun(home, cwd, "git", args)).out;
}

function withRepo(fn: (r: Repo) => Promise<void>): Promise<void> {
  return withRepoDirs("penguin-git-nested-", async (r) => {
    await hostGit(r.home, r.ws, ["init", "-q", "-b", "main"]);
    await Deno.writeTextFile(join(r.ws, "a.txt"), "a\n");
    await hostGit(r.home, r.ws, ["add", "."]);
    await hostGit(r.home, r.ws, ["commit", "-q", "-m", "init"]);
    await fn(r);
  });
}

async function sh(r: Repo, shell: string, git: GitAccess = "read-only") {
  const policy = createPolicy({
    workspace: r.ws,
    mode: "workspace-write",
    home: r.home,
    hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: r.home },
    git,
  });
  const out = await collect(await spawnSandboxed({ shell, policy, stdin: "null" }));
  return out;
}

/** Shell: make `dir` a repository whose fsmonitor and pre-commit hook leave `marker`. */
const armedRepo = (dir: string, marker: string) =>
  `git init -q ${dir} && git -C ${dir} config core.fsmonitor "touch ${marker}; false" && ` +
  `printf '#!/bin/sh\\ntouch ${marker}\\n' > ${dir}/.git/hooks/pre-commit && ` +
  `chmod +x ${dir}/.git/hooks/pre-commit && echo x > ${dir}/f && git -C ${dir} add f && ` +
  `git -C ${dir} -c user.name=m -c user.email=m@x -c core.fsmonitor=false commit -q --no-verify -m m`;

Deno.test("finding and judging nested repositories: plain, armed, bare, symlinked", async () => {
  await withRepo(async (r) => {
    await hostGit(r.home, r.ws, ["init", "-q", "plain"]);
    await hostGit(r.home, r.ws, ["init", "-q", "deep/armed"]);
    await hostGit(r.home, r.ws, ["init", "-q", "--bare", "bare.git"]);
    await hostGit(r.home, r.ws, ["init", "-q", "hooked"]);
    await Deno.writeTextFile(join(r.ws, "deep/armed/.git/config"), "[core]\n\tpager = ./p\n", {
      append: true,
    });
    await Deno.writeTextFile(join(r.ws, "hooked/.git/hooks/post-checkout"), "#!/bin/sh\n");
    await Deno.mkdir(join(r.ws, "linked"));
    await Deno.symlink(join(r.ws, ".git"), join(r.ws, "linked", ".git"));
    const { repos, complete } = await findNestedRepos(r.ws);
    assert.ok(complete);
    const byTree = Object.fromEntries(repos.map((x) => [x.workTree.slice(r.ws.length + 1), x]));
    assert.deepEqual(Object.keys(byTree).sort(), [
      "bare.git",
      "deep/armed",
      "hooked",
      "linked",
      "plain",
    ]);
    assert.equal(byTree["bare.git"]!.kind, "bare");
    assert.equal(await armedReason(byTree["plain"]!, [r.ws]), undefined);
    assert.match((await armedReason(byTree["deep/armed"]!, [r.ws]))!, /sets core\.pager/);
    assert.match((await armedReason(byTree["hooked"]!, [r.ws]))!, /hook .*post-checkout/);
    assert.match((await armedReason(byTree["linked"]!, [r.ws]))!, /symbolic link/);
    assert.equal(await armedReason(byTree["bare.git"]!, [r.ws]), undefined);
    // A global hooksPath relative to the nested work tree, with hooks there, arms it too.
    await Deno.writeTextFile(join(r.home, ".gitconfig"), "[core]\n\thooksPath = .husky\n");
    await Deno.mkdir(join(r.ws, "plain", ".husky"));
    assert.match((await armedReason(byTree["plain"]!, [r.ws], r.home))!, /core\.hooksPath/);
  });
});

for (const git of ["read-only", "writable"] as const) {
  Deno.test(`(${git} git) a nested repository a command arms is disarmed when the sandbox ends`, async () => {
    await withRepo(async (r) => {
      const out = await sh(
        r,
        `${armedRepo("sub", r.marker)}; git init -q plain; mkdir -p b/objects b/refs; ` +
          `printf '[core]\\n\\tpager = "touch ${r.marker}"\\n' > b/config; echo 'ref: refs/heads/m' > b/HEAD`,
        git,
      );
      assert.equal(out.code, 0, out.out);
      assert.equal(await exists(join(r.ws, "sub", ".git")), false, "sub/.git was not disarmed");
      assert.equal(await exists(join(r.ws, "sub", ".git-disarmed-by-penguin")), true);
      assert.equal(await exists(join(r.ws, "b", "HEAD")), false, "the bare repository stays");
      assert.equal(await exists(join(r.ws, "plain", ".git")), true, "a plain repository stays");
      for (const dir of ["sub", "b", "."]) {
        await hostGit(r.home, join(r.ws, dir), ["status"]);
        await hostGit(r.home, join(r.ws, dir), ["log"]);
        await hostGit(r.home, join(r.ws, dir), ["commit", "-q", "--allow-empty", "-m", "u"]);
      }
      assert.equal(await exists(r.marker), false, "the host git ran the model's code");
    });
  });

  Deno.test(`(${git} git) an existing nested repository is guarded like the root's`, async () => {
    await withRepo(async (r) => {
      await hostGit(r.home, r.ws, ["init", "-q", "vendor/lib"]);
      const config = await Deno.readTextFile(join(r.ws, "vendor/lib/.git/config"));
      await sh(
        r,
        `git -C vendor/lib config core.fsmonitor "touch ${r.marker}; false"; ` +
          `printf '#!/bin/sh\\ntouch ${r.marker}\\n' > vendor/lib/.git/hooks/pre-commit; ` +
          `mv vendor/lib/.git vendor/lib/old; chmod +x vendor/lib/.git/hooks/pre-commit`,
        git,
      );
      assert.equal(await Deno.readTextFile(join(r.ws, "vendor/lib/.git/config")), config);
      assert.equal(await exists(join(r.ws, "vendor/lib/.git/hooks/pre-commit")), false);
      await hostGit(r.home, join(r.ws, "vendor/lib"), ["status"]);
      await hostGit(r.home, join(r.ws, "vendor/lib"), ["commit", "-q", "--allow-empty", "-m", "u"]);
      assert.equal(await exists(r.marker), false);
    });
  });
}

Deno.test("write_file makes no nested .git and completes no bare repository", async () => {
  await withRepo(async (r) => {
    const write = (file_path: string) =>
      run(
        createWriteFileTool(DEFAULT_TOOL_DEFINITIONS.find((d) => d.name === "write_file")!),
        { file_path, content: "[core]\n\tpager = evil\n" },
        { ws: r.ws },
      );
    const nested = await write("sub/.git/config");
    assert.equal(nested.status, "failed");
    assert.match(nested.output, /sub\/\.git would be a repository below the workspace root/);
    assert.equal((await write("b/objects/x")).status, "completed");
    assert.equal((await write("b/refs/x")).status, "completed");
    assert.equal((await write("b/config")).status, "completed");
    const head = await write("b/HEAD");
    assert.equal(head.status, "failed");
    assert.match(head.output, /b would hold HEAD, objects and refs/);
    assert.equal(await exists(join(r.ws, "sub")), false);
    assert.equal(await exists(join(r.ws, "b", "HEAD")), false);
  });
});

Deno.test("penguin run --git-writable: an armed nested repository committed as a submodule runs nothing on the host", async () => {
  const w = await createWorld();
  try {
    const marker = `${w.base}/nested-planted-ran`;
    const steps = [
      {
        tool: "exec_command",
        args: {
          description: "nested",
          cmd: `${armedRepo("sub", marker)} 2>/dev/null; git add sub 2>&1; ` +
            `git -c user.name=m -c user.email=m@x commit -q -m sub 2>&1; echo made`,
          yield_time_ms: 8000,
        },
      },
    ];
    const o = await runSession(w, () => [steps], { extraArgs: ["--git-writable"] });
    assert.equal(o.code, 0, o.stderr.slice(-2000));
    const made = [...o.outputs.values()].join("\n");
    assert.match(made, /made/);
    // The gitlink is in the outer index (the attack got that far), but sub/.git is disarmed.
    const ls = await hostGit(w.home, w.ws, ["ls-files", "-s", "sub"]);
    assert.match(ls, /^160000 /);
    assert.equal(await exists(join(w.ws, "sub", ".git")), false);
    await hostGit(w.home, w.ws, ["status"]);
    await hostGit(w.home, join(w.ws, "sub"), ["status"]);
    assert.equal(await exists(marker), false, "the user's git status ran the model's code");
  } finally {
    await w.close();
  }
});

Deno.test("the plan binds nested git directories read-only if still there, even with a writable git", async () => {
  await withRepo(async (r) => {
    await hostGit(r.home, r.ws, ["init", "-q", "vendor/lib"]);
    const policy = createPolicy({ workspace: r.ws, home: r.home, hostEnv: {}, git: "writable" });
    const plan = await resolvePlan(policy, r.ws);
    const nested = join(r.ws, "vendor", "lib", ".git");
    assert.deepEqual(plan.protectTry, [nested]);
    assert.deepEqual(plan.gitRepos?.map((r) => r.entry), [nested]);
    const args = bwrapMountArgs(plan);
    const at = args.indexOf(nested);
    assert.equal(args[at - 1], "--ro-bind-try");
  });
});

// Keys that make git run a program without naming a workspace path (issue 26, attempts 24, 27).
const ARMING_KEYS: [string, string][] = [
  ["protocol.ext.allow", "always"],
  ["protocol.allow", "always"],
  ["remote.origin.url", "ext::sh -c touch% /tmp/x"],
  ["remote.origin.pushurl", "ext::sh -c touch% /tmp/x"],
  ["url.ext::sh -c touch% /tmp/x.insteadOf", "https://example.com/"],
  ["url.ext::sh.pushInsteadOf", "https://example.com/"],
  ["remote.origin.vcs", "evil"],
  ["tar.tgz.command", "touch /tmp/x; gzip -cn"],
  ["trailer.sign.command", "touch /tmp/x"],
  ["trailer.sign.cmd", "touch /tmp/x"],
  ["guitool.t.cmd", "touch /tmp/x"],
  ["imap.tunnel", "touch /tmp/x"],
  ["alias.st", "-c core.pager=./p log"],
  ["submodule.s.url", "ext::sh -c touch% /tmp/x"],
];

Deno.test("a nested repository with a key that runs a program is armed", async (t) => {
  await withRepo(async (r) => {
    await hostGit(r.home, r.ws, ["init", "-q", "n"]);
    const repo = (await findNestedRepos(r.ws)).repos.find((x) => x.workTree.endsWith("/n"))!;
    await hostGit(r.home, join(r.ws, "n"), ["remote", "add", "origin", "https://example.com/r"]);
    assert.equal(await armedReason(repo, [r.ws]), undefined, "an https remote is plain");
    const config = await Deno.readTextFile(join(r.ws, "n/.git/config"));
    for (const [key, value] of ARMING_KEYS) {
      await t.step(`${key} = ${value}`, async () => {
        await Deno.writeTextFile(join(r.ws, "n/.git/config"), config);
        await hostGit(r.home, join(r.ws, "n"), ["config", "--replace-all", key, value]);
        assert.match((await armedReason(repo, [r.ws])) ?? "not armed", / sets /);
      });
    }
  });
});

Deno.test("a nested ext:: remote or tar command made by a command runs nothing on the host", async () => {
  await withRepo(async (r) => {
    const out = await sh(
      r,
      `git init -q e && git -C e config protocol.ext.allow always && ` +
        `git -C e remote add origin 'ext::sh -c touch% ${r.marker}' && ` +
        `git init -q t && git -C t config tar.tgz.command "touch ${r.marker}; gzip -cn" && ` +
        `git -C t -c user.name=m -c user.email=m@x commit -q --allow-empty -m m`,
    );
    assert.equal(out.code, 0, out.out);
    await hostGit(r.home, join(r.ws, "e"), ["fetch"]);
    await hostGit(r.home, join(r.ws, "t"), ["archive", "-o", "../x.tgz", "HEAD"]);
    assert.equal(await exists(r.marker), false, "the host git ran the model's command");
  });
});

Deno.test("penguin run: global config named by XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL or GIT_CONFIG_COUNT in the workspace is read-only", async () => {
  // Issue 26 attempt 12: penguin's permission set could not read these variables.
  const w = await createWorld();
  try {
    const marker = `${w.base}/xdg-planted-ran`;
    await Deno.mkdir(join(w.ws, "dotfiles", "git"), { recursive: true });
    const xdg = join(w.ws, "dotfiles", "git", "config");
    await Deno.writeTextFile(xdg, "[user]\n\tname = u\n");
    const arm = `[core]\n\tfsmonitor = "touch ${marker}; false"\n`;
    const steps = [
      { tool: "edit_file", args: { file_path: xdg, old_string: "[user]", new_string: arm } },
      { tool: "write_file", args: { file_path: "g.gitconfig", content: arm } },
      { tool: "write_file", args: { file_path: ".hk/pre-commit", content: "#!/bin/sh\n" } },
      {
        tool: "exec_command",
        args: {
          description: "arm",
          cmd: `printf '%s' '${arm}' >> dotfiles/git/config; printf '%s' '${arm}' > g.gitconfig; ` +
            `mkdir -p .hk; echo x > .hk/pre-commit; ` +
            `echo "done [$XDG_CONFIG_HOME$GIT_CONFIG_GLOBAL$GIT_CONFIG_COUNT$GIT_CONFIG_KEY_0]"`,
        },
      },
    ];
    const o = await runSession(w, () => [steps], {
      // A workspace holding $XDG_CONFIG_HOME/git is refused without it (attack round 28 f07).
      extraArgs: ["--allow-home-workspace"],
      env: {
        XDG_CONFIG_HOME: join(w.ws, "dotfiles"),
        GIT_CONFIG_GLOBAL: join(w.ws, "g.gitconfig"),
        GIT_CONFIG_COUNT: "1",
        GIT_CONFIG_KEY_0: "core.hooksPath",
        GIT_CONFIG_VALUE_0: ".hk",
      },
    });
    assert.equal(o.code, 0, o.stderr.slice(-2000));
    // (The file tools run under the same mounts: they fail with EBUSY / EROFS.)
    // The variables still do not reach commands.
    assert.match([...o.outputs.values()].join("\n"), /done \[\]/);
    assert.equal(await Deno.readTextFile(xdg), "[user]\n\tname = u\n");
    assert.equal(await exists(join(w.ws, "g.gitconfig")), false);
    assert.equal(await exists(join(w.ws, ".hk")), false);
  } finally {
    await w.close();
  }
});

// Issue 26 attempts 17, 18, 26: git directories the walk did not recognize as git does.
const SPLIT_REPOS: [string, (marker: string) => string, string][] = [
  [
    "a HEAD whose commondir names the objects, refs and config",
    (m) =>
      `git init -q -b main x && mv x/.git store && mkdir evil && mv store/HEAD evil/ && ` +
      `echo ../store > evil/commondir && git config -f store/config alias.st '!touch ${m}'`,
    "evil",
  ],
  [
    "a .git file padded past 4096 bytes",
    (m) =>
      `git init -q -b main x && mv x/.git store && mkdir -p sub wt && mv store/HEAD wt/ && ` +
      `echo ../store > wt/commondir && git config -f store/config alias.st '!touch ${m}' && ` +
      `{ printf 'gitdir: ../wt'; head -c 5000 /dev/zero | tr '\\0' '\\n'; } > sub/.git`,
    "sub",
  ],
  [
    "a .git file whose path ends in a space",
    (m) =>
      `git init -q -b main x && mv x/.git store && mkdir -p 'sub/wt ' && mv store/HEAD 'sub/wt /' && ` +
      `echo ../../store > 'sub/wt /commondir' && git config -f store/config alias.st '!touch ${m}' && ` +
      `printf 'gitdir: wt \\n' > sub/.git`,
    "sub",
  ],
];

for (const [name, make, dir] of SPLIT_REPOS) {
  Deno.test(`a nested repository made as ${name} is found and disarmed`, async () => {
    await withRepo(async (r) => {
      const out = await sh(r, `${make(r.marker)} && echo made`);
      assert.match(out.out, /made/);
      await hostGit(r.home, join(r.ws, dir), ["st"]);
      assert.equal(await exists(r.marker), false, "the host git ran the model's alias");
    });
  });
}

Deno.test("write_file completes no HEAD + commondir git directory", async () => {
  await withRepo(async (r) => {
    const write = (file_path: string, content: string) =>
      run(
        createWriteFileTool(DEFAULT_TOOL_DEFINITIONS.find((d) => d.name === "write_file")!),
        { file_path, content },
        { ws: r.ws },
      );
    assert.equal((await write("evil/commondir", "../store\n")).status, "completed");
    const head = await write("evil/HEAD", "ref: refs/heads/main\n");
    assert.equal(head.status, "failed");
    assert.match(head.output, /evil would hold HEAD and commondir/);
  });
});
