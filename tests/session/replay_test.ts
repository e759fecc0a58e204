import assert from "node:assert/strict";
import type { OmniMessage } from "../../lib/protocol/mod.ts";
import {
  INTERRUPTED_OUTPUT,
  replayCompactability,
  type ReplayMessage,
  resumeTrace,
} from "../../lib/session/mod.ts";
import { Script } from "./_support.ts";

const ID = "session-2026-01-02-03-04-05-0badf00d";

// A compact description of a message list: "user:text", "assistant:text",
// "call:id", "output:id", "placeholder:id".
function shape(msgs: readonly OmniMessage[]): string[] {
  return msgs.map((m) => {
    const p = m.payload as Record<string, unknown>;
    switch (p.type) {
      case "text":
        return `${p.role}:${p.text}`;
      case "thinking":
        return `thinking:${p.thinking}`;
      case "tool_call":
        return `call:${p.tool_call_id}`;
      case "tool_call_output":
        return p.output === INTERRUPTED_OUTPUT
          ? `placeholder:${p.tool_call_id}`
          : `output:${p.tool_call_id}`;
      default:
        return String(p.type);
    }
  });
}

Deno.test("an empty trace replays to an empty, open context without meta", () => {
  const r = resumeTrace([]);
  assert.deepEqual(r.history, []);
  assert.deepEqual(r.carryOver, []);
  assert.deepEqual(r.renderMessages, []);
  assert.equal(r.contextClosed, false);
  assert.equal(r.meta, null);
  assert.equal(r.sessionTurns, 0);
  assert.equal(r.lastRequestTotal, 0);
  assert.deepEqual(r.sessionTokens, { cache_read: 0, cache_write: 0, output: 0, total: 0 });
  assert.equal("pendingSummary" in r, false);
  assert.equal("danglingCompaction" in r, false);
});

Deno.test("meta is the first session_meta; a later one is ignored", () => {
  const s = new Script();
  const first = s.meta(ID);
  const r = resumeTrace([first, s.user("hi"), s.meta("session-2026-01-02-03-04-05-ffffffff")]);
  assert.equal(r.meta, first);
});

Deno.test("token counts come from the last token_usage", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("a"),
    s.begin(),
    s.say("x"),
    s.usage(100, 100),
    s.end(),
    s.user("b"),
    s.begin(),
    s.say("y"),
    s.usage(250, 150),
    s.end(),
  ]);
  assert.equal(r.sessionTokens.total, 250);
  assert.equal(r.sessionTokens.cache_write, 240);
  assert.equal(r.lastRequestTotal, 150);
  assert.equal(r.sessionTurns, 2);
});

Deno.test("the prompt written before request_begin is that request's input", () => {
  const s = new Script();
  const r = resumeTrace([s.meta(ID), s.user("hello"), s.tools(), s.begin(), s.say("hi"), s.end()]);
  assert.deepEqual(shape(r.history), ["user:hello", "assistant:hi"]);
  assert.deepEqual(r.carryOver, []);
  assert.equal(r.sessionTurns, 1);
});

Deno.test("a tool output landing after request_end pairs with the next request", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.call("c1"),
    s.usage(10, 10),
    s.end(),
    s.out("c1"),
    s.begin(),
    s.say("done"),
    s.end(),
  ]);
  assert.deepEqual(shape(r.history), ["user:go", "call:c1", "output:c1", "assistant:done"]);
  assert.deepEqual(r.carryOver, []);
  assert.equal(r.sessionTurns, 2);
});

Deno.test("an uncommitted round re-carries its raw input and loses its half products", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.think("hmm"),
    s.say("partial", "failed"),
    s.end("failed"),
  ]);
  assert.deepEqual(r.history, []);
  assert.deepEqual(shape(r.carryOver), ["user:go"]);
  assert.equal(r.sessionTurns, 0);
  assert.deepEqual(shape(r.renderMessages), ["user:go", "thinking:hmm", "assistant:partial"]);
});

Deno.test("a request_begin inside an open request drops the open round", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.say("lost"),
    s.begin(),
    s.say("kept"),
    s.end(),
  ]);
  assert.deepEqual(shape(r.history), ["user:go", "assistant:kept"]);
  assert.equal(r.sessionTurns, 1);
});

Deno.test("a file ending inside a request drops that round and re-carries its input", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("first"),
    s.begin(),
    s.say("one"),
    s.end(),
    s.user("second"),
    s.begin(),
    s.say("half"),
  ]);
  assert.deepEqual(shape(r.history), ["user:first", "assistant:one"]);
  assert.deepEqual(shape(r.carryOver), ["user:second"]);
});

Deno.test("outputs of a dropped round are filtered whether they land before or after its request_end", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.call("c1"),
    s.end(),
    s.out("c1"),
    s.begin(),
    s.call("c2"),
    s.call("c3"),
    s.out("c2"), // lands inside the dropped round
    s.end("timeout"),
    s.out("c3"), // lands after its request_end
  ]);
  assert.deepEqual(shape(r.history), ["user:go", "call:c1"]);
  // The round's input (the output of the committed c1) is re-carried; c2/c3 were never committed.
  assert.deepEqual(shape(r.carryOver), ["output:c1"]);
});

Deno.test("user messages inside a request span count for the next round", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.call("c1"),
    s.user("[user_steering]\nfaster\n[/user_steering]"),
    s.end(),
    s.out("c1"),
    s.begin(),
    s.say("ok"),
    s.end(),
  ]);
  assert.deepEqual(shape(r.history), [
    "user:go",
    "call:c1",
    "user:[user_steering]\nfaster\n[/user_steering]",
    "output:c1",
    "assistant:ok",
  ]);
});

Deno.test("a committed call without output gets an in-memory placeholder at the next commit", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.call("a"),
    s.call("b"),
    s.end(),
    s.out("a"),
    s.begin(),
    s.say("done"),
    s.end(),
  ]);
  assert.deepEqual(shape(r.history), [
    "user:go",
    "call:a",
    "call:b",
    "placeholder:b",
    "output:a",
    "assistant:done",
  ]);
  const ph = r.history[3]!.payload;
  assert.equal(ph.stop_reason, "aborted");
  assert.equal(ph.type === "tool_call_output" && ph.output, INTERRUPTED_OUTPUT);
});

Deno.test("committed calls left unanswered at the end are backfilled into carry-over", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.call("a"),
    s.call("b"),
    s.end(),
    s.out("b"),
  ]);
  assert.deepEqual(shape(r.history), ["user:go", "call:a", "call:b"]);
  assert.deepEqual(shape(r.carryOver), ["output:b", "placeholder:a"]);
});

Deno.test("a tool call that did not complete is not committed and its output is discarded", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.call("a", "aborted"),
    s.end(),
    s.out("a", "Tool call denied by user.", "aborted"),
  ]);
  assert.deepEqual(shape(r.history), ["user:go", "call:a"]);
  assert.deepEqual(r.carryOver, []);
});

Deno.test("a second output for the same call is dropped", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.call("a"),
    s.end(),
    s.out("a", "first"),
    s.out("a", "second"),
    s.begin(),
    s.say("ok"),
    s.end(),
  ]);
  const outs = r.history.filter((m) => m.payload.type === "tool_call_output");
  assert.equal(outs.length, 1);
  assert.equal(outs[0]!.payload.type === "tool_call_output" && outs[0]!.payload.output, "first");
});

Deno.test("resume is side-effect free: the input records are left untouched", () => {
  const s = new Script();
  const input = [
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.call("a"),
    s.call("b"),
    s.end(),
    s.out("a"),
    s.compactBegin(),
  ];
  const before = structuredClone(input);
  const r = resumeTrace(input);
  assert.deepEqual(input, before);
  assert.ok(r.carryOver.some((m) => shape([m])[0] === "placeholder:b"));
  assert.equal(input.length, before.length);
});

Deno.test("steering replays as ordinary input and trailing steering becomes carry-over verbatim", () => {
  const s = new Script();
  const steer1 = s.user("[user_steering]\nuse bash\n[/user_steering]");
  const steer2 = s.user("[user_steering]\nstop now\n[/user_steering]");
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.call("a"),
    s.end(),
    s.out("a"),
    steer1,
    s.begin(),
    s.say("ok"),
    s.end(),
    steer2,
  ]);
  assert.ok(r.history.includes(steer1 as ReplayMessage));
  assert.equal(r.carryOver.length, 1);
  assert.equal(r.carryOver[0], steer2);
});

Deno.test("abort events appear in render history; assistant text outside a request is render-only", () => {
  const s = new Script();
  const abort = s.abort("aborted by user");
  const stray = s.say("[reached max turns (3); stopping]", "failed");
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.say("x", "aborted"),
    s.end("aborted"),
    abort,
    stray,
  ]);
  assert.ok(r.renderMessages.includes(abort));
  assert.ok(r.renderMessages.includes(stray));
  assert.equal(r.history.length, 0);
  assert.deepEqual(shape(r.carryOver), ["user:go"]);
});

Deno.test("origin-tagged records are ignored", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.model({ type: "text", role: "assistant", text: "child", stop_reason: "completed" }, ["c"]),
    s.say("parent"),
    s.end(),
  ]);
  assert.deepEqual(shape(r.history), ["user:go", "assistant:parent"]);
});

function compactedRun(
  s: Script,
  answer: string | null,
  mode: "summarize" | "discard" = "summarize",
) {
  const msgs = [
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.say("before"),
    s.usage(500, 500),
    s.end(),
    s.compactBegin(mode),
  ];
  if (mode === "summarize") {
    msgs.push(s.user("Summarize the transcript."), s.begin());
    if (answer !== null) msgs.push(s.say(answer));
    msgs.push(s.usage(600, 100), s.end());
  }
  msgs.push(s.compactEnd("completed", mode));
  return msgs;
}

Deno.test("a closed summarize context has empty history and the summary rebuilt in square form", () => {
  const s = new Script();
  const r = resumeTrace(compactedRun(s, "Sure. [summary]\n state: 4 of 6 \n[/summary]"));
  assert.equal(r.contextClosed, true);
  assert.deepEqual(r.history, []);
  assert.deepEqual(r.carryOver, []);
  assert.deepEqual(r.renderMessages, []);
  assert.equal(r.sessionTurns, 0);
  assert.equal(r.lastRequestTotal, 0);
  assert.equal(r.sessionTokens.total, 600);
  const p = r.pendingSummary?.payload;
  assert.equal(p?.role, "user");
  assert.equal(p?.text, "[context_summary]\nstate: 4 of 6\n[/context_summary]");
  assert.equal(p?.sender, undefined);
  assert.equal(replayCompactability(r), "just_compacted");
});

Deno.test("a legacy <summary> answer is rebuilt in square form", () => {
  const s = new Script();
  const r = resumeTrace(compactedRun(s, "<summary>old style</summary>"));
  assert.equal(r.pendingSummary?.payload.text, "[context_summary]\nold style\n[/context_summary]");
});

Deno.test("a textless compaction answer voids the closure", () => {
  const s = new Script();
  const r = resumeTrace(compactedRun(s, null));
  assert.equal(r.contextClosed, false);
  assert.equal(r.pendingSummary, undefined);
  // The generic scan: the task turn counts, the compaction request does not.
  assert.equal(r.sessionTurns, 1);
  assert.deepEqual(shape(r.history).slice(0, 2), ["user:go", "assistant:before"]);
  assert.equal(replayCompactability(r), "ok");
});

Deno.test("a completed request with no text overwrites an earlier summary-looking text", () => {
  const s = new Script();
  const msgs = compactedRun(s, null);
  // An earlier completed request answered with a summary block: not the last one.
  msgs.splice(3, 1, s.say("[summary]stale[/summary]"));
  const r = resumeTrace(msgs);
  assert.equal(r.contextClosed, false);
});

Deno.test("a discard closure yields no summary", () => {
  const s = new Script();
  const r = resumeTrace(compactedRun(s, null, "discard"));
  assert.equal(r.contextClosed, true);
  assert.equal(r.pendingSummary, undefined);
  assert.deepEqual(r.history, []);
});

Deno.test("failed compaction rounds are dropped by the generic rule", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.say("answer"),
    s.end(),
    s.compactBegin(),
    s.user("Summarize the transcript."),
    s.begin(),
    s.end("timeout"),
    s.compactEnd("failed"),
  ]);
  assert.equal(r.contextClosed, false);
  assert.deepEqual(shape(r.history), ["user:go", "assistant:answer"]);
  // The compaction prompt is not conversational input: it is not re-carried.
  assert.deepEqual(r.carryOver, []);
  assert.equal(r.sessionTurns, 1);
  assert.equal(r.danglingCompaction, undefined);
});

Deno.test("a dropped compaction round reclaims only its tool outputs, not its prompt", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.call("a"),
    s.end(),
    s.out("a"),
    s.compactBegin(),
    s.user("Summarize the transcript."),
    s.begin(),
    s.end("malformed"),
    s.compactEnd("failed"),
  ]);
  assert.deepEqual(shape(r.carryOver), ["output:a"]);
});

Deno.test("committed invalid-summary attempts stay in history but do not count as turns", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.say("answer"),
    s.end(),
    s.compactBegin(),
    s.user("Summarize the transcript."),
    s.begin(),
    s.call("x"),
    s.end(),
    s.out("x", "[tool error] the compaction request expects a summary, not tool calls", "failed"),
    s.user("Your previous reply was unusable."),
    s.begin(),
    s.end("failed"),
    s.compactEnd("failed"),
  ]);
  assert.deepEqual(shape(r.history), [
    "user:go",
    "assistant:answer",
    "user:Summarize the transcript.",
    "call:x",
  ]);
  assert.equal(r.sessionTurns, 1);
  // The repair output answers a committed call: it replays as carry-over.
  assert.deepEqual(shape(r.carryOver), ["output:x"]);
});

Deno.test("an unanswered repair stash replays as carry-over", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.say("answer"),
    s.end(),
    s.compactBegin(),
    s.user("Summarize."),
    s.begin(),
    s.call("x"),
    s.end(),
    s.out("x", "[tool error] expects a summary", "failed"),
    s.compactEnd("aborted"),
  ]);
  assert.deepEqual(shape(r.carryOver), ["output:x"]);
});

Deno.test("a compaction that never ended is reported as dangling", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.say("answer"),
    s.end(),
    s.compactBegin("summarize", "context"),
    s.user("Summarize."),
    s.begin(),
    s.say("[summary]half"),
  ]);
  assert.deepEqual(r.danglingCompaction, { reason: "context", mode: "summarize" });
  assert.equal(r.contextClosed, false);
  assert.deepEqual(shape(r.history), ["user:go", "assistant:answer"]);
  assert.deepEqual(r.carryOver, []);
});

Deno.test("a dangling compaction's unsent prompt is not carried over", () => {
  const s = new Script();
  const r = resumeTrace([
    s.meta(ID),
    s.user("go"),
    s.begin(),
    s.call("a"),
    s.end(),
    s.out("a"),
    s.compactBegin(),
    s.user("Summarize."),
  ]);
  assert.ok(r.danglingCompaction);
  assert.deepEqual(shape(r.carryOver), ["output:a"]);
});

Deno.test("compactability is empty without turns and ok with them", () => {
  const s = new Script();
  assert.equal(replayCompactability(resumeTrace([s.meta(ID), s.user("go")])), "empty");
  assert.equal(
    replayCompactability(resumeTrace([s.meta(ID), s.user("go"), s.begin(), s.say("x"), s.end()])),
    "ok",
  );
});

Deno.test("a compaction closure keeps the meta", () => {
  const s = new Script();
  const msgs = compactedRun(s, "[summary]s[/summary]");
  const r = resumeTrace(msgs);
  assert.equal(r.meta, msgs[0]);
});

Deno.test("the pair a session runs on is the last model_switched event's; none means the meta's", () => {
  const s = new Script();
  const switched = (model_id: string, previous_model_id: string) =>
    s.event({
      type: "model_switched",
      provider: "custom",
      model_id,
      previous_provider: "custom",
      previous_model_id,
    });
  const head = [s.meta(ID), s.tools(), s.user("a"), s.begin(), s.say("A"), s.end()];
  assert.equal(resumeTrace(head).pair, undefined);
  const once = [...head, switched("b", "m"), s.user("b"), s.begin(), s.say("B"), s.end()];
  assert.deepEqual(resumeTrace(once).pair, { provider: "custom", model_id: "b" });
  const twice = [...once, switched("c", "b"), s.user("c")];
  assert.deepEqual(resumeTrace(twice).pair, { provider: "custom", model_id: "c" });
});
