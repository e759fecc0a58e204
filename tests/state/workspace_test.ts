import assert from "node:assert/strict";
import { join } from "node:path";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { TEMP_WORKSPACE_ID_PATTERN } from "../../lib/state/ids.ts";
import {
  createTempWorkspace,
  isTempWorkspace,
  resolveWorkspace,
} from "../../lib/state/workspace.ts";

Deno.test("workspaces: explicit ones must exist as directories; temp ones are created and recognised", async () => {
  const root = await Deno.makeTempDir({ prefix: "penguin-ws-" });
  try {
    const ref = { root, projectId: "p", agentId: "a" };
    await assert.rejects(resolveWorkspace(join(root, "missing")), (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.equal(err.message, `Workspace does not exist: ${join(root, "missing")}`);
      return true;
    });
    await Deno.writeTextFile(join(root, "file"), "");
    await assert.rejects(resolveWorkspace(join(root, "file")), /Workspace is not a directory/);
    assert.equal(await resolveWorkspace(root), root);

    const a = await createTempWorkspace(ref);
    const b = await createTempWorkspace(ref);
    assert.notEqual(a, b);
    assert.equal(a, join(root, "p", "agents", "a", "workspaces", a.split("/").at(-1)!));
    assert.match(a.split("/").at(-1)!, TEMP_WORKSPACE_ID_PATTERN);
    assert.ok((await Deno.stat(a)).isDirectory);
    assert.equal(await isTempWorkspace(a, ref), true);
    await Deno.mkdir(join(a, "sub"));
    assert.equal(await isTempWorkspace(join(a, "sub"), ref), true);
    assert.equal(await isTempWorkspace(join(root, "p", "agents", "a", "workspaces"), ref), false);
    assert.equal(await isTempWorkspace(root, ref), false);
    assert.equal(await isTempWorkspace(join(root, "nope"), ref), false);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
