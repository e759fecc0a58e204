import assert from "node:assert/strict";
import { join } from "node:path";
import { PenguinError } from "../../lib/protocol/mod.ts";
import { latestSessionId, locateSession } from "../../lib/session/mod.ts";
import { fixture, jsonl, putTrace, scope, Script, sid, tracesOf, withRoot } from "./_support.ts";

function simple(s: Script, id: string, extra = {}) {
  return jsonl([s.meta(id, extra), s.user("hi"), s.begin(), s.say("hello"), s.end()]);
}

Deno.test("locateSession by id finds every shard across date dirs; the highest index is the context", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("aaaaaaaa");
    const t = tracesOf(root);
    await putTrace(t, "2026-01-02", id, 1, simple(s, id));
    const second = await putTrace(t, "2026-01-03", id, 2, simple(s, id));
    await putTrace(t, "2026-01-02", sid("bbbbbbbb"), 1, simple(s, sid("bbbbbbbb")));
    const found = await locateSession({ ...scope(root), target: id });
    assert.equal(found.sessionId, id);
    assert.deepEqual(found.files.map((f) => f.index), [1, 2]);
    assert.equal(found.latest.path, second);
    assert.equal(found.latest.dateDir, "2026-01-03");
    assert.equal(found.tracesDir, t);
    assert.equal(found.agentId, "default_agent");
  });
});

Deno.test("locateSession by the path of any shard finds the whole session", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("aaaaaaaa");
    const t = tracesOf(root);
    const first = await putTrace(t, "2026-01-02", id, 1, simple(s, id));
    const second = await putTrace(t, "2026-01-02", id, 2, simple(s, id));
    const found = await locateSession({ ...scope(root), target: first });
    assert.equal(found.sessionId, id);
    assert.equal(found.latest.path, second);
    assert.equal(found.files.length, 2);
  });
});

Deno.test("locateSession by the path of a loose file takes the id from its session_meta", async () => {
  await withRoot(async (root) => {
    const found = await locateSession({ ...scope(root), target: fixture("01-simple.jsonl") });
    assert.equal(found.tracesDir, null);
    assert.equal(found.sessionId, "session-2026-11-29-19-26-10-13a3580b");
    assert.equal(found.files.length, 1);
  });
});

Deno.test("locateSession by the path of loose _NNN siblings groups them by stem", async () => {
  await withRoot(async (root) => {
    const found = await locateSession({
      ...scope(root),
      target: fixture("04-compaction_001.jsonl"),
    });
    assert.deepEqual(found.files.map((f) => f.index), [1, 2]);
    assert.equal(found.latest.path, fixture("04-compaction_002.jsonl"));
  });
});

Deno.test("a missing session names what was searched", async () => {
  await withRoot(async (root) => {
    const id = sid("cccccccc");
    await assert.rejects(
      locateSession({ ...scope(root), target: id }),
      (e: unknown) =>
        e instanceof PenguinError && e.kind === "not_found" &&
        e.message === `Session does not exist: ${id} (searched ${tracesOf(root)})`,
    );
  });
});

Deno.test("a session of another agent is named in the error, and found with allAgents", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("dddddddd");
    await putTrace(tracesOf(root, "helper"), "2026-01-02", id, 1, simple(s, id));
    await assert.rejects(
      locateSession({ ...scope(root), target: id }),
      /Session does not exist: .* it belongs to agent "helper": pass --agent-id helper/,
    );
    const found = await locateSession({ ...scope(root), target: id, allAgents: true });
    assert.equal(found.agentId, "helper");
  });
});

Deno.test("an id unfit for a file name is a usage error", async () => {
  await withRoot(async (root) => {
    await assert.rejects(
      locateSession({ ...scope(root), target: "bad id!" }),
      (e: unknown) => e instanceof PenguinError && e.kind === "usage",
    );
  });
});

Deno.test("latest: date dirs and files descending; meta-only files are skipped", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const t = tracesOf(root);
    const old = sid("11111111", 1, 2);
    const newer = sid("22222222", 2, 3);
    const metaOnly = sid("33333333", 3, 3);
    await putTrace(t, "2026-01-02", old, 1, simple(s, old));
    await putTrace(t, "2026-01-03", newer, 1, simple(s, newer));
    await s.put(t, metaOnly, [s.meta(metaOnly)], 1, "2026-01-03");
    assert.equal(await latestSessionId(t), newer);
    const found = await locateSession({ ...scope(root), target: "latest" });
    assert.equal(found.sessionId, newer);
  });
});

Deno.test("latest skips subagent sessions unless asked to include them", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const t = tracesOf(root);
    const parent = sid("11111111", 1);
    const child = sid("22222222", 2);
    await putTrace(t, "2026-01-02", parent, 1, simple(s, parent));
    await putTrace(t, "2026-01-02", child, 1, simple(s, child, { source: "subagent" }));
    assert.equal(await latestSessionId(t), parent);
    assert.equal(await latestSessionId(t, { includeSubagents: true }), child);
  });
});

Deno.test("latest with no session with records is a not_found error", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const t = tracesOf(root);
    await s.put(t, sid("11111111"), [s.meta(sid("11111111"))]);
    await assert.rejects(
      locateSession({ ...scope(root), target: "latest" }),
      (e: unknown) =>
        e instanceof PenguinError && e.kind === "not_found" && e.message.includes(join(t)),
    );
  });
});
