// The record of the user's repositories left by a penguin that died without its last walk
// (_repo_trust.ts, attack pass 14 S6), read by a later penguin on a subdirectory or a parent of
// that root: an armed repo the dead session's command made is disarmed there, and the user's
// own repo the record trusts is kept. Each session runs in a process of its own with the test's
// run directory (PENGUIN_RUN_DIR), where the records live.
import assert from "node:assert/strict";
import { join } from "node:path";
import { hostGit } from "../support/host_git.ts";
import { exists, visibleTempDir } from "./_helpers.ts";
import { runScriptInRunDir as runIn } from "./_run_dir_eval.ts";

const DYING = new URL("./_dying_session.ts", import.meta.url).pathname;
const SESSION = new URL("./_trust_session.ts", import.meta.url).pathname;

async function withBase(fn: (ws: string, runDir: string) => Promise<void>): Promise<void> {
  const base = await Deno.realPath(await visibleTempDir("penguin-subroot-"));
  try {
    const ws = join(base, "ws");
    await Deno.mkdir(join(ws, "sub"), { recursive: true });
    await fn(ws, join(base, "run"));
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

/** A session on `ws` that makes `armed` and dies; then one on `next` that plans and ends. */
async function dieThenPlan(ws: string, runDir: string, armed: string, next: string) {
  await runIn(runDir, [DYING, ws, armed]);
  return await runIn(runDir, [SESSION, "plan", next]);
}

Deno.test("a session on a subdirectory disarms the repo a dead session's command made there", async () => {
  await withBase(async (ws, runDir) => {
    const seen = await dieThenPlan(ws, runDir, "sub/R", join(ws, "sub"));
    assert.ok(await exists(join(ws, "sub/R/.git-disarmed-by-penguin")), seen);
    assert.equal(await exists(join(ws, "sub/R/.git")), false);
  });
});

Deno.test("a session on a parent disarms the repo a dead session's command made below it", async () => {
  await withBase(async (ws, runDir) => {
    const seen = await dieThenPlan(join(ws, "sub"), runDir, "R", ws);
    assert.ok(await exists(join(ws, "sub/R/.git-disarmed-by-penguin")), seen);
    assert.equal(await exists(join(ws, "sub/R/.git")), false);
  });
});

Deno.test("the user's own armed repo the dead session's record trusts is kept", async () => {
  await withBase(async (ws, runDir) => {
    const mine = join(ws, "sub/mine");
    await Deno.mkdir(mine);
    await hostGit(ws, mine, ["init", "-q"]);
    await Deno.writeTextFile(join(mine, ".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
    const seen = await dieThenPlan(ws, runDir, "sub/R", join(ws, "sub"));
    assert.match(seen, /sub\/mine\/\.git/);
    assert.ok(await exists(join(mine, ".git/hooks/pre-commit")));
    assert.ok(await exists(join(ws, "sub/R/.git-disarmed-by-penguin")), seen);
  });
});

Deno.test("a record of an unrelated root (a sibling) changes nothing", async () => {
  await withBase(async (ws, runDir) => {
    const other = join(ws, "other");
    await Deno.mkdir(other);
    await runIn(runDir, [DYING, other, "R"]);
    // The user's armed repo in sub, seen first by this session alone there: theirs.
    await Deno.mkdir(join(ws, "sub/R"));
    await hostGit(ws, join(ws, "sub/R"), ["init", "-q"]);
    await hostGit(ws, join(ws, "sub/R"), ["config", "core.fsmonitor", "true"]);
    const seen = await runIn(runDir, [SESSION, "plan", join(ws, "sub")]);
    assert.match(seen, /sub\/R\/\.git/);
    assert.ok(await exists(join(ws, "sub/R/.git")), seen);
  });
});

Deno.test("a session on the dead session's armed repo itself disarms its own .git", async () => {
  // Attack pass 15 N6: the root's own `.git` is never walked, so only the parent's record speaks.
  await withBase(async (ws, runDir) => {
    const seen = await dieThenPlan(ws, runDir, "R", join(ws, "R"));
    assert.ok(await exists(join(ws, "R/.git-disarmed-by-penguin")), seen);
    assert.equal(await exists(join(ws, "R/.git")), false);
  });
});

Deno.test("a session on the user's armed repo the dead session's record trusts keeps its .git", async () => {
  await withBase(async (ws, runDir) => {
    const mine = join(ws, "mine");
    await Deno.mkdir(mine);
    await hostGit(ws, mine, ["init", "-q"]);
    await hostGit(ws, mine, ["config", "core.fsmonitor", "true"]);
    const seen = await dieThenPlan(ws, runDir, "sub/R", mine);
    assert.ok(await exists(join(mine, ".git/config")), seen);
    assert.equal(await exists(join(mine, ".git-disarmed-by-penguin")), false);
  });
});

Deno.test("a session inside the dead session's armed repo disarms the repo enclosing its root", async () => {
  // Attack pass final16-concgit #24: no walk of ws/R/sub looks at R/.git, which encloses it.
  await withBase(async (ws, runDir) => {
    await runIn(runDir, [DYING, ws, "R"]);
    await Deno.mkdir(join(ws, "R/sub/deeper"), { recursive: true });
    const seen = await runIn(runDir, [SESSION, "plan", join(ws, "R/sub/deeper")]);
    assert.ok(await exists(join(ws, "R/.git-disarmed-by-penguin")), seen);
    assert.equal(await exists(join(ws, "R/.git")), false);
  });
});

Deno.test("a session inside the user's armed repo the dead session's record trusts keeps it", async () => {
  await withBase(async (ws, runDir) => {
    const mine = join(ws, "mine");
    await Deno.mkdir(join(mine, "sub"), { recursive: true });
    await hostGit(ws, mine, ["init", "-q"]);
    await hostGit(ws, mine, ["config", "core.fsmonitor", "true"]);
    await runIn(runDir, [DYING, ws, "R"]);
    const seen = await runIn(runDir, [SESSION, "plan", join(mine, "sub")]);
    assert.ok(await exists(join(mine, ".git/config")), seen);
    assert.equal(await exists(join(mine, ".git-disarmed-by-penguin")), false);
  });
});

for (const where of ["R/sub", "R"]) {
  Deno.test(`a session on ${where} disarms a dead session's git directory that is its own work tree`, async () => {
    // Attack round 17 concgit #29, #30: R is no `.git` holder but a git directory itself
    // (`core.worktree=.`): git finds it in R and below, and its fsmonitor ran at `git status`.
    await withBase(async (ws, runDir) => {
      await runIn(runDir, [DYING, ws, "R", "gitdir"]);
      await Deno.mkdir(join(ws, "R/sub"), { recursive: true });
      const seen = await runIn(runDir, [SESSION, "plan", join(ws, where)]);
      assert.ok(await exists(join(ws, "R/HEAD-disarmed-by-penguin")), seen);
      assert.equal(await exists(join(ws, "R/HEAD")), false);
    });
  });
}
