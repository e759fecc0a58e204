import assert from "node:assert/strict";
import type { OmniMessage } from "../../lib/protocol/mod.ts";
import {
  INTERRUPTED_OUTPUT,
  replayCompactability,
  type ReplayMessage,
  resumeTrace,
} from "../../lib/session/mod.ts";
import { Script, type ScriptStep } from "./_support.ts";

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

/** One replay case: the records after the meta, and what the replay must hold. */
interface ReplayCase {
  name: string;
  steps: ScriptStep[];
  /** {@linkcode shape} of `history`, `carryOver`, `renderMessages`. */
  history?: string[];
  carryOver?: string[];
  render?: string[];
  turns?: number;
  closed?: boolean;
  /** Further checks. */
  check?: (r: ReturnType<typeof resumeTrace>) => void;
}

/** The prompt "go" and its request_begin. */
const GO = ["user:go", "begin"];
/** A first round answered in text. */
const ANSWERED = [...GO, "say:answer", "end"];
/** A first round calling tool `a`, answered. */
const CALLED_A = [...GO, "call:a", "end", "out:a"];
/** A request answering in text `text`. */
const reply = (text: string) => ["begin", `say:${text}`, "end"];
/** A summarize compaction up to its request_begin. */
const SUMMARIZING = ["compact", "user:Summarize the transcript.", "begin"];

const CASES: ReplayCase[] = [
  {
    name: "token counts come from the last token_usage",
    steps: [
      "user:a",
      "begin",
      "say:x",
      "usage:100/100",
      "end",
      "user:b",
      "begin",
      "say:y",
      "usage:250/150",
      "end",
    ],
    turns: 2,
    check(r) {
      assert.equal(r.sessionTokens.total, 250);
      assert.equal(r.sessionTokens.cache_write, 240);
      assert.equal(r.lastRequestTotal, 150);
    },
  },
  {
    name: "the prompt written before request_begin is that request's input",
    steps: ["user:hello", "tools", "begin", "say:hi", "end"],
    history: ["user:hello", "assistant:hi"],
    carryOver: [],
    turns: 1,
  },
  {
    name: "a tool output landing after request_end pairs with the next request",
    steps: [
      ...GO,
      "call:c1",
      "usage:10/10",
      "end",
      "out:c1",
      ...reply("done"),
    ],
    history: ["user:go", "call:c1", "output:c1", "assistant:done"],
    carryOver: [],
    turns: 2,
  },
  {
    name: "an uncommitted round re-carries its raw input and loses its half products",
    steps: ["user:go", "begin", "think:hmm", (s) => s.say("partial", "failed"), "end:failed"],
    history: [],
    carryOver: ["user:go"],
    turns: 0,
    render: ["user:go", "thinking:hmm", "assistant:partial"],
  },
  {
    name: "a request_begin inside an open request drops the open round",
    steps: ["user:go", "begin", "say:lost", "begin", "say:kept", "end"],
    history: ["user:go", "assistant:kept"],
    turns: 1,
  },
  {
    name: "a file ending inside a request drops that round and re-carries its input",
    steps: ["user:first", "begin", "say:one", "end", "user:second", "begin", "say:half"],
    history: ["user:first", "assistant:one"],
    carryOver: ["user:second"],
  },
  {
    name:
      "outputs of a dropped round are filtered whether they land before or after its request_end",
    // c2 lands inside the dropped round, c3 after its request_end.
    steps: [
      ...GO,
      "call:c1",
      "end",
      "out:c1",
      "begin",
      "call:c2",
      "call:c3",
      "out:c2",
      "end:timeout",
      "out:c3",
    ],
    history: ["user:go", "call:c1"],
    // The round's input (the output of the committed c1) is re-carried; c2/c3 were never committed.
    carryOver: ["output:c1"],
  },
  {
    name: "user messages inside a request span count for the next round",
    steps: [
      ...GO,
      "call:c1",
      "user:[user_steering]\nfaster\n[/user_steering]",
      "end",
      "out:c1",
      ...reply("ok"),
    ],
    history: [
      "user:go",
      "call:c1",
      "user:[user_steering]\nfaster\n[/user_steering]",
      "output:c1",
      "assistant:ok",
    ],
  },
  {
    name: "a committed call without output gets an in-memory placeholder at the next commit",
    steps: [...GO, "call:a", "call:b", "end", "out:a", ...reply("done")],
    history: ["user:go", "call:a", "call:b", "placeholder:b", "output:a", "assistant:done"],
    check(r) {
      const ph = r.history[3]!.payload;
      assert.equal(ph.stop_reason, "aborted");
      assert.equal(ph.type === "tool_call_output" && ph.output, INTERRUPTED_OUTPUT);
    },
  },
  {
    name: "committed calls left unanswered at the end are backfilled into carry-over",
    steps: ["user:go", "begin", "call:a", "call:b", "end", "out:b"],
    history: ["user:go", "call:a", "call:b"],
    carryOver: ["output:b", "placeholder:a"],
  },
  {
    name: "a tool call that did not complete is not committed and its output is discarded",
    steps: [
      ...GO,
      (s) => s.call("a", "aborted"),
      "end",
      (s) => s.out("a", "Tool call denied by user.", "aborted"),
    ],
    history: ["user:go", "call:a"],
    carryOver: [],
  },
  {
    name: "a second output for the same call is dropped",
    steps: [
      ...GO,
      "call:a",
      "end",
      (s) => s.out("a", "first"),
      (s) => s.out("a", "second"),
      ...reply("ok"),
    ],
    check(r) {
      const outs = r.history.filter((m) => m.payload.type === "tool_call_output");
      assert.equal(outs.length, 1);
      assert.equal(
        outs[0]!.payload.type === "tool_call_output" && outs[0]!.payload.output,
        "first",
      );
    },
  },
  {
    name: "origin-tagged records are ignored",
    steps: [
      ...GO,
      (s) =>
        s.model({ type: "text", role: "assistant", text: "child", stop_reason: "completed" }, [
          "c",
        ]),
      "say:parent",
      "end",
    ],
    history: ["user:go", "assistant:parent"],
  },
  {
    name: "failed compaction rounds are dropped by the generic rule",
    steps: [...ANSWERED, ...SUMMARIZING, "end:timeout", "compact-end:failed"],
    closed: false,
    history: ["user:go", "assistant:answer"],
    // The compaction prompt is not conversational input: it is not re-carried.
    carryOver: [],
    turns: 1,
    check: (r) => assert.equal(r.danglingCompaction, undefined),
  },
  {
    name: "a dropped compaction round reclaims only its tool outputs, not its prompt",
    steps: [...CALLED_A, ...SUMMARIZING, "end:malformed", "compact-end:failed"],
    carryOver: ["output:a"],
  },
  {
    name: "committed invalid-summary attempts stay in history but do not count as turns",
    steps: [
      ...ANSWERED,
      ...SUMMARIZING,
      "call:x",
      "end",
      (s) =>
        s.out(
          "x",
          "[tool error] the compaction request expects a summary, not tool calls",
          "failed",
        ),
      "user:Your previous reply was unusable.",
      "begin",
      "end:failed",
      "compact-end:failed",
    ],
    history: ["user:go", "assistant:answer", "user:Summarize the transcript.", "call:x"],
    turns: 1,
    // The repair output answers a committed call: it replays as carry-over.
    carryOver: ["output:x"],
  },
  {
    name: "an unanswered repair stash replays as carry-over",
    steps: [
      ...ANSWERED,
      "compact",
      "user:Summarize.",
      "begin",
      "call:x",
      "end",
      (s) => s.out("x", "[tool error] expects a summary", "failed"),
      "compact-end:aborted",
    ],
    carryOver: ["output:x"],
  },
  {
    name: "a compaction that never ended is reported as dangling",
    steps: [
      ...ANSWERED,
      (s) => s.compactBegin("summarize", "context"),
      "user:Summarize.",
      "begin",
      "say:[summary]half",
    ],
    closed: false,
    history: ["user:go", "assistant:answer"],
    carryOver: [],
    check: (r) => assert.deepEqual(r.danglingCompaction, { reason: "context", mode: "summarize" }),
  },
  {
    name: "a dangling compaction's unsent prompt is not carried over",
    steps: [...CALLED_A, "compact", "user:Summarize."],
    carryOver: ["output:a"],
    check: (r) => assert.ok(r.danglingCompaction),
  },
];

for (const c of CASES) {
  Deno.test(c.name, () => {
    const s = new Script();
    const r = resumeTrace([s.meta(ID), ...s.steps(...c.steps)]);
    if (c.history) assert.deepEqual(shape(r.history), c.history);
    if (c.carryOver) assert.deepEqual(shape(r.carryOver), c.carryOver);
    if (c.render) assert.deepEqual(shape(r.renderMessages), c.render);
    if (c.turns !== undefined) assert.equal(r.sessionTurns, c.turns);
    if (c.closed !== undefined) assert.equal(r.contextClosed, c.closed);
    c.check?.(r);
  });
}

Deno.test("resume is side-effect free: the input records are left untouched", () => {
  const s = new Script();
  const input = [
    s.meta(ID),
    ...s.steps("user:go", "begin", "call:a", "call:b", "end", "out:a", "compact"),
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
    ...s.steps("user:go", "begin", "call:a", "end", "out:a"),
    steer1,
    ...s.steps("begin", "say:ok", "end"),
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
    ...s.steps("user:go", "begin", (s) => s.say("x", "aborted"), "end:aborted"),
    abort,
    stray,
  ]);
  assert.ok(r.renderMessages.includes(abort));
  assert.ok(r.renderMessages.includes(stray));
  assert.equal(r.history.length, 0);
  assert.deepEqual(shape(r.carryOver), ["user:go"]);
});

function compactedRun(
  s: Script,
  answer: string | null,
  mode: "summarize" | "discard" = "summarize",
) {
  const msgs = [
    s.meta(ID),
    ...s.steps("user:go", "begin", "say:before", "usage:500/500", "end"),
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
