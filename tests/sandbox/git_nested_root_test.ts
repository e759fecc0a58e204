// A writable root that a command makes a git directory itself (attack round 28 f03, f04):
// `HEAD`, `objects/`, `refs/` and a `config` with `core.worktree=.` at the top of a workspace
// without `.git`, or of a package directory of the user's repository. git asks whether the
// directory it runs in is a git directory before it walks up, so the user's next `git status`
// there used the model's configuration. The walk now checks the root like any directory, and a
// root git directory that was not the user's is disarmed whatever it holds; one the user had is
// kept, what configures it read-only.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { findNestedRepos } from "../../lib/sandbox/git_nested.ts";
import { hostRun } from "../support/host_git.ts";
import { collect, exists } from "./_helpers.ts";
import { type Repo, withRepoDirs } from "./_git_repo.ts";
import { attack, exec, hostGit, ranMarker, ranOf, withWorld } from "./_git_attack.ts";

/** Shell: make the current directory a git directory whose config runs `marker`'s maker. */
const rootGitDir = (marker: string, config = true) =>
  `mkdir -p objects refs/heads && printf 'ref: refs/heads/main\\n' > HEAD && ` +
  (config
    ? `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n` +
      `\\tfsmonitor = ./evil.sh\\n' > config && `
    : "") +
  `printf '#!/bin/sh\\ntouch ${marker}\\necho {}\\n' > evil.sh && chmod +x evil.sh && ` +
  `echo made`;

async function sh(r: Repo, workspace: string, shell: string) {
  const policy = createPolicy({
    workspace,
    mode: "workspace-write",
    home: r.home,
    hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: r.home },
  });
  return await collect(await spawnSandboxed({ shell, policy, stdin: "null" }));
}

Deno.test("the walk lists a root that is itself a git directory", async () => {
  await withRepoDirs("penguin-git-root-", async (r) => {
    const made = await hostRun(r.home, r.ws, "sh", ["-c", rootGitDir(r.marker)]);
    assert.equal(made.code, 0, made.out);
    const { repos } = await findNestedRepos(r.ws);
    assert.deepEqual(repos.map((x) => [x.entry, x.kind]), [[r.ws, "bare"]]);
  });
});

for (const config of [true, false]) {
  Deno.test(`a workspace without .git that a command makes a git directory (${config ? "armed" : "plain"}) is disarmed`, async () => {
    await withRepoDirs("penguin-git-root-", async (r) => {
      const out = await sh(r, r.ws, rootGitDir(r.marker, config));
      assert.match(out.out, /made/);
      assert.equal(await exists(join(r.ws, "HEAD")), false, "HEAD stays");
      assert.equal(await exists(join(r.ws, "HEAD-disarmed-by-penguin")), true);
      const status = await hostRun(r.home, r.ws, "git", ["status"]);
      assert.match(status.out, /not a git repository/);
      assert.equal(await exists(r.marker), false, "the host git ran the model's program");
    });
  });
}

Deno.test("a package directory of the user's repository made a git directory is disarmed", async () => {
  // f04: git asks whether frontend/ is a git directory before it finds the user's ../.git.
  await withRepoDirs("penguin-git-root-", async (r) => {
    assert.equal((await hostRun(r.home, r.ws, "git", ["init", "-q"])).code, 0);
    const frontend = join(r.ws, "frontend");
    await Deno.mkdir(frontend);
    await Deno.writeTextFile(join(frontend, "index.js"), "x\n");
    const out = await sh(r, frontend, rootGitDir(r.marker));
    assert.match(out.out, /made/);
    const top = await hostRun(r.home, frontend, "git", ["rev-parse", "--show-toplevel"]);
    assert.equal(top.out.trim(), r.ws, "git still finds the user's repository");
    await hostRun(r.home, frontend, "git", ["status"]);
    assert.equal(await exists(r.marker), false, "the host git ran the model's program");
  });
});

Deno.test("a workspace that is the user's own git directory stays, its config read-only", async () => {
  await withRepoDirs("penguin-git-root-", async (r) => {
    assert.equal((await hostRun(r.home, r.ws, "git", ["init", "-q", "--bare", "."])).code, 0);
    const config = await Deno.readTextFile(join(r.ws, "config"));
    const out = await sh(
      r,
      r.ws,
      `printf '[core]\\n\\tfsmonitor = ./evil.sh\\n' >> config; mkdir -p hooks; ` +
        `echo x > hooks/post-checkout; echo done`,
    );
    assert.match(out.out, /done/);
    assert.equal(await Deno.readTextFile(join(r.ws, "config")), config);
    assert.equal(await exists(join(r.ws, "hooks", "post-checkout")), false);
    assert.equal(await exists(join(r.ws, "HEAD")), true, "the user's HEAD was renamed");
  });
});

Deno.test("penguin run: a workspace without .git made a git directory runs nothing at the user's git status", async () => {
  await withWorld(async (w) => {
    await Deno.remove(join(w.ws, ".git"), { recursive: true });
    const marker = ranMarker(w, "root");
    const { outputs } = await attack(w, [
      exec(`${rootGitDir(marker)} && git rev-parse --git-dir`),
    ]);
    assert.match(outputs, /made/);
    await hostGit(w, w.ws, ["status"]);
    await hostGit(w, w.ws, ["log", "-1"]);
    assert.deepEqual(await ranOf(w, ["root"]), [], "the user's git ran the model's program");
    assert.equal(await exists(join(w.ws, "HEAD")), false, "the root's HEAD stays");
  });
});

Deno.test("penguin run: a package directory of the user's repository made a git directory runs nothing", async () => {
  await withWorld(async (w) => {
    const frontend = join(w.ws, "frontend");
    await Deno.mkdir(frontend);
    const marker = ranMarker(w, "package");
    const { outputs } = await attack({ ...w, ws: frontend }, [exec(rootGitDir(marker))]);
    assert.match(outputs, /made/);
    await hostGit(w, frontend, ["status"]);
    assert.deepEqual(await ranOf(w, ["package"]), [], "the user's git ran the model's program");
  });
});
