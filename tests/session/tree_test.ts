import assert from "node:assert/strict";
import {
  cloneSession,
  forkSession,
  formatTree,
  importTraces,
  sessionTree,
  type TreeNode,
} from "../../lib/session/mod.ts";
import { fixture, scope, Script, sid, tracesOf, withRoot } from "./_support.ts";

/** The scope of `root`, importing into `root` as the workspace named with --workspace. */
const into = (root: string) => ({
  ...scope(root),
  workspace: { path: root, from: "--workspace" as const },
});

function shape(n: TreeNode): unknown {
  return { id: n.sessionId, rel: n.relation, children: n.children.map(shape) };
}

Deno.test("subagent children hang under the parent that spawned them (fixture pair)", async () => {
  await withRoot(async (root) => {
    await importTraces(
      [fixture("05-subagent-parent.jsonl"), fixture("05-subagent-child.jsonl")],
      into(root),
    );
    const forest = await sessionTree(scope(root));
    assert.deepEqual(forest.map(shape), [{
      id: "session-2026-11-29-19-26-19-5803d24a",
      rel: "root",
      children: [{ id: "session-2026-11-29-19-26-19-8997c56f", rel: "subagent", children: [] }],
    }]);
    assert.equal(forest[0]!.children[0]!.summary?.source, "subagent");
  });
});

Deno.test("forks and clones hang under their source; copied subagent events do not move children", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const t = tracesOf(root);
    const parent = sid("b0000001", 1);
    const child = sid("b0000002", 2);
    const loner = sid("b0000003", 3);
    await s.put(t, parent, [
      s.meta(parent),
      ...s.spawn(),
      s.subagent(child),
      s.out("c1"),
      s.begin(),
      s.say("done"),
      s.end(),
    ]);
    await s.put(t, child, [s.meta(child, { source: "subagent" }), s.user("sub", "parent_agent")]);
    await s.put(t, loner, [s.meta(loner), s.user("alone")]);
    const fork = await forkSession({ ...scope(root), session: parent, at: 1 });
    const clone = await cloneSession({ ...scope(root), session: fork.sessionId });
    const forest = await sessionTree(scope(root));
    assert.deepEqual(forest.map(shape), [
      {
        id: parent,
        rel: "root",
        children: [
          { id: child, rel: "subagent", children: [] },
          {
            id: fork.sessionId,
            rel: "fork",
            children: [{ id: clone.sessionId, rel: "clone", children: [] }],
          },
        ],
      },
      { id: loner, rel: "root", children: [] },
    ]);
    const only = await sessionTree({ ...scope(root), session: clone.sessionId });
    assert.deepEqual(only.map((n) => n.sessionId), [parent]);
    const text = formatTree(only);
    assert.match(text, new RegExp(`└─ \\[clone\\] ${clone.sessionId}`));
    assert.match(text, new RegExp(`├─ \\[subagent\\] ${child}`));
  });
});

Deno.test("a fork whose source was deleted is a root under a placeholder", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("b0000009", 9);
    const lineage = { parent_session_id: sid("0ddba110"), trace_index: 1, line: 3, kind: "fork" };
    await s.put(tracesOf(root), id, [
      s.meta(id, { lineage } as Record<string, unknown>),
      s.user("x"),
    ]);
    const forest = await sessionTree(scope(root));
    assert.equal(forest.length, 1);
    assert.equal(forest[0]!.sessionId, sid("0ddba110"));
    assert.equal(forest[0]!.summary, null);
    assert.equal(forest[0]!.children[0]!.relation, "fork");
  });
});

Deno.test("tree of an unknown session is a not_found error", async () => {
  await withRoot(async (root) => {
    await assert.rejects(
      sessionTree({ ...scope(root), session: sid("00000000") }),
      /Session does not exist/,
    );
  });
});

Deno.test("a subagent child run as another agent is found under that agent's traces", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const parent = sid("c0000001", 1);
    const child = sid("c0000002", 2);
    await s.put(tracesOf(root), parent, [
      s.meta(parent),
      ...s.spawn(),
      s.subagent(child),
      s.out("c1"),
    ]);
    await s.put(tracesOf(root, "helper_agent"), child, [
      s.meta(child),
      s.user("child work"),
      s.begin(),
      s.say("done"),
      s.end(),
    ]);
    const [tree] = await sessionTree(scope(root));
    assert.equal(tree!.sessionId, parent);
    const node = tree!.children[0]!;
    assert.equal(node.sessionId, child);
    assert.equal(node.relation, "subagent");
    assert.ok(node.summary, "the child's listing row comes from the other agent's traces");
    assert.equal(node.summary!.agentId, "helper_agent");
  });
});
