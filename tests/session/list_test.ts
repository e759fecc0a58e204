import assert from "node:assert/strict";
import { countTurns, listSessions } from "../../lib/session/mod.ts";
import { jsonl, putTrace, scope, Script, sid, tracesOf, withRoot } from "./_support.ts";

Deno.test("a listing row carries id, times, model, workspace, turns, tokens and first prompt", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("aaaaaaaa");
    const msgs = [
      s.meta(id, { workspace: "/work/x" }),
      s.user("fix the build"),
      s.tools(),
      s.begin(),
      s.call("c1"),
      s.usage(100, 100),
      s.end(),
      s.out("c1"),
      s.begin(),
      s.say("done"),
      s.usage(230, 130),
      s.end(),
    ];
    const path = await putTrace(tracesOf(root), "2026-01-02", id, 1, jsonl(msgs));
    const [row] = await listSessions(scope(root));
    assert.ok(row);
    assert.equal(row.sessionId, id);
    assert.equal(row.created, msgs[0]!.timestamp);
    assert.equal(row.lastActivity, msgs.at(-1)!.timestamp);
    assert.equal(row.provider, "custom");
    assert.equal(row.modelId, "mock");
    assert.equal(row.workspace, "/work/x");
    assert.equal(row.turns, 2);
    assert.equal(row.tokens, 230);
    assert.equal(row.firstPrompt, "fix the build");
    assert.equal(row.files, 1);
    assert.equal(row.latestPath, path);
    assert.equal(row.source, null);
    assert.equal(row.parent, null);
  });
});

Deno.test("a multi-file session takes its head from the first file and its tail from the latest", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("bbbbbbbb");
    const t = tracesOf(root);
    await s.put(t, id, [
      s.meta(id),
      s.user("the first prompt"),
      s.begin(),
      s.say("a"),
      s.usage(100, 100),
      s.end(),
      s.compactBegin(),
      s.user("Summarize."),
      s.begin(),
      s.say("[summary]s[/summary]"),
      s.usage(150, 50),
      s.end(),
      s.compactEnd(),
    ]);
    const last = s.say("late");
    await s.put(
      t,
      id,
      [
        s.meta(id),
        s.user("[context_summary]\ns\n[/context_summary]"),
        s.user("second prompt"),
        s.begin(),
        s.usage(400, 250),
        last,
        s.end(),
      ],
      2,
      "2026-01-03",
    );
    const [row] = await listSessions(scope(root));
    assert.equal(row!.files, 2);
    assert.equal(row!.firstPrompt, "the first prompt");
    assert.equal(row!.tokens, 400);
    assert.equal(row!.turns, 2); // the compaction request does not count
    assert.ok(row!.lastActivity! > last.timestamp);
  });
});

Deno.test("listing reads only heads and tails: a file whose middle is garbage still lists", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("cccccccc");
    const head = jsonl([s.meta(id), s.user("big one"), s.begin(), s.call("c1"), s.end()]);
    // The middle is not JSON at all, but it holds text that would count as
    // completed requests if the file were scanned whole.
    const fake = '{"type":"request_end","status":"completed"} \x00\xff garbage\n';
    const middle = fake.repeat(Math.ceil((1 << 20) / fake.length));
    const tailRecs = [s.out("c1"), s.begin(), s.say("end"), s.usage(999, 99), s.end()];
    await putTrace(tracesOf(root), "2026-01-02", id, 1, head + middle + jsonl(tailRecs));
    const [row] = await listSessions(scope(root));
    assert.equal(row!.firstPrompt, "big one");
    assert.equal(row!.provider, "custom");
    assert.equal(row!.tokens, 999);
    assert.equal(row!.lastActivity, tailRecs.at(-1)!.timestamp);
    assert.equal(row!.turns, null); // the middle was never read, so turns are not counted
  });
});

Deno.test("the tail window grows until it finds a token_usage behind a large last record", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("dddddddd");
    const msgs = [
      s.meta(id),
      s.user("go"),
      s.begin(),
      s.call("c1"),
      s.usage(777, 77),
      s.end(),
      s.out("c1", "x".repeat(300_000)),
    ];
    await putTrace(tracesOf(root), "2026-01-02", id, 1, jsonl(msgs));
    const [row] = await listSessions(scope(root));
    assert.equal(row!.tokens, 777);
    assert.equal(row!.lastActivity, msgs.at(-1)!.timestamp);
  });
});

Deno.test("listing is newest first and covers every agent with allAgents", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const a = sid("11111111", 1);
    const b = sid("22222222", 2);
    const c = sid("33333333", 3);
    await s.put(tracesOf(root), a, [s.meta(a), s.user("a")]);
    await s.put(tracesOf(root), b, [s.meta(b), s.user("b")]);
    await s.put(tracesOf(root, "other"), c, [s.meta(c), s.user("c")]);
    const mine = await listSessions(scope(root));
    assert.deepEqual(mine.map((r) => r.sessionId), [b, a]);
    const all = await listSessions({ ...scope(root), allAgents: true });
    assert.deepEqual(all.map((r) => [r.sessionId, r.agentId]), [
      [c, "other"],
      [b, "default_agent"],
      [a, "default_agent"],
    ]);
  });
});

Deno.test("subagent and forked sessions report their source and parent", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const child = sid("44444444", 4);
    const fork = sid("55555555", 5);
    await s.put(tracesOf(root), child, [
      s.meta(child, { source: "subagent" }),
      s.user("do the subtask", "parent_agent"),
    ]);
    const lineage = { parent_session_id: sid("11111111"), trace_index: 1, line: 9, kind: "fork" };
    await s.put(tracesOf(root), fork, [
      s.meta(fork, { lineage } as Record<string, unknown>),
      s.user("again"),
    ]);
    const rows = await listSessions(scope(root));
    const c = rows.find((r) => r.sessionId === child)!;
    const f = rows.find((r) => r.sessionId === fork)!;
    assert.equal(c.source, "subagent");
    assert.equal(c.firstPrompt, "do the subtask");
    assert.equal(f.parent, lineage.parent_session_id);
    assert.deepEqual(f.lineage, lineage);
  });
});

Deno.test("a session whose meta is unreadable is still listed", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("66666666");
    await putTrace(tracesOf(root), "2026-01-02", id, 1, "not json\n" + jsonl([s.user("x")]));
    const [row] = await listSessions(scope(root));
    assert.equal(row!.sessionId, id);
    assert.equal(row!.provider, null);
    assert.equal(row!.created, null);
  });
});

Deno.test("countTurns counts completed requests outside compaction spans", () => {
  const s = new Script();
  const text = jsonl([
    s.begin(),
    s.end(),
    s.begin(),
    s.end("failed"),
    s.compactBegin(),
    s.begin(),
    s.end(),
    s.compactEnd(),
    s.begin(),
    s.end(),
  ]);
  assert.equal(countTurns(text), 2);
});

Deno.test("a row keeps at most 64 characters of each timestamp, however long the trace's are", async () => {
  // Attack round 25 bounded C10: a 3.9 MB timestamp on the last record of each of 100 sessions was
  // kept whole by every row, and `sessions list` reached 532 MB.
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("cccccccc");
    const long = "2026-01-02T03:04:05.000Z" + "9".repeat(100_000);
    const msgs = [
      { ...s.meta(id, { workspace: "/work/x" }), timestamp: long },
      s.user("go"),
      { ...s.say("done"), timestamp: long },
    ];
    await putTrace(tracesOf(root), "2026-01-02", id, 1, jsonl(msgs));
    const [row] = await listSessions(scope(root));
    assert.ok(row);
    assert.ok(row.created !== null && row.created.length <= 64, `created ${row.created?.length}`);
    assert.ok(
      row.lastActivity !== null && row.lastActivity.length <= 64,
      `last activity ${row.lastActivity?.length}`,
    );
    assert.ok(row.lastActivity.startsWith("2026-01-02T03:04:05"));
  });
});
