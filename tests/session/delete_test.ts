import assert from "node:assert/strict";
import { join } from "node:path";
import { PenguinError } from "../../lib/protocol/mod.ts";
import { childCount, deleteSession, forkSession, planDelete } from "../../lib/session/mod.ts";
import { acquireSessionLock, releaseSessionLock } from "../../lib/trace/mod.ts";
import { jsonl, scope, Script, sid, tracesOf, treeDigest, withRoot } from "./_support.ts";

async function family(root: string) {
  const s = new Script();
  const t = tracesOf(root);
  const parent = sid("a0000001", 1);
  const child = sid("a0000002", 2);
  const grandchild = sid("a0000003", 3);
  const other = sid("a0000004", 4);
  const p1 = await s.put(t, parent, [
    s.meta(parent),
    ...s.spawn(),
  ]);
  const c1 = await s.put(t, child, [
    s.meta(child, { source: "subagent" }),
    s.user("sub", "parent_agent"),
    s.begin(),
    s.call("x"),
    s.end(),
  ]);
  const p1b = await Deno.readTextFile(p1);
  await Deno.writeTextFile(p1, p1b + jsonl([s.subagent(child), s.out("c1", "child done")]));
  const g1 = await s.put(t, grandchild, [
    s.meta(grandchild, { source: "subagent" }),
    s.user("subsub", "parent_agent"),
  ]);
  await Deno.writeTextFile(
    c1,
    (await Deno.readTextFile(c1)) + jsonl([s.subagent(grandchild), s.subagent(sid("deadbeef", 9))]),
  );
  const p2 = await s.put(t, parent, [s.meta(parent), s.user("more")], 2, "2026-01-03");
  const o1 = await s.put(t, other, [s.meta(other), s.user("unrelated")]);
  const scratch = join(root, "default_project", "agents", "default_agent", "scratchpad");
  for (const id of [parent, child]) {
    await Deno.mkdir(join(scratch, id, "truncated-tool-output"), { recursive: true });
    await Deno.writeTextFile(join(scratch, id, "upload-1.png"), "png");
  }
  return { parent, child, grandchild, other, files: { p1, p2, c1, g1, o1 }, scratch };
}

async function gone(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return false;
  } catch (err) {
    return err instanceof Deno.errors.NotFound;
  }
}

Deno.test("delete removes the trace files, the scratchpad and child sessions at any depth", async () => {
  await withRoot(async (root) => {
    const f = await family(root);
    const plan = await planDelete({ ...scope(root), session: f.parent });
    assert.equal(childCount(plan), 2);
    assert.deepEqual(plan.children[0]!.missingChildren, [sid("deadbeef", 9)]);
    const done = await deleteSession({ ...scope(root), session: f.parent });
    assert.equal(done.sessionId, f.parent);
    for (const p of [f.files.p1, f.files.p2, f.files.c1, f.files.g1]) assert.ok(await gone(p), p);
    assert.ok(await gone(join(f.scratch, f.parent)));
    assert.ok(await gone(join(f.scratch, f.child)));
    assert.ok(!(await gone(f.files.o1)));
    assert.ok(await gone(join(tracesOf(root), "2026-01-03"))); // emptied date dir removed
  });
});

Deno.test("planning a delete changes nothing", async () => {
  await withRoot(async (root) => {
    const f = await family(root);
    const before = await treeDigest(root);
    await planDelete({ ...scope(root), session: f.parent });
    assert.deepEqual(await treeDigest(root), before);
  });
});

Deno.test("a session locked by a live process is refused and nothing is deleted", async () => {
  await withRoot(async (root) => {
    const f = await family(root);
    const before = await treeDigest(root);
    const lock = await acquireSessionLock(tracesOf(root), f.parent);
    try {
      await assert.rejects(
        deleteSession({ ...scope(root), session: f.parent }),
        (e: unknown) =>
          e instanceof PenguinError && e.kind === "locked" &&
          e.message.startsWith(
            `Cannot delete session ${f.parent}: it is locked by process ${Deno.pid}`,
          ),
      );
    } finally {
      await releaseSessionLock(lock);
    }
    assert.deepEqual(await treeDigest(root), before);
  });
});

Deno.test("a locked child session refuses the whole delete", async () => {
  await withRoot(async (root) => {
    const f = await family(root);
    const before = await treeDigest(root);
    const lock = await acquireSessionLock(tracesOf(root), f.grandchild);
    try {
      await assert.rejects(
        deleteSession({ ...scope(root), session: f.parent }),
        new RegExp(`its child session ${f.grandchild} is in use`),
      );
    } finally {
      await releaseSessionLock(lock);
    }
    assert.deepEqual(await treeDigest(root), before);
  });
});

Deno.test("deleting a fork leaves the children it copied from its source alone", async () => {
  await withRoot(async (root) => {
    const f = await family(root);
    const fork = await forkSession({ ...scope(root), session: f.parent, at: 1 });
    const plan = await planDelete({ ...scope(root), session: fork.sessionId });
    assert.equal(childCount(plan), 0);
    await deleteSession({ ...scope(root), session: fork.sessionId });
    assert.ok(await gone(fork.path));
    assert.ok(!(await gone(f.files.c1)));
  });
});

Deno.test('delete refuses "latest"', async () => {
  await withRoot(async (root) => {
    await assert.rejects(deleteSession({ ...scope(root), session: "latest" }), /not "latest"/);
  });
});
