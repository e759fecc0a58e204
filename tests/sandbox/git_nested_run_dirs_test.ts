// Penguin processes started with different run directories (`PENGUIN_RUN_DIR`) on one workspace
// share its record of the user's repositories (attack pass final16-concgit #22): each reads the
// records of every run directory noted in the default one, so a session in another run directory
// does not take a repository the first one's command made for the user's. Each session runs in a
// process of its own, with its own run directory.
import assert from "node:assert/strict";
import { join } from "node:path";
import { exists, visibleTempDir } from "./_helpers.ts";
import { runScriptInRunDir as runIn } from "./_run_dir_eval.ts";

const DYING = new URL("./_dying_session.ts", import.meta.url).pathname;
const SESSION = new URL("./_trust_session.ts", import.meta.url).pathname;

Deno.test("a session in another run directory disarms the repo a dead session's command made", async () => {
  const base = await Deno.realPath(await visibleTempDir("penguin-rundirs-"));
  try {
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    // A (run directory a) plans, its command makes an armed R, and A dies: its record stays.
    await runIn(join(base, "a"), [DYING, ws, "R"]);
    // B (run directory b) plans on the same workspace: A's record does not trust R.
    const seen = await runIn(join(base, "b"), [SESSION, "plan", ws]);
    assert.ok(await exists(join(ws, "R/.git-disarmed-by-penguin")), seen);
    assert.equal(await exists(join(ws, "R/.git")), false, seen);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
