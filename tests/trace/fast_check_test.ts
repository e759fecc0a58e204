// The reader's fast pre-check may only ever say "valid" when the protocol's
// zod validation agrees. Checked over every record kind and systematic
// mutations of every field.
import assert from "node:assert/strict";
import { certainlyValid } from "../../lib/trace/_fast_check.ts";
import {
  assistantText,
  eventMsg,
  modelMsg,
  type OmniMessage,
  type SessionMetaEnvelope,
  sessionMetaMsg,
  toolCall,
  toolCallOutput,
  userText,
  validateMessage,
} from "../../lib/protocol/mod.ts";
import { meta, sampleTrace, sessionId } from "./_support.ts";

const FIXTURES = new URL("../../../shared/fixtures/penguin-traces/", import.meta.url);

function fixtureRecords(): unknown[] {
  const out: unknown[] = [];
  try {
    for (const e of Deno.readDirSync(FIXTURES)) {
      if (!e.name.endsWith(".jsonl")) continue;
      for (const line of Deno.readTextFileSync(new URL(e.name, FIXTURES)).split("\n")) {
        if (line.trim()) out.push(JSON.parse(line));
      }
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return out;
}

function everyKind(): OmniMessage[] {
  const metaPayload = (meta("s") as SessionMetaEnvelope).payload;
  const counts = { cache_read: 1, cache_write: 2, output: 3, total: 6 };
  return [
    ...sampleTrace(sessionId()),
    sessionMetaMsg({ ...metaPayload, source: "subagent", model_context_window: "unknown" }),
    sessionMetaMsg({
      ...metaPayload,
      lineage: { parent_session_id: "p", trace_index: 1, line: 3, kind: "fork" },
    }),
    modelMsg(userText("steer", "harness")),
    modelMsg(assistantText("done", "failed", { signature: "abc", phase: "final" })),
    modelMsg({
      type: "thinking",
      role: "assistant",
      thinking: "",
      fidelity: { id: "r1" },
      stop_reason: "completed",
    }),
    modelMsg({
      type: "inline_thinking",
      role: "assistant",
      data: "AAAA",
      mime_type: "x/y",
      stop_reason: "completed",
    }),
    modelMsg(toolCall("read", "{}", "c9", "aborted", { signature: "s" })),
    modelMsg(toolCallOutput("c9", "out", "failed", ["data:image/png;base64,AAAA"])),
    modelMsg({
      type: "image_url",
      role: "user",
      image_url: "https://x/y.png",
      stop_reason: "completed",
    }),
    modelMsg({
      type: "inline_data",
      role: "assistant",
      data: "AA",
      mime_type: "image/png",
      stop_reason: "completed",
    }),
    modelMsg({
      type: "partial_text",
      role: "assistant",
      event_type: "delta",
      text: "t",
      stop_reason: "completed",
    }),
    eventMsg({
      type: "request_end",
      status: "failed",
      error_message: "boom",
      attempt: 2,
      retry_in_ms: 500,
    }),
    eventMsg({ type: "token_usage", session: counts, request: counts }),
    eventMsg({ type: "abort", reason: null }),
    eventMsg({
      type: "compaction_begin",
      reason: "turns",
      mode: "summarize",
      context: 10,
      turns: 4,
    }),
    eventMsg({ type: "compaction_end", reason: "turns", mode: "discard", status: "completed" }),
    eventMsg({ type: "subagent", session_id: "child" }),
    eventMsg({
      type: "tool_list_ready",
      tools: [{ name: "a", description: "b", parameters: { type: "object" } }],
    }),
    eventMsg({ type: "mcp_connect_begin", servers: ["m"] }),
    eventMsg({ type: "goal_finished", outcome: "complete", rounds: 2, tokens_used: 10 }),
    eventMsg({
      type: "model_switched",
      provider: "p",
      model_id: "b",
      previous_provider: "p",
      previous_model_id: "a",
    }),
  ];
}

const VALUES: unknown[] = [
  undefined,
  null,
  true,
  0,
  -0,
  -1,
  1.5,
  2 ** 53,
  Infinity,
  NaN,
  "",
  "x",
  "unknown",
  "completed",
  "user",
  "assistant",
  "request_end",
  "model_msg",
  [],
  ["x"],
  [1],
  [{}],
  {},
  { name: "n", description: "d" },
];

const TIMESTAMPS = [
  "2026-01-02T03:04:05.678Z",
  "2024-02-29T00:00:00.000Z",
  "2026-02-29T00:00:00.000Z",
  "2026-13-01T00:00:00.000Z",
  "2026-04-31T00:00:00.000Z",
  "2026-01-01T24:00:00.000Z",
  "2026-01-01T00:60:00Z",
  "2026-01-01T00:00:00+05:30",
  "2026-01-01T00:00:00-24:00",
  "2026-01-01T00:00Z",
  "2026-01-01T00:00:00",
  "2026-01-01",
  "1900-02-29T00:00:00Z",
  "2000-02-29T00:00:00.1234567Z",
];

function clone<T>(v: T): T {
  return structuredClone(v);
}

// Every mutation of `record`: each object/array member (to depth 4) replaced by
// each value in VALUES, deleted, or joined by an unknown extra member.
function* mutations(record: unknown): Generator<unknown> {
  function* walk(
    path: (string | number)[],
    node: unknown,
    depth: number,
  ): Generator<(string | number)[]> {
    if (depth > 4 || node === null || typeof node !== "object") return;
    for (const key of Array.isArray(node) ? node.keys() : Object.keys(node)) {
      yield [...path, key];
      yield* walk([...path, key], (node as Record<string | number, unknown>)[key], depth + 1);
    }
    yield [...path, "extra_field"];
  }
  for (const path of walk([], record, 0)) {
    for (const value of [...VALUES, ...(path[path.length - 1] === "timestamp" ? TIMESTAMPS : [])]) {
      const copy = clone(record) as Record<string | number, unknown>;
      let parent = copy;
      for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
      const last = path[path.length - 1]!;
      if (value === undefined && !Array.isArray(parent)) delete parent[last];
      else parent[last] = value;
      yield copy;
    }
  }
}

Deno.test("the fast pre-check never accepts a record the protocol validation rejects", () => {
  const bases: unknown[] = [...everyKind(), ...fixtureRecords()];
  let checked = 0;
  let fastAccepted = 0;
  const wrong: string[] = [];
  for (const base of bases) {
    for (const v of [base, ...mutations(base)]) {
      checked++;
      if (!certainlyValid(v)) continue;
      fastAccepted++;
      const r = validateMessage(v);
      if (!r.ok) wrong.push(`${JSON.stringify(v).slice(0, 200)}: ${r.problem.message}`);
    }
  }
  assert.deepEqual(wrong.slice(0, 5), []);
  assert.ok(checked > 10_000, `checked ${checked}`);
  assert.ok(fastAccepted > 1_000, `the fast path accepted ${fastAccepted}`);
});

Deno.test("the fast pre-check accepts the common record kinds as they are written", () => {
  for (const m of sampleTrace(sessionId())) {
    assert.equal(certainlyValid(m), true, JSON.stringify(m));
  }
  for (const m of fixtureRecords()) {
    const t = (m as { payload: { type?: string } }).payload.type;
    const common = [
      "text",
      "thinking",
      "tool_call",
      "tool_call_output",
      "request_begin",
      "request_end",
    ];
    if (t === undefined || common.includes(t)) {
      assert.equal(certainlyValid(m), true, JSON.stringify(m).slice(0, 200));
    }
  }
});
