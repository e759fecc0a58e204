// Submodule git directories inside a repository's own git directory (git_modules.ts, attack
// pass 14 G1/G2): a repo a command made whose `.git/modules/<name>` (at any depth) holds a hook
// or an fsmonitor is disarmed, so the user's `git submodule update --init` there runs nothing;
// a plain repo with a submodule is left alone; a hook added there changes the repo's identity;
// and a plan protects the whole git directory of the user's repo, `modules/` included.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  armedReason,
  disarmNewRepos,
  findNestedRepos,
  type NestedRepo,
  repoIdentity,
} from "../../lib/sandbox/git_nested.ts";
import { moduleGitDirs } from "../../lib/sandbox/git_modules.ts";
import { createPolicy, resolvePlan } from "../../lib/sandbox/mod.ts";
import { hostRun } from "../support/host_git.ts";
import { exists } from "./_helpers.ts";
import { type Repo, withRepoDirs } from "./_git_repo.ts";

async function git(r: Repo, cwd: string, args: string[]): Promise<string> {
  const res = await hostRun(r.home, cwd, "git", ["-c", "protocol.file.allow=always", ...args]);
  assert.equal(res.code, 0, `git ${args.join(" ")}: ${res.out}`);
  return res.out;
}

/** `ws/X`, a repo with the submodule `sub` (from `ws/S`, removed after), committed. */
async function withSubmodule(fn: (r: Repo, x: string) => Promise<void>): Promise<void> {
  await withRepoDirs("penguin-git-modules-", async (r) => {
    const s = join(r.ws, "S"), x = join(r.ws, "X");
    await git(r, r.ws, ["init", "-q", "S"]);
    await Deno.writeTextFile(join(s, "f"), "s\n");
    await git(r, s, ["add", "f"]);
    await git(r, s, ["commit", "-q", "-m", "s"]);
    await git(r, r.ws, ["init", "-q", "X"]);
    await git(r, x, ["submodule", "add", "-q", "../S", "sub"]);
    await git(r, x, ["commit", "-q", "-m", "x"]);
    await fn(r, x);
  });
}

async function hook(path: string, marker: string): Promise<void> {
  await Deno.writeTextFile(path, `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
}

const dotgit = (x: string): NestedRepo => ({
  workTree: x,
  entry: join(x, ".git"),
  kind: "dotgit",
  symlink: false,
});

Deno.test("a hook in a deinit'ed submodule's git dir disarms the repo; its update runs nothing", async () => {
  await withSubmodule(async (r, x) => {
    await hook(join(x, ".git/modules/sub/hooks/post-checkout"), r.marker);
    await git(r, x, ["submodule", "deinit", "-q", "-f", "sub"]);
    await Deno.remove(join(r.ws, "S"), { recursive: true });
    assert.match(
      String(await armedReason(dotgit(x), [r.ws], r.home)),
      /submodule git directory .*modules\/sub is armed: it has the hook .*post-checkout/,
    );
    const out = await disarmNewRepos(r.ws, [], [r.ws]);
    assert.ok(out.some((d) => d.from === join(x, ".git") && d.to !== ""), JSON.stringify(out));
    assert.equal(await exists(join(x, ".git")), false);
    // The user's update finds no repository there, and runs no hook.
    await hostRun(r.home, x, "git", ["-c", "protocol.file.allow=always", "submodule", "update"]);
    assert.equal(await exists(r.marker), false);
  });
});

Deno.test("an fsmonitor in a nested submodule's git dir (modules/a/modules/b) arms the repo", async () => {
  await withSubmodule(async (r, x) => {
    const b = join(x, ".git/modules/sub/modules/b");
    await Deno.mkdir(join(b, "refs"), { recursive: true });
    await Deno.writeTextFile(join(b, "HEAD"), "ref: refs/heads/main\n");
    await Deno.writeTextFile(join(b, "config"), `[core]\n\tfsmonitor = touch ${r.marker}\n`);
    assert.deepEqual(moduleGitDirs(join(x, ".git")).dirs, [join(x, ".git/modules/sub"), b]);
    assert.match(
      String(await armedReason(dotgit(x), [r.ws], r.home)),
      /modules\/sub\/modules\/b is armed: .*config sets core\.fsmonitor/,
    );
    const out = await disarmNewRepos(r.ws, [], [r.ws]);
    assert.ok(out.some((d) => d.from === join(x, ".git") && d.to !== ""), JSON.stringify(out));
  });
});

Deno.test("a submodule git dir named with a slash is found at its depth", async () => {
  await withSubmodule(async (r, x) => {
    const deep = join(x, ".git/modules/a/b");
    await Deno.mkdir(join(deep, "hooks"), { recursive: true });
    await Deno.writeTextFile(join(deep, "config"), "");
    await hook(join(deep, "hooks/pre-commit"), r.marker);
    assert.match(String(await armedReason(dotgit(x), [r.ws], r.home)), /modules\/a\/b is armed/);
  });
});

Deno.test("a plain repo with a submodule is left alone (its core.worktree is the submodule's)", async () => {
  await withSubmodule(async (r, x) => {
    assert.equal(await armedReason(dotgit(x), [r.ws], r.home), undefined);
    const out = await disarmNewRepos(r.ws, [], [r.ws]);
    assert.equal(out.some((d) => d.from === join(x, ".git")), false, JSON.stringify(out));
    // A core.worktree leading elsewhere (hooks run there) is armed, as in any repo.
    await git(r, join(x, ".git/modules/sub"), ["config", "core.worktree", "../../../../.."]);
    assert.match(String(await armedReason(dotgit(x), [r.ws], r.home)), /sets core\.worktree/);
  });
});

Deno.test("past its limit, the look below modules/ stops and reports it", async () => {
  await withSubmodule((_r, x) => {
    assert.equal(moduleGitDirs(join(x, ".git"), 3).overflow, true);
    assert.equal(moduleGitDirs(join(x, ".git")).overflow, false);
    return Promise.resolve();
  });
});

Deno.test("a hook added in a submodule git dir changes the repo's identity", async () => {
  await withSubmodule(async (r, x) => {
    const before = await repoIdentity(dotgit(x));
    assert.equal(await repoIdentity(dotgit(x)), before);
    await hook(join(x, ".git/modules/sub/hooks/post-checkout"), r.marker);
    assert.notEqual(await repoIdentity(dotgit(x)), before);
    // Renaming the whole submodule git dir away and back with another inside changes it too.
    const mid = await repoIdentity(dotgit(x));
    await Deno.rename(join(x, ".git/modules/sub"), join(r.ws, "parked"));
    await Deno.mkdir(join(x, ".git/modules/sub"));
    await Deno.writeTextFile(join(x, ".git/modules/sub/HEAD"), "ref: refs/heads/main\n");
    assert.notEqual(await repoIdentity(dotgit(x)), mid);
  });
});

Deno.test("a plan protects the user's repo's whole git dir, its modules/ included", async () => {
  await withSubmodule(async (r, x) => {
    const policy = createPolicy({
      workspace: r.ws,
      mode: "workspace-write",
      home: "",
      hostEnv: {},
    });
    const plan = await resolvePlan(policy, r.ws);
    const guarded = [...plan.protect, ...(plan.protectTry ?? [])];
    const modules = join(x, ".git/modules/sub/hooks");
    assert.ok(
      guarded.some((p) => modules === p || modules.startsWith(`${p}/`)),
      JSON.stringify(guarded),
    );
    assert.ok((await findNestedRepos(r.ws)).repos.some((n) => n.entry === join(x, ".git")));
  });
});

Deno.test("a link that is the only entry of modules/ (its git dir parked in .git) is armed", async () => {
  await withSubmodule(async (r, x) => {
    // Attack pass 15 N2: modules/ then has no subdirectory (link count 2), yet git follows the link.
    await Deno.mkdir(join(x, ".git/parked"));
    await Deno.rename(join(x, ".git/modules/sub"), join(x, ".git/parked/sub"));
    await hook(join(x, ".git/parked/sub/hooks/post-checkout"), r.marker);
    await Deno.symlink("../parked/sub", join(x, ".git/modules/sub"));
    assert.equal((await Deno.lstat(join(x, ".git/modules"))).nlink, 2);
    assert.deepEqual(moduleGitDirs(join(x, ".git")).links, [join(x, ".git/modules/sub")]);
    assert.match(
      String(await armedReason(dotgit(x), [r.ws], r.home)),
      /modules\/sub|parked inside the git directory/,
    );
    const out = await disarmNewRepos(r.ws, [], [r.ws]);
    assert.ok(out.some((d) => d.from === join(x, ".git") && d.to !== ""), JSON.stringify(out));
  });
});
