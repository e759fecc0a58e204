// The nested-repository walk (git_nested.ts) against a tree another command changes while it
// runs (attack round 13, W01/W02/W04/W05): a directory renamed between its parent's listing and
// its own, or a subtree moved from a place not yet listed into one already listed, must not hide
// a repository in silence. The concurrent command is played by the walk's test seam, which runs
// after each group of directories is listed, so each rename lands at a known point of the walk.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, resolvePlan } from "../../lib/sandbox/mod.ts";
import { disarmNewRepos, findNestedRepos, walkSeam } from "../../lib/sandbox/git_nested.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { hostGit } from "../support/host_git.ts";
import { exists, visibleTempDir } from "./_helpers.ts";

/** A temp workspace with `repo` made by git (armed with an fsmonitor when `armed`). */
async function withTree(
  dirs: string[],
  repo: string,
  armed: boolean,
  fn: (ws: string) => Promise<void>,
): Promise<void> {
  const base = await visibleTempDir("penguin-walk-race-");
  try {
    const ws = join(base, "ws");
    for (const d of dirs) await Deno.mkdir(join(ws, d), { recursive: true });
    await Deno.mkdir(join(ws, repo), { recursive: true });
    await hostGit(base, join(ws, repo), ["init", "-q"]);
    if (armed) {
      await hostGit(base, join(ws, repo), ["config", "core.fsmonitor", "touch /tmp/walk-race"]);
    }
    await fn(ws);
  } finally {
    walkSeam.afterLevel = () => {};
    await Deno.remove(base, { recursive: true });
  }
}

Deno.test("an ancestor renamed between two levels of the end walk does not hide an armed repo", async () => {
  await withTree([], "zzz/R", true, async (ws) => {
    let calls = 0;
    walkSeam.afterLevel = async (dirs) => {
      calls++;
      // Right after the root's listing named zzz: away, and back once the walk went on.
      if (calls === 1 && dirs.includes(ws)) await Deno.rename(join(ws, "zzz"), join(ws, "aaa"));
      else if (await exists(join(ws, "aaa"))) await Deno.rename(join(ws, "aaa"), join(ws, "zzz"));
    };
    const done = await disarmNewRepos(ws, [], [ws]);
    walkSeam.afterLevel = () => {};
    assert.ok(await exists(join(ws, "zzz/R/.git-disarmed-by-penguin")), JSON.stringify(done));
    assert.equal(await exists(join(ws, "zzz/R/.git")), false);
  });
});

Deno.test("a repo moved from a directory not yet listed into one already listed is found", async () => {
  await withTree(["a"], "b/x/R", true, async (ws) => {
    let moved = false;
    walkSeam.afterLevel = async (dirs) => {
      // a and b are listed; b/x is not yet: R goes into a, which was listed without it.
      if (!moved && dirs.includes(join(ws, "b"))) {
        moved = true;
        await Deno.rename(join(ws, "b/x/R"), join(ws, "a/R"));
      }
    };
    const found = await findNestedRepos(ws);
    assert.ok(moved);
    assert.equal(found.consistent, true);
    assert.deepEqual(found.repos.map((r) => r.entry), [join(ws, "a/R/.git")]);
    // The end walk disarms it there.
    await Deno.rename(join(ws, "a/R"), join(ws, "b/x/R"));
    moved = false;
    await disarmNewRepos(ws, [], [ws]);
    walkSeam.afterLevel = () => {};
    assert.ok(await exists(join(ws, "a/R/.git-disarmed-by-penguin")));
  });
});

/** Flip `ws/zzz` and `ws/aaa` right after every listing of the root. */
function flipAfterRoot(ws: string): void {
  walkSeam.afterLevel = async (dirs) => {
    if (!dirs.includes(ws)) return;
    if (await exists(join(ws, "zzz"))) await Deno.rename(join(ws, "zzz"), join(ws, "aaa"));
    else await Deno.rename(join(ws, "aaa"), join(ws, "zzz"));
  };
}

async function settle(ws: string): Promise<void> {
  walkSeam.afterLevel = () => {};
  if (await exists(join(ws, "aaa"))) await Deno.rename(join(ws, "aaa"), join(ws, "zzz"));
}

Deno.test("an end walk that never sees the tree settled stops every command until one does", async () => {
  await withTree([], "zzz/R", true, async (ws) => {
    flipAfterRoot(ws);
    const found = await findNestedRepos(ws);
    assert.equal(found.consistent, false);
    assert.deepEqual(found.repos, []);
    await disarmNewRepos(ws, [], [ws]);
    const policy = createPolicy({ workspace: ws, home: "", hostEnv: {} });
    await assert.rejects(resolvePlan(policy, ws), (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.match(
        err.message,
        new RegExp(`another command is changing the directories of "${ws}"`),
      );
      assert.match(err.message, /wait for that command to end/);
      return true;
    });
    // Once the other command stopped, the next plan walks again and disarms what it finds.
    await settle(ws);
    assert.ok((await resolvePlan(policy, ws)).roots.includes(ws));
    assert.ok(await exists(join(ws, "zzz/R/.git-disarmed-by-penguin")));
  });
});

Deno.test("the plan's walk guards the user's repo whose ancestor moves, or refuses the command", async () => {
  await withTree([], "vendor/a/lib", false, async (ws) => {
    const policy = createPolicy({ workspace: ws, mode: "workspace-write", home: "", hostEnv: {} });
    let calls = 0;
    walkSeam.afterLevel = async (dirs) => {
      calls++;
      if (calls === 1 && dirs.includes(ws)) await Deno.rename(join(ws, "vendor"), join(ws, "vx"));
      else if (await exists(join(ws, "vx"))) await Deno.rename(join(ws, "vx"), join(ws, "vendor"));
    };
    const plan = await resolvePlan(policy, ws);
    walkSeam.afterLevel = () => {};
    assert.deepEqual(plan.gitRepos?.map((m) => m.entry), [join(ws, "vendor/a/lib/.git")]);
    // A rename after every listing of the root: no consistent view, no command.
    walkSeam.afterLevel = async (dirs) => {
      if (!dirs.includes(ws)) return;
      if (await exists(join(ws, "vendor"))) await Deno.rename(join(ws, "vendor"), join(ws, "vx"));
      else await Deno.rename(join(ws, "vx"), join(ws, "vendor"));
    };
    await assert.rejects(resolvePlan(policy, ws), (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.match(err.message, /kept changing while penguin walked them/);
      assert.match(err.message, /--sandbox read-only/);
      return true;
    });
  });
});
