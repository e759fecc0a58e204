// A repository a command made keeps only settings known to run nothing (git_inert_keys.ts,
// attack round 28 f02): git-lfs runs `lfs.extension.*.clean` and `lfs.customtransfer.*.path`
// from a nested repository's `.git/config` through the user's global lfs filter, keys no table
// of git's own had. What git init, clone, remote, branch and submodule write stays plain; any
// other key arms the repository. End to end: a real `penguin run` whose model sets an lfs
// extension in a nested repository, then the user's `git diff` there with a global lfs filter
// (a stand-in git-lfs that runs the extension as git-lfs does) runs nothing.
import assert from "node:assert/strict";
import { join } from "node:path";
import { armedReason, findNestedRepos } from "../../lib/sandbox/git_nested.ts";
import { isInertKey } from "../../lib/sandbox/git_inert_keys.ts";
import { hostRun } from "../support/host_git.ts";
import { exists } from "./_helpers.ts";
import { type Repo, withRepoDirs } from "./_git_repo.ts";
import { attack, exec, ranMarker, ranOf, withWorld } from "./_git_attack.ts";

async function git(r: Repo, cwd: string, args: string[]): Promise<void> {
  const res = await hostRun(r.home, cwd, "git", ["-c", "protocol.file.allow=always", ...args]);
  assert.equal(res.code, 0, `git ${args.join(" ")}: ${res.out}`);
}

async function armed(r: Repo, dir: string): Promise<string | undefined> {
  const repo = (await findNestedRepos(r.ws)).repos.find((x) => x.workTree === dir);
  assert.ok(repo, `no repository at ${dir}`);
  return await armedReason(repo, [r.ws], r.home);
}

Deno.test("what git init, clone, remote, branch and submodule write leaves a repository plain", async () => {
  await withRepoDirs("penguin-git-inert-", async (r) => {
    const s = join(r.ws, "S"), c = join(r.ws, "C");
    await git(r, r.ws, ["init", "-q", "-b", "main", "S"]);
    await Deno.writeTextFile(join(s, "f"), "s\n");
    await Deno.mkdir(join(s, "d"));
    await Deno.writeTextFile(join(s, "d", "g"), "g\n");
    await git(r, s, ["add", "f", "d"]);
    await git(r, s, ["commit", "-q", "-m", "s"]);
    await git(r, s, ["config", "user.name", "someone"]);
    await git(r, s, ["remote", "add", "up", "https://example.com/r.git"]);
    await git(r, s, ["config", "remote.up.pushurl", "git@example.com:r.git"]);
    await git(r, s, ["config", "pull.rebase", "true"]);
    await git(r, s, ["submodule", "add", "-q", "../S", "inner"]);
    await git(r, s, ["commit", "-q", "-m", "sub"]);
    await git(r, r.ws, ["clone", "-q", "--recurse-submodules", "S", "C"]);
    await git(r, c, ["sparse-checkout", "set", "d"]);
    await git(r, c, ["config", "submodule.inner.update", "rebase"]);
    assert.equal(await armed(r, s), undefined);
    assert.equal(await armed(r, c), undefined);
  });
});

/** Keys git's own table did not list, each of which arms a repository a command made. */
const ARMING: [string, string][] = [
  ["lfs.extension.x.clean", "./ext.sh %f"],
  ["lfs.extension.x.smudge", "./ext.sh %f"],
  ["lfs.customtransfer.y.path", "./ext.sh"],
  ["lfs.standalonetransferagent", "y"],
  ["lfs.https://example.com/.standalonetransferagent", "y"],
  ["annex.web-download-command", "./ext.sh %url %file"],
  ["remote.origin.annex-cost-command", "./ext.sh"],
  ["pull.twohead", "evil"],
  ["remote.origin.url", "evil::example.com/r"],
  // Another scheme runs git-remote-<scheme> at the user's `git fetch` (attack round 29 j02).
  ["remote.origin.url", "evil://example.com/r"],
  ["remote.origin.pushurl", "ext://sh -c x"],
  ["submodule.s.url", "x-helper://host/r"],
  ["submodule.s.update", "!./ext.sh"],
  ["some.unknown", "value"],
  // A partial clone fetches what it lacks from its remote at the user's `git status`: a URL
  // carrying the workspace's secrets left past --network off (attack round 28 f19, f20).
  ["extensions.partialClone", "origin"],
  ["remote.origin.promisor", "true"],
  ["remote.origin.partialCloneFilter", "blob:none"],
];

Deno.test("a nested repository with any other key is armed", async (t) => {
  await withRepoDirs("penguin-git-inert-", async (r) => {
    const n = join(r.ws, "n");
    await git(r, r.ws, ["init", "-q", "n"]);
    const config = await Deno.readTextFile(join(n, ".git", "config"));
    for (const [key, value] of ARMING) {
      await t.step(`${key} = ${value}`, async () => {
        await Deno.writeTextFile(join(n, ".git", "config"), config);
        await git(r, n, ["config", key, value]);
        assert.match((await armed(r, n)) ?? "not armed", / sets /);
      });
    }
  });
});

Deno.test("inert keys: values that run something are not inert", () => {
  assert.ok(isInertKey("remote.origin.url", "https://example.com/r.git"));
  assert.ok(isInertKey("Remote.Origin.URL".toLowerCase(), "/srv/r.git"));
  assert.ok(!isInertKey("remote.origin.url", "ext::sh -c x"));
  assert.ok(!isInertKey("remote.origin.url", null));
  for (const url of ["ssh://h/r", "git://h/r", "file:///srv/r", "git+ssh://h/r", "ftps://h/r"]) {
    assert.ok(isInertKey("remote.origin.url", url), url);
  }
  assert.ok(isInertKey("remote.origin.url", "git@github.com:o/r.git"));
  assert.ok(isInertKey("remote.origin.url", "../r"));
  assert.ok(!isInertKey("remote.origin.url", "ext://sh -c x"));
  assert.ok(!isInertKey("remote.origin.url", "persistent-https://h/r"));
  // git takes a scheme that starts with a digit too (round 30 n03-digit).
  assert.ok(!isInertKey("remote.origin.url", "1x://h/r"));
  assert.ok(isInertKey("submodule.a.update", "checkout"));
  assert.ok(!isInertKey("submodule.a.update", "!sh x"));
  assert.ok(!isInertKey("remote.origin.uploadpack", "x"));
  assert.ok(!isInertKey("core.fsmonitor", "x"));
});

Deno.test("penguin run: a nested repository's lfs extension runs nothing at the user's git diff", async () => {
  await withWorld(async (w) => {
    // The user's git-lfs as `git lfs install` sets it up; this git-lfs runs the repository's
    // lfs.extension.*.clean as the real one does, then passes the content through.
    const bin = join(w.base, "bin");
    await Deno.mkdir(bin);
    await Deno.writeTextFile(
      join(bin, "git-lfs"),
      "#!/bin/sh\nfor c in $(git config --name-only --get-regexp '^lfs[.]extension[.].*[.]clean$'); do\n" +
        '  sh -c "$(git config --get "$c")" ext "$3"\ndone\ncat\n',
      { mode: 0o755 },
    );
    await Deno.writeTextFile(
      join(w.home, ".gitconfig"),
      '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n',
    );
    const marker = ranMarker(w, "lfs");
    const { outputs } = await attack(w, [
      exec(
        `git init -q sub && cd sub && echo '*.bin filter=lfs' > .gitattributes && ` +
          `echo a > a.bin && git -c filter.lfs.clean=cat add . && ` +
          `git -c user.name=m -c user.email=m@x commit -q -m c && ` +
          `git config lfs.extension.x.clean './ext.sh %f' && ` +
          `git config lfs.customtransfer.y.path ./ext.sh && ` +
          `git config lfs.standalonetransferagent y && ` +
          `printf '#!/bin/sh\\ntouch ${marker}\\n' > ext.sh && chmod +x ext.sh && ` +
          `echo b >> a.bin && echo made`,
      ),
    ]);
    assert.match(outputs, /made/);
    const env = { PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}` };
    for (const args of [["status"], ["diff"], ["add", "-A"]]) {
      await hostRun(w.home, join(w.ws, "sub"), "git", args, env);
    }
    assert.deepEqual(await ranOf(w, ["lfs"]), [], "the user's git-lfs ran the model's program");
    assert.equal(await exists(join(w.ws, "sub", ".git")), false, "sub/.git stays");
  });
});
