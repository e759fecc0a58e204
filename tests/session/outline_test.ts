import assert from "node:assert/strict";
import {
  buildOutline,
  cutAfterAnswer,
  cutBefore,
  formatOutline,
  locateSession,
  wholeBlockTag,
} from "../../lib/session/mod.ts";
import { fixture, jsonl, putTrace, scope, Script, sid, tracesOf, withRoot } from "./_support.ts";

async function outlineOf(root: string, target: string) {
  return await buildOutline(await locateSession({ ...scope(root), target }));
}

Deno.test("only human prompts are numbered: no sender, outside compactions, not a marker block", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("e0e0e0e0");
    await s.put(tracesOf(root), id, [
      s.meta(id),
      s.user("first"),
      s.begin(),
      s.call("c1"),
      s.end(),
      s.user("[user_steering]\nhurry\n[/user_steering]"),
      s.user("[background_task_done]\n…\n[/background_task_done]", "harness"),
      s.out("c1"),
      s.begin(),
      s.say("ok"),
      s.end(),
      s.compactBegin(),
      s.user("Summarize the transcript."),
      s.begin(),
      s.say("[summary]S[/summary]"),
      s.end(),
      s.compactEnd(),
      s.user("[context_summary]\nS\n[/context_summary]"),
      s.user("[goal]\nship it\n[/goal]"),
      s.begin(),
      s.say("done"),
      s.end(),
    ]);
    const o = await outlineOf(root, id);
    const prompts = o.items.filter((i) => i.kind === "prompt");
    assert.deepEqual(prompts.map((p) => [p.n, p.text]), [[1, "first"], [
      2,
      "[goal]\nship it\n[/goal]",
    ]]);
    assert.equal(o.prompts, 2);
    assert.equal(o.turns, 3);
    assert.deepEqual(
      o.items.filter((i) => i.kind === "user").map((i) => i.sender ?? "user"),
      ["user", "harness", "user"],
    );
    assert.equal(o.items.filter((i) => i.kind === "summary").length, 1);
  });
});

Deno.test("a handoff block written before a prompt belongs to that prompt's input", async () => {
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("e1e1e1e1");
    const recs = [
      s.meta(id),
      s.user("one"),
      s.begin(),
      s.say("a"),
      s.end(),
      s.user("[handoff_from]\nold model\n[/handoff_from]"),
      s.user("two"),
    ];
    await putTrace(tracesOf(root), "2026-01-02", id, 1, jsonl(recs));
    const o = await outlineOf(root, id);
    assert.deepEqual(cutBefore(o, 2), { file: 1, line: 5 });
    assert.deepEqual(cutAfterAnswer(o, 1), { file: 1, line: 5 });
    assert.equal(cutAfterAnswer(o, 2), null);
    assert.equal(cutBefore(o, 3), null);
  });
});

Deno.test("fixture outlines: numbered prompts, subagent messages unnumbered, files in order", async () => {
  await withRoot(async (root) => {
    const resumed = await outlineOf(root, fixture("03-resumed.jsonl"));
    assert.equal(resumed.prompts, 2);
    const child = await outlineOf(root, fixture("05-subagent-child.jsonl"));
    assert.equal(child.prompts, 0);
    assert.equal(child.items[0]!.sender, "parent_agent");
    const compacted = await outlineOf(root, fixture("04-compaction_001.jsonl"));
    assert.equal(compacted.prompts, 1);
    assert.deepEqual([...new Set(compacted.items.map((i) => i.file))], [1, 2]);
    const text = formatOutline(compacted);
    assert.match(text, /^\[1\] user: \[\[mock turns=6/m);
    assert.match(text, /--- context continues in file _002 ---/);
    const parent = await outlineOf(root, fixture("05-subagent-parent.jsonl"));
    assert.match(formatOutline(parent), /subagent session session-2026-11-29-19-26-19-8997c56f/);
  });
});

Deno.test("wholeBlockTag recognises square and legacy blocks only when whole", () => {
  assert.equal(wholeBlockTag("[user_steering]\nx\n[/user_steering]"), "user_steering");
  assert.equal(wholeBlockTag("<context_summary>x</context_summary>"), "context_summary");
  assert.equal(wholeBlockTag("[user_steering]\nx\n[/user_steering] and more"), null);
  assert.equal(wholeBlockTag("plain"), null);
});

Deno.test("an outline keeps at most 256 characters of a tool's name and a call id", async () => {
  // Attack round 25 bounded C4: names and slices kept whole records alive; `sessions show` of
  // 0.9 MB tool names reached 1592 MB.
  await withRoot(async (root) => {
    const s = new Script();
    const id = sid("e5e5e5e5");
    const name = "n".repeat(100_000);
    const callId = "c".repeat(100_000);
    await s.put(tracesOf(root), id, [
      s.meta(id),
      s.user("go"),
      s.begin(),
      s.call(callId, "completed", name),
      s.end(),
      s.out(callId),
    ]);
    const o = await outlineOf(root, id);
    const calls = o.items.filter((i) => i.name !== undefined);
    assert.ok(calls.length >= 1, JSON.stringify(o.items.map((i) => i.kind)));
    for (const item of o.items) {
      assert.ok((item.name ?? "").length <= 256, `name ${item.name?.length}`);
      assert.ok(item.timestamp.length <= 256, `timestamp ${item.timestamp.length}`);
    }
    assert.ok(calls.every((i) => i.name === "n".repeat(256)), "the output is named by its call");
  });
});
