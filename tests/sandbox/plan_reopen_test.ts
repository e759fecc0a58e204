// Attack round 19 imports B2: a writable root inside a path the plan keeps read-only was bound
// writable over it (mounts go on by depth): `"writable_roots": [".git/hooks"]` let commands write
// the user's hooks. A plan refuses such a root, whoever named it.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, resolvePlan } from "../../lib/sandbox/mod.ts";
import { withWorkspace } from "../support/roots.ts";

Deno.test("a writable root inside the read-only .git/hooks is refused, naming both", async () => {
  await withWorkspace(async (ws) => {
    await Deno.mkdir(join(ws, ".git", "hooks"), { recursive: true });
    await Deno.writeTextFile(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
    await Deno.mkdir(join(ws, "lib"));
    const plan = (extra: string) =>
      resolvePlan(
        createPolicy({ workspace: ws, home: "", hostEnv: {}, extraWritable: [extra] }),
        ws,
      );
    await assert.rejects(
      plan(join(ws, ".git", "hooks")),
      /the writable root ".*\/\.git\/hooks" lies in ".*\/\.git(\/hooks)?", which penguin keeps read-only/,
    );
    // One elsewhere in the workspace is taken.
    assert.ok((await plan(join(ws, "lib"))).roots.includes(join(ws, "lib")));
  });
});
