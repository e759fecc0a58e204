// Issue 26 (review2 finding 5): a disarm that fails is not ignored. Root (whom the tests run as)
// passes every permission check, so no real rename failure is at hand: the rename is made to fail
// through the module's test seam. The next plan then refuses every command, naming the repository
// and what to do, until its `.git` is gone.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, resolvePlan } from "../../lib/sandbox/mod.ts";
import { disarmNewRepos, disarmRename } from "../../lib/sandbox/git_nested.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { visibleTempDir } from "./_helpers.ts";

/** A workspace in `base` holding `p`, a repository with a hook, and a policy confining to it. */
async function armedRepoIn(base: string) {
  const ws = join(base, "ws");
  const p = join(ws, "p");
  await Deno.mkdir(join(p, ".git", "hooks"), { recursive: true });
  await Deno.writeTextFile(join(p, ".git", "HEAD"), "ref: refs/heads/main\n");
  await Deno.writeTextFile(join(p, ".git", "hooks", "pre-commit"), "#!/bin/sh\necho model\n");
  return { ws, p, policy: createPolicy({ workspace: ws, home: "", hostEnv: {} }) };
}

Deno.test("an armed repository penguin could not disarm stops every later command", async () => {
  const base = await visibleTempDir("penguin-disarm-failed-");
  const real = disarmRename.rename;
  try {
    const { ws, p, policy } = await armedRepoIn(base);
    disarmRename.rename = () => Promise.reject(new Deno.errors.PermissionDenied("rename refused"));
    const [d] = await disarmNewRepos(ws, [], [ws]);
    assert.equal(d?.to, "");
    disarmRename.rename = real;
    await assert.rejects(resolvePlan(policy, ws), (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.match(err.message, new RegExp(`"${p}"`));
      assert.match(err.message, /could not disarm/);
      assert.match(err.message, /remove .*\.git/);
      return true;
    });
    // Once the user removed its .git, commands run again.
    await Deno.remove(join(p, ".git"), { recursive: true });
    assert.ok((await resolvePlan(policy, ws)).roots.includes(ws));
  } finally {
    disarmRename.rename = real;
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("an armed repository renamed aside by another walk first is not taken for a failed disarm", async () => {
  // CI (redteam gitconfig): a second disarm of the same `.git` found it renamed already, took the
  // NotFound for a failure and refused the next command.
  const base = await visibleTempDir("penguin-disarm-raced-");
  const real = disarmRename.rename;
  try {
    const { ws, p, policy } = await armedRepoIn(base);
    // Another walk renames it first; this one's rename then finds nothing to rename.
    disarmRename.rename = async (from, to) => {
      await real(from, `${to}-other`);
      throw new Deno.errors.NotFound(`rename '${from}'`);
    };
    const [d] = await disarmNewRepos(ws, [], [ws]);
    disarmRename.rename = real;
    assert.notEqual(d?.to, "", "not a failed disarm");
    await assert.rejects(Deno.lstat(join(p, ".git")), Deno.errors.NotFound);
    assert.ok((await resolvePlan(policy, ws)).roots.includes(ws), "the next command runs");
  } finally {
    disarmRename.rename = real;
    await Deno.remove(base, { recursive: true });
  }
});
