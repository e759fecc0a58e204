// Nothing a sandboxed command writes may make the user's next host `git`
// run code or read config from outside the workspace. Each attack is checked
// by running the real host git afterwards (with a clean config environment)
// and looking for the marker its planted command would create; a control run
// without the OS sandbox shows the attack is real.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  createPolicy,
  type GitAccess,
  type SandboxMode,
  spawnSandboxed,
} from "../../lib/sandbox/mod.ts";
import {
  createEditFileTool,
  createWriteFileTool,
  DEFAULT_TOOL_DEFINITIONS,
} from "../../lib/tools/mod.ts";
import { run } from "../tools/_support.ts";
import { hostRun } from "../support/host_git.ts";
import { collect, exists, visibleTempDir } from "./_helpers.ts";
import { type Repo, repoIn } from "./_git_repo.ts";

/** Host git with no system or user config, as if on a clean machine. */
function hostGit(
  r: Repo,
  args: string[],
  cwd = r.ws,
): Promise<{ code: number; out: string }> {
  return hostRun(r.home, cwd, "git", args);
}

/** A temp dir with a committed repository `ws` (or a plain `ws` inside an outer repo). */
async function makeRepo(opts: { nested?: boolean } = {}): Promise<Repo> {
  const base = await visibleTempDir("penguin-git-guard-");
  const r = repoIn(base);
  await Deno.mkdir(r.home);
  const top = opts.nested ? join(base, "outer") : r.ws;
  if (opts.nested) r.ws = join(top, "ws");
  await Deno.mkdir(r.ws, { recursive: true });
  const init = await hostGit(r, ["init", "-q", "-b", "main", top], base);
  assert.equal(init.code, 0, init.out);
  await Deno.writeTextFile(join(r.ws, "a.txt"), "a\n");
  assert.equal((await hostGit(r, ["add", "."], top)).code, 0);
  const c = await hostGit(r, ["commit", "-q", "-m", "init"], top);
  assert.equal(c.code, 0, c.out);
  return r;
}

async function sh(r: Repo, shell: string, mode: SandboxMode = "workspace-write", git?: GitAccess) {
  const policy = createPolicy({
    workspace: r.ws,
    mode,
    home: r.home,
    hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: r.home },
    ...(git ? { git } : {}),
  });
  return await collect(await spawnSandboxed({ shell, policy, stdin: "null" }));
}

/** The planted fsmonitor: a shell command that leaves the marker. */
const fsmonitor = (r: Repo) => `[core]\\n\\tfsmonitor = \\"touch ${r.marker}; false\\"\\n`;

/** Run host `git status` (and `git commit`) in the workspace; true when a planted command ran. */
async function hostGitRanPlanted(r: Repo): Promise<boolean> {
  await hostGit(r, ["status"]);
  await hostGit(r, ["commit", "-q", "--allow-empty", "-m", "user commit"]);
  return await exists(r.marker);
}

async function withRepo(fn: (r: Repo) => Promise<void>, opts: { nested?: boolean } = {}) {
  const r = await makeRepo(opts);
  try {
    await fn(r);
  } finally {
    await Deno.remove(r.base, { recursive: true });
  }
}

/** Copies .git to evil/, arms it, and points .git/commondir at it: the attack. */
const commondirAttack = (r: Repo) =>
  `cp -r .git evil; printf "${fsmonitor(r)}" >> evil/config; ` +
  `mkdir -p evil/hooks; printf '#!/bin/sh\\ntouch ${r.marker}\\n' > evil/hooks/pre-commit; ` +
  `chmod +x evil/hooks/pre-commit; echo ../evil > .git/commondir`;

for (const git of ["read-only", "writable"] as const) {
  Deno.test(`(${git} git) a .git/commondir redirect to an armed copy never reaches the host git`, async () => {
    await withRepo(async (r) => {
      // Control: unconfined, the attack works.
      await sh(r, commondirAttack(r), "off");
      assert.equal(await hostGitRanPlanted(r), true, "control: the attack must work unconfined");
    });
    await withRepo(async (r) => {
      await sh(r, commondirAttack(r), "workspace-write", git);
      assert.equal(await exists(join(r.ws, ".git", "commondir")), false);
      assert.equal(await hostGitRanPlanted(r), false);
    });
  });

  Deno.test(`(${git} git) .git/modules/x config and hooks cannot be planted`, async () => {
    await withRepo(async (r) => {
      await sh(
        r,
        `mkdir -p .git/modules/x/hooks; cp -r .git/objects .git/refs .git/HEAD .git/modules/x/; ` +
          `printf "${fsmonitor(r)}" > .git/modules/x/config; ` +
          `printf '#!/bin/sh\\ntouch ${r.marker}\\n' > .git/modules/x/hooks/pre-commit; ` +
          `chmod +x .git/modules/x/hooks/pre-commit; mkdir -p x && echo 'gitdir: ../.git/modules/x' > x/.git`,
        "workspace-write",
        git,
      );
      assert.equal(await exists(join(r.ws, ".git", "modules")), false);
      await hostGit(r, ["status"], join(r.ws, "x"));
      assert.equal(await hostGitRanPlanted(r), false);
    });
  });

  Deno.test(`(${git} git) .git/worktrees entries cannot be planted or redirected`, async () => {
    await withRepo(async (r) => {
      const wt = join(r.base, "wt");
      assert.equal((await hostGit(r, ["worktree", "add", "-q", wt])).code, 0);
      const gitdirFile = join(r.ws, ".git", "worktrees", "wt", "gitdir");
      const before = await Deno.readTextFile(gitdirFile);
      await sh(
        r,
        `echo /elsewhere/.git > .git/worktrees/wt/gitdir; echo ../../../evil > .git/worktrees/wt/commondir; ` +
          `mkdir -p .git/worktrees/w && echo ${r.ws}/w/.git > .git/worktrees/w/gitdir; ` +
          `printf "${fsmonitor(r)}" > .git/worktrees/wt/config.worktree`,
        "workspace-write",
        git,
      );
      assert.equal(await Deno.readTextFile(gitdirFile), before);
      assert.equal(await exists(join(r.ws, ".git", "worktrees", "w")), false);
      assert.equal(await exists(join(r.ws, ".git", "worktrees", "wt", "config.worktree")), false);
      assert.equal(await hostGitRanPlanted(r), false);
      await hostGit(r, ["status"], wt);
      assert.equal(await exists(r.marker), false);
    });
  });

  Deno.test(`(${git} git) .git/info/attributes and objects/info/alternates cannot be written`, async () => {
    await withRepo(async (r) => {
      await Deno.mkdir(join(r.base, "other-objects"));
      await sh(
        r,
        `echo '* -text' > .git/info/attributes; echo 'a.txt' >> .git/info/exclude; ` +
          `echo ${r.base}/other-objects > .git/objects/info/alternates; ` +
          `echo http://x > .git/objects/info/http-alternates`,
        "workspace-write",
        git,
      );
      assert.equal(await exists(join(r.ws, ".git", "info", "attributes")), false);
      assert.doesNotMatch(await Deno.readTextFile(join(r.ws, ".git", "info", "exclude")), /a\.txt/);
      assert.equal(await exists(join(r.ws, ".git", "objects", "info", "alternates")), false);
      assert.equal(await exists(join(r.ws, ".git", "objects", "info", "http-alternates")), false);
    });
  });
}

Deno.test("by default the whole .git is read-only to commands: no commit, no ref change", async () => {
  await withRepo(async (r) => {
    const head = (await hostGit(r, ["rev-parse", "HEAD"])).out;
    const res = await sh(
      r,
      "echo b > b.txt; git add b.txt && git -c user.name=m -c user.email=m@x commit -qm model; echo rc=$?; echo x > .git/HEAD",
    );
    assert.match(res.out, /rc=[1-9]/);
    assert.equal((await hostGit(r, ["rev-parse", "HEAD"])).out, head);
    // The work tree itself stays writable.
    assert.equal(await Deno.readTextFile(join(r.ws, "b.txt")), "b\n");
  });
});

Deno.test("with git writable, git add and commit work inside the sandbox and leave no stand-ins behind", async () => {
  await withRepo(async (r) => {
    const listing = async () =>
      (await Array.fromAsync(Deno.readDir(join(r.ws, ".git")))).map((e) => e.name).sort();
    const before = await listing();
    const res = await sh(
      r,
      "ls .git; echo b > b.txt; git add b.txt && git -c user.name=m -c user.email=m@x commit -qm model && echo committed",
      "workspace-write",
      "writable",
    );
    assert.match(res.out, /committed/, res.out);
    // While the command ran, the missing guarded names were held by read-only stand-ins.
    assert.match(res.out, /^commondir$/m);
    assert.match(res.out, /^worktrees$/m);
    assert.match((await hostGit(r, ["log", "--format=%s"])).out, /^model$/m);
    const after = await listing();
    assert.deepEqual(
      after.filter((n) => !before.includes(n)).sort(),
      ["COMMIT_EDITMSG", "logs"].filter((n) => !before.includes(n)),
    );
    for (const n of ["commondir", "config.worktree", "modules", "worktrees", "remotes"]) {
      assert.equal(after.includes(n), before.includes(n), `${n} left behind`);
    }
    assert.equal((await hostGit(r, ["status", "--porcelain"])).out, "");
  });
});

Deno.test("a workspace inside an outer repository cannot get a .git of its own", async () => {
  const attack = (r: Repo) =>
    `git init -q . ; mkdir -p .git; cp -r ../.git/. .git/ 2>/dev/null; ` +
    `printf "${fsmonitor(r)}" >> .git/config; ` +
    `rm -rf .git; printf 'gitdir: ../evil\\n' > .git`;
  await withRepo(async (r) => {
    await sh(r, `git init -q . && printf "${fsmonitor(r)}" >> .git/config`, "off");
    assert.equal(await hostGitRanPlanted(r), true, "control: the attack must work unconfined");
  }, { nested: true });
  await withRepo(async (r) => {
    const res = await sh(r, `${attack(r)}; git rev-parse --show-toplevel`);
    // Inside, git still finds the outer repository (read-only).
    assert.match(res.out, new RegExp(`${r.base}/outer`));
    assert.equal(await exists(join(r.ws, ".git")), false, "a stand-in or a planted .git was left");
    assert.equal(await hostGitRanPlanted(r), false);
  }, { nested: true });
});

Deno.test("a .git gitdir pointer and the git dir it names are guarded like a .git directory", async () => {
  const base = await visibleTempDir("penguin-git-guard-");
  const r = repoIn(base);
  try {
    await Deno.mkdir(r.home);
    const init = await hostGit(r, ["init", "-q", `--separate-git-dir=${r.ws}/.repo`, r.ws], base);
    assert.equal(init.code, 0, init.out);
    const pointer = await Deno.readTextFile(join(r.ws, ".git"));
    await sh(
      r,
      `printf "${fsmonitor(r)}" >> .repo/config; cp -r .repo evil; printf "${
        fsmonitor(r)
      }" >> evil/config; ` +
        `echo 'gitdir: evil' > .git; rm -f .git; mv .git moved`,
    );
    assert.equal(await Deno.readTextFile(join(r.ws, ".git")), pointer);
    assert.doesNotMatch(await Deno.readTextFile(join(r.ws, ".repo", "config")), /fsmonitor/);
    assert.equal(await hostGitRanPlanted(r), false);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a symlinked .git stops a workspace-write command before it runs", async () => {
  await withRepo(async (r) => {
    await Deno.rename(join(r.ws, ".git"), join(r.ws, "repo.git"));
    await Deno.symlink("repo.git", join(r.ws, ".git"));
    await assert.rejects(sh(r, "true"), /is a symbolic link.*gitdir: <its target>/s);
  });
});

function definition(name: string) {
  return DEFAULT_TOOL_DEFINITIONS.find((d) => d.name === name)!;
}

Deno.test("write_file and edit_file refuse .git paths by default and name the way to open it", async () => {
  await withRepo(async (r) => {
    const config = await Deno.readTextFile(join(r.ws, ".git", "config"));
    const w = await run(createWriteFileTool(definition("write_file")), {
      file_path: ".git/config",
      content: "[core]\n\tfsmonitor = evil\n",
    }, { ws: r.ws });
    assert.equal(w.status, "failed");
    assert.match(w.output, /git directory is read-only.*--git-writable/);
    const head = await run(createWriteFileTool(definition("write_file")), {
      file_path: ".git/HEAD",
      content: "ref: refs/heads/evil\n",
    }, { ws: r.ws });
    assert.equal(head.status, "failed");
    const e = await run(createEditFileTool(definition("edit_file")), {
      file_path: ".git/config",
      old_string: "[core]",
      new_string: "[core]\n\tfsmonitor = evil",
    }, { ws: r.ws });
    assert.equal(e.status, "failed");
    assert.equal(await Deno.readTextFile(join(r.ws, ".git", "config")), config);
    assert.equal(await exists(join(r.ws, ".git", "commondir")), false);
  });
});

// Issue 26 attempt 22: a rebase todo list planted with --git-writable ran at the user's
// `git rebase --continue`. Each state directory: the shell and write_file cannot plant it.
for (const dir of ["rebase-merge", "rebase-apply", "sequencer"]) {
  Deno.test(`(writable git) .git/${dir} cannot be planted: its todo list's exec would run on the host`, async () => {
    await withRepo(async (r) => {
      const head = (await hostGit(r, ["rev-parse", "HEAD"])).out.trim();
      const todo = dir === "sequencer" ? "todo" : "git-rebase-todo";
      const res = await sh(
        r,
        `mkdir -p .git/${dir}; cd .git/${dir} && echo refs/heads/main > head-name && ` +
          `echo ${head} > onto && echo ${head} > orig-head && : > interactive && echo 1 > msgnum && ` +
          `echo 1 > end && : > done && echo 'exec touch ${r.marker}' > ${todo} && echo planted`,
        "workspace-write",
        "writable",
      );
      assert.doesNotMatch(res.out, /planted/);
      assert.equal(await exists(join(r.ws, ".git", dir)), false, `${dir} was left behind`);
      const w = await run(
        createWriteFileTool(definition("write_file")),
        {
          file_path: `.git/${dir}/${todo}`,
          content: `exec touch ${r.marker}\n`,
        },
        { ws: r.ws },
        {
          ctx: {
            sandbox: createPolicy({ workspace: r.ws, home: r.home, hostEnv: {}, git: "writable" }),
          },
        },
      );
      assert.equal(w.status, "failed");
      assert.match(w.output, /todo list of a rebase.*cannot rebase/);
      await hostGit(r, ["status"]);
      await hostGit(r, ["rebase", "--continue"]);
      await hostGit(r, ["cherry-pick", "--continue"]);
      assert.equal(await exists(r.marker), false, "the planted exec ran on the host");
    });
  });
}
