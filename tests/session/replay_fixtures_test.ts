// The replay over real PenguinHarness traces. Expected values are derived
// from the records themselves (counts of completed requests, the last
// token_usage, the summary the harness actually wrote into the next file).
import assert from "node:assert/strict";
import type { OmniMessage } from "../../lib/protocol/mod.ts";
import { isComplete } from "../../lib/protocol/mod.ts";
import { resumeTrace } from "../../lib/session/mod.ts";
import { fixture, records } from "./_support.ts";

function completed(msgs: OmniMessage[]): number {
  return msgs.filter((m) =>
    m.type === "event_msg" && m.payload.type === "request_end" && m.payload.status === "completed"
  ).length;
}

function lastUsage(msgs: OmniMessage[]) {
  const u = msgs.filter((m) => m.type === "event_msg" && m.payload.type === "token_usage").at(-1);
  return u?.type === "event_msg" && u.payload.type === "token_usage" ? u.payload : null;
}

function models(msgs: OmniMessage[]): OmniMessage[] {
  return msgs.filter((m) => m.type === "model_msg" && isComplete(m.payload));
}

for (const name of ["01-simple.jsonl", "02-tool-calls.jsonl", "03-resumed.jsonl"]) {
  Deno.test(`fixture ${name}: a cleanly finished trace replays every model message as history`, async () => {
    const msgs = await records(fixture(name));
    const r = resumeTrace(msgs);
    assert.deepEqual(r.history, models(msgs));
    assert.deepEqual(r.carryOver, []);
    assert.equal(r.contextClosed, false);
    assert.equal(r.sessionTurns, completed(msgs));
    assert.deepEqual(r.sessionTokens, lastUsage(msgs)!.session);
    assert.equal(r.lastRequestTotal, lastUsage(msgs)!.request.total);
    assert.equal(r.meta, msgs[0]);
    assert.deepEqual(r.renderMessages, models(msgs));
    assert.equal(r.danglingCompaction, undefined);
  });
}

Deno.test("fixture 03-resumed: both tasks' prompts are in history, in order", async () => {
  const r = resumeTrace(await records(fixture("03-resumed.jsonl")));
  const prompts = r.history.filter((m) => m.payload.type === "text" && m.payload.role === "user");
  assert.equal(prompts.length, 2);
  assert.match(
    String(prompts[1]!.payload.type === "text" && prompts[1]!.payload.text),
    /fx-resume-b/,
  );
});

Deno.test("fixture 04-compaction_001: the closed context's summary is exactly what _002 starts with", async () => {
  const first = resumeTrace(await records(fixture("04-compaction_001.jsonl")));
  const second = await records(fixture("04-compaction_002.jsonl"));
  const written = second.find((m) => m.type === "model_msg" && m.payload.type === "text");
  assert.equal(first.contextClosed, true);
  assert.deepEqual(first.history, []);
  assert.equal(first.sessionTurns, 0);
  assert.equal(first.lastRequestTotal, 0);
  assert.equal(
    first.pendingSummary?.payload.text,
    written?.type === "model_msg" && written.payload.type === "text" ? written.payload.text : null,
  );
});

Deno.test("fixture 04-compaction_002: the new context starts from the summary", async () => {
  const msgs = await records(fixture("04-compaction_002.jsonl"));
  const r = resumeTrace(msgs);
  assert.equal(r.contextClosed, false);
  assert.deepEqual(r.history, models(msgs));
  const head = r.history[0]!.payload;
  assert.ok(head.type === "text" && head.text.startsWith("[context_summary]\n"));
  assert.equal(r.sessionTurns, completed(msgs));
  assert.deepEqual(r.sessionTokens, lastUsage(msgs)!.session);
});

Deno.test("fixture 05: parent and child replay independently; the subagent pointer is not history", async () => {
  const parent = await records(fixture("05-subagent-parent.jsonl"));
  const child = await records(fixture("05-subagent-child.jsonl"));
  const p = resumeTrace(parent);
  const c = resumeTrace(child);
  assert.deepEqual(p.history, models(parent));
  assert.equal(p.sessionTurns, completed(parent));
  assert.deepEqual(c.history, models(child));
  assert.equal(c.meta?.payload.source, "subagent");
  const first = c.history[0]!.payload;
  assert.ok(first.type === "text" && first.sender === "parent_agent");
});
