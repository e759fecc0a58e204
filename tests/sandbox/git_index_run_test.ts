// Attack round 19 concgit R2, end to end: a sandboxed command writes a git index whose entry
// `.git/hooks/pre-commit` git 2.39 checks out unverified (`git checkout -- .`) into the real
// `.git/hooks`, where the user's next `git commit` runs it:
// - (a) in a nested repository the command made (default flags): the repository is disarmed;
// - (b) in the workspace's own repository with `--git-writable`: its index is renamed aside and
//   the session's end says so.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, type GitAccess, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { takeSessionEndReport } from "../../lib/sandbox/session_end_report.ts";
import { hostRun } from "../support/host_git.ts";
import { collect, exists } from "./_helpers.ts";
import { type Repo, withRepoDirs } from "./_git_repo.ts";
import { attack, exec, withWorld } from "./_git_attack.ts";
import { base64, blobId, indexBytes } from "./_git_index.ts";

const HOOK = ".git/hooks/pre-commit";

async function git(r: Repo, cwd: string, args: string[]) {
  return await hostRun(r.home, cwd, "git", args);
}

function withRepo(fn: (r: Repo) => Promise<void>): Promise<void> {
  return withRepoDirs("penguin-git-index-", async (r) => {
    await git(r, r.ws, ["init", "-q", "-b", "main"]);
    await Deno.writeTextFile(join(r.ws, "a.txt"), "a\n");
    await git(r, r.ws, ["add", "."]);
    await git(r, r.ws, ["commit", "-q", "-m", "init"]);
    await fn(r);
  });
}

async function sh(r: Repo, shell: string, git: GitAccess = "read-only"): Promise<string> {
  const policy = createPolicy({
    workspace: r.ws,
    mode: "workspace-write",
    home: r.home,
    hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: r.home },
    git,
  });
  return (await collect(await spawnSandboxed({ shell, policy, stdin: "null" }))).out;
}

/** The hook that leaves `marker`, the shell that stores it as a blob, and an index naming it. */
async function plantedIndex(marker: string, others: string[]) {
  const hook = `#!/bin/sh\ntouch ${marker}\n`;
  const entries = [];
  for (const name of others) entries.push({ name, oid: await blobId(`${name}\n`) });
  entries.push({ name: HOOK, mode: 0o100755, oid: await blobId(hook) });
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  const store =
    `printf '${hook.replaceAll("\n", "\\n")}' | git hash-object -w --stdin >/dev/null && ` +
    others.map((n) => `echo ${n} | git hash-object -w --stdin >/dev/null && `).join("");
  return { store, index: base64(indexBytes(entries)) };
}

Deno.test("(a) a nested repository whose index names .git/hooks/… is disarmed", async () => {
  await withRepo(async (r) => {
    const { store, index } = await plantedIndex(r.marker, ["lib.c"]);
    const out = await sh(
      r,
      `git init -q vendor && cd vendor && echo lib.c > lib.c && ${store}` +
        `echo ${index} | base64 -d > .git/index && git ls-files && echo planted`,
    );
    assert.match(out, /planted/);
    assert.match(out, /\.git\/hooks\/pre-commit/, "git reads the planted index");
    const vendor = join(r.ws, "vendor");
    assert.equal(await exists(join(vendor, ".git-disarmed-by-penguin")), true);
    // The user discards the session's changes and commits: nothing of the model's runs.
    await git(r, vendor, ["checkout", "--", "."]);
    await git(r, vendor, ["commit", "-qam", "b"]);
    assert.equal(await exists(join(vendor, ".git", "hooks", "pre-commit")), false);
    assert.equal(await exists(r.marker), false, "the user's git ran the planted hook");
  });
});

Deno.test("(b) with a writable git, an index naming .git/hooks/… is renamed aside", async () => {
  await withRepo(async (r) => {
    takeSessionEndReport();
    const { store, index } = await plantedIndex(r.marker, ["a.txt"]);
    const out = await sh(
      r,
      `${store}echo ${index} | base64 -d > .git/index && git ls-files && echo planted`,
      "writable",
    );
    assert.match(out, /planted/);
    assert.match(out, /\.git\/hooks\/pre-commit/, "git reads the planted index");
    assert.equal(await exists(join(r.ws, ".git", "index")), false);
    assert.equal(await exists(join(r.ws, ".git", "index-disarmed-by-penguin")), true);
    const report = takeSessionEndReport();
    assert.equal(report.failed, false);
    assert.match(report.lines.join("\n"), /index-disarmed-by-penguin.*pre-commit/);
    await git(r, r.ws, ["checkout", "--", "."]);
    await git(r, r.ws, ["restore", "."]);
    await git(r, r.ws, ["commit", "-q", "--allow-empty", "-m", "b"]);
    assert.equal(await exists(join(r.ws, HOOK)), false);
    assert.equal(await exists(r.marker), false, "the user's git ran the planted hook");
    // A clean index a command writes stays.
    await git(r, r.ws, ["reset", "-q"]);
    await sh(r, "git add a.txt && echo x", "writable");
    assert.equal(await exists(join(r.ws, ".git", "index")), true);
  });
});

Deno.test("penguin run --git-writable: a planted index is renamed aside and the end says so", async () => {
  await withWorld(async (w) => {
    const marker = join(w.base, "ran-index");
    const { store, index } = await plantedIndex(marker, []);
    const { o, outputs } = await attack(
      w,
      [exec(`${store}echo ${index} | base64 -d > .git/index && git ls-files && echo planted`)],
      { extraArgs: ["--git-writable"] },
    );
    assert.match(outputs, /planted/);
    assert.match(o.stderr, /index-disarmed-by-penguin/);
    await hostRun(w.home, w.ws, "git", ["checkout", "--", "."]);
    await hostRun(w.home, w.ws, "git", ["commit", "-q", "--allow-empty", "-m", "b"]);
    assert.equal(await exists(join(w.ws, HOOK)), false);
    assert.equal(await exists(marker), false, "the user's git ran the planted hook");
  });
});
