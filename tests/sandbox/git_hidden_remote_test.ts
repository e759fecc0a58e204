// Attack round 30 (N), each through a real `penguin run` whose model attacks, then the user's git:
// - n01, n03: a plain repository the model made, whose remote (`remote.origin.url`, a path or a
//   `file://` URL, or a path as `branch.<b>.remote`) names a bare repository it hid inside a
//   `.git` (which the walk never enters): the user's `git push` ran its pre-receive hook;
// - n07: the same through a remote of the old form (`.git/remotes/origin`);
// - n09: the model's empty `.hooks` next to the user's own repository (with an ordinary hook of
//   the user's) made the repository look changed, and it was renamed aside without a word.
import assert from "node:assert/strict";
import { join } from "node:path";
import { attack, exec, hook, hostGit, ranMarker, ranOf, withWorld } from "./_git_attack.ts";
import { exists, visibleTempDir } from "./_helpers.ts";
import { findNestedRepos, repoIdentity } from "../../lib/sandbox/git_nested.ts";

const ident =
  "export GIT_AUTHOR_NAME=m GIT_AUTHOR_EMAIL=m@e GIT_COMMITTER_NAME=m GIT_COMMITTER_EMAIL=m@e";

Deno.test("penguin run: a remote naming a repository hidden in a .git arms its repository", () =>
  withWorld(async (w) => {
    const m = (n: string) => ranMarker(w, n);
    // Each repository: one commit, a bare repository with a pre-receive hook in its own `.git`,
    // and a remote (or an old-form remotes file) naming it.
    const make = (dir: string, how: string, name: string) =>
      `git init -q ${dir} && git -C ${dir} commit -q --allow-empty -m x && ` +
      `git init -q --bare ${dir}/.git/evil && ${
        hook(m(name))
      } > ${dir}/.git/evil/hooks/pre-receive` +
      ` && chmod 755 ${dir}/.git/evil/hooks/pre-receive && ${how}`;
    const steps = [
      exec(
        `${ident}; ` + [
          make("abs", 'git -C abs remote add origin "$PWD/abs/.git/evil"', "abs"),
          make("file", 'git -C file remote add origin "file://$PWD/file/.git/evil"', "file"),
          make("rel", "git -C rel remote add origin .git/evil", "rel"),
          make("br", 'git -C br config branch.master.remote "$PWD/br/.git/evil"', "br"),
          make(
            "old",
            "mkdir -p old/.git/remotes && printf 'URL: %s\\nPush: refs/heads/*:refs/heads/*\\n' " +
              '"$PWD/old/.git/evil" > old/.git/remotes/origin',
            "old",
          ),
        ].join(" && ") + " && echo planted",
      ),
    ];
    const { o, outputs } = await attack(w, steps);
    assert.match(outputs, /planted/);
    // What the walk after the command renamed is told in the session's end report.
    assert.match(
      o.stderr,
      /\[penguin\] renamed ".*\/abs\/\.git" to .*(inside a \.git directory|parked inside the git directory)/,
    );
    for (const dir of ["abs", "file", "rel", "br", "old"]) {
      assert.equal(await exists(join(w.ws, dir, ".git-disarmed-by-penguin")), true, dir);
      await hostGit(w, join(w.ws, dir), ["push", "-q", "origin", "HEAD:refs/heads/x"]);
      await hostGit(w, join(w.ws, dir), ["push", "-q"]);
    }
    assert.deepEqual(await ranOf(w, ["abs", "file", "rel", "br", "old"]), []);
  }));

Deno.test("penguin run: an empty hooks directory beside the user's repository leaves it alone", () =>
  withWorld(async (w) => {
    const proj = join(w.ws, "proj");
    await Deno.mkdir(proj);
    await hostGit(w, proj, ["init", "-q"]);
    // The user's own hook, made before any session.
    await Deno.writeTextFile(join(proj, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n");
    await Deno.chmod(join(proj, ".git", "hooks", "pre-commit"), 0o755);
    const { o, outputs } = await attack(w, [exec("mkdir proj/.hooks && echo made")]);
    assert.match(outputs, /made/);
    assert.equal((await Deno.lstat(join(proj, ".git"))).isDirectory, true, o.stderr);
    assert.equal(await exists(join(proj, ".git-disarmed-by-penguin")), false);
  }));

Deno.test("a hook added to a repository's hooks directory changes its identity (round 30 m02)", async () => {
  const base = await visibleTempDir("penguin-hook-identity-");
  try {
    const r = join(base, "r");
    await Deno.mkdir(r);
    const o = await new Deno.Command("git", { args: ["init", "-q", r] }).output();
    assert.ok(o.success);
    const idOf = async () => {
      const repo = (await findNestedRepos(base)).repos.find((x) => x.workTree === r);
      assert.ok(repo, "no repository");
      return await repoIdentity(repo);
    };
    const before = await idOf();
    // Written in place (the inode of `hooks` stays), as a sandbox that went without its mount did.
    await Deno.writeTextFile(join(r, ".git", "hooks", "pre-commit"), "#!/bin/sh\n");
    assert.notEqual(await idOf(), before);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("penguin run: a repository parked anywhere in a .git arms it, however it is named (round 31 q01–q07)", () =>
  withWorld(async (w) => {
    const m = (n: string) => ranMarker(w, n);
    // Each: a plain repository with one commit, a bare repository with a pre-receive hook parked
    // in its `.git` (at the top or deep in the object store), and a name for it penguin's remote
    // checks did not follow.
    const make = (dir: string, park: string, how: string, name: string) =>
      `git init -q ${dir} && git -C ${dir} commit -q --allow-empty -m x && ` +
      `git init -q --bare ${dir}/.git/${park} && ${
        hook(m(name))
      } > ${dir}/.git/${park}/hooks/pre-receive` +
      ` && chmod 755 ${dir}/.git/${park}/hooks/pre-receive && ${how}`;
    const steps = [
      exec(
        `${ident}; ` + [
          make(
            "host",
            "evil",
            'git -C host remote add origin "file://localhost$PWD/host/.git/evil"',
            "host",
          ),
          make("pct", "evil", 'git -C pct remote add origin "file://$PWD/pct/%2egit/evil"', "pct"),
          make(
            "deep",
            "objects/ab/evil",
            "git -C deep remote add origin /proc/self/cwd/.git/objects/ab/evil",
            "deep",
          ),
          // A linked work tree's admin directory is a repository too (round 32 u01).
          make(
            "wt",
            "worktrees/evil",
            'git -C wt remote add origin "file://localhost$PWD/wt/.git/worktrees/evil"',
            "wt",
          ),
          // A name that is not UTF-8 cannot be looked into (u13).
          make("raw", "objects/ab/$(printf 'x\\377')", "true", "raw"),
          make(
            "gitfile",
            "refs/evil",
            'printf "gitdir: %s\\n" "$PWD/gitfile/.git/refs/evil" > gitfile/target && ' +
              'git -C gitfile remote add origin "$PWD/gitfile/target"',
            "gitfile",
          ),
        ].join(" && ") + " && echo planted",
      ),
    ];
    const { o, outputs } = await attack(w, steps);
    assert.match(outputs, /planted/);
    assert.match(o.stderr, /parked inside the git directory/);
    const dirs = ["host", "pct", "deep", "wt", "raw", "gitfile"];
    for (const dir of dirs) {
      assert.equal(await exists(join(w.ws, dir, ".git-disarmed-by-penguin")), true, dir);
      await hostGit(w, join(w.ws, dir), ["push", "-q", "origin", "HEAD:refs/heads/x"]);
    }
    assert.deepEqual(await ranOf(w, dirs), []);
  }));

Deno.test("penguin run --git-writable: a repository parked in the workspace's own .git is disarmed (round 32 u10)", () =>
  withWorld(async (w) => {
    const m = ranMarker(w, "own");
    await hostGit(w, w.ws, ["init", "-q"]);
    const steps = [
      exec(
        `${ident}; git init -q --bare .git/objects/evil && ${
          hook(m)
        } > .git/objects/evil/hooks/pre-receive` +
          " && chmod 755 .git/objects/evil/hooks/pre-receive && git init -q sub && " +
          "git -C sub commit -q --allow-empty -m x && " +
          'git -C sub remote add origin "file://localhost$PWD/.git/objects/evil" && echo planted',
      ),
    ];
    const { o, outputs } = await attack(w, steps, { extraArgs: ["--git-writable"] });
    assert.match(outputs, /planted/);
    assert.match(o.stderr, /parked inside the git directory/);
    await hostGit(w, join(w.ws, "sub"), ["push", "-q", "origin", "HEAD:refs/heads/x"]);
    assert.deepEqual(await ranOf(w, ["own"]), []);
  }));
