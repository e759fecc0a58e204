import assert from "node:assert/strict";
import {
  isRecordable,
  type OmniMessage,
  parseMessageLine,
  STOP_REASONS,
  validateMessage,
} from "../../lib/protocol/mod.ts";

const T = "2026-11-29T19:26:10.944Z";
const model = (payload: Record<string, unknown>) => ({ timestamp: T, type: "model_msg", payload });
const event = (payload: Record<string, unknown>) => ({ timestamp: T, type: "event_msg", payload });
const counts = { cache_read: 1, cache_write: 2, output: 3, total: 6 };

/** One valid example of every envelope and payload type of the protocol. */
export const EXAMPLES: Record<string, Record<string, unknown>> = {
  session_meta: {
    timestamp: T,
    type: "session_meta",
    payload: {
      session_id: "session-2026-11-29-19-26-10-d9c88b0d",
      provider: "custom",
      model_id: "mock",
      model_context_window: 1000000,
      system_prompt: "You are penguin.",
      agent_state: "/r/p/agents/a/agent_state",
      workspace: "/w",
    },
  },
  session_meta_unknown_window: {
    timestamp: T,
    type: "session_meta",
    payload: {
      session_id: "s",
      provider: "p",
      model_id: "m",
      model_context_window: "unknown",
      system_prompt: "",
      agent_state: "/a",
      workspace: "/w",
      source: "subagent",
      lineage: { parent_session_id: "s0", trace_index: 1, line: 12, kind: "fork" },
    },
  },
  text_user: model({ type: "text", role: "user", text: "hi", stop_reason: "completed" }),
  text_harness: model({
    type: "text",
    role: "user",
    text: "x",
    sender: "harness",
    stop_reason: "completed",
  }),
  text_assistant: model({
    type: "text",
    role: "assistant",
    text: "hello",
    fidelity: { phase: "final_answer" },
    stop_reason: "completed",
  }),
  thinking: model({
    type: "thinking",
    role: "assistant",
    thinking: "",
    fidelity: { signature: "EqQBCkYIBxgCKkB", id: "rs_1", encrypted_content: "gAAAA" },
    stop_reason: "completed",
  }),
  inline_thinking: model({
    type: "inline_thinking",
    role: "assistant",
    data: "AAAA",
    mime_type: "application/octet-stream",
    stop_reason: "completed",
  }),
  tool_call: model({
    type: "tool_call",
    role: "assistant",
    name: "exec_command",
    arguments: '{"cmd":"ls"}',
    tool_call_id: "call_0#2",
    stop_reason: "completed",
  }),
  tool_call_output: model({
    type: "tool_call_output",
    role: "user",
    output: "[no output]",
    images: ["data:image/png;base64,AAAA"],
    tool_call_id: "call_0",
    stop_reason: "aborted",
  }),
  image_url: model({
    type: "image_url",
    role: "user",
    image_url: "https://x/y.png",
    stop_reason: "completed",
  }),
  inline_data: model({
    type: "inline_data",
    role: "assistant",
    data: "AAAA",
    mime_type: "image/png",
    stop_reason: "completed",
  }),
  partial_text: model({
    type: "partial_text",
    role: "assistant",
    event_type: "delta",
    text: "he",
    stop_reason: "completed",
  }),
  partial_thinking: model({
    type: "partial_thinking",
    role: "assistant",
    event_type: "start",
    thinking: "",
    stop_reason: "completed",
  }),
  partial_tool_call: model({
    type: "partial_tool_call",
    role: "assistant",
    event_type: "stop",
    name: "",
    arguments: "",
    tool_call_id: "c1",
    stop_reason: "completed",
  }),
  partial_tool_call_output: model({
    type: "partial_tool_call_output",
    role: "user",
    event_type: "delta",
    output: "ok",
    tool_call_id: "c1",
    stop_reason: "completed",
  }),
  request_begin: event({ type: "request_begin" }),
  request_end: event({
    type: "request_end",
    status: "timeout",
    error_message: "idle",
    attempt: 2,
    retry_in_ms: 4000,
  }),
  token_usage: event({ type: "token_usage", session: counts, request: counts }),
  approval_decision: event({
    type: "approval_decision",
    decision: "forbidden",
    tool_call_id: "c1",
  }),
  abort: event({ type: "abort", reason: "aborted by user" }),
  abort_null: event({ type: "abort", reason: null }),
  compaction_begin: event({
    type: "compaction_begin",
    reason: "turns",
    mode: "summarize",
    context: 132,
    turns: 4,
  }),
  compaction_end: event({
    type: "compaction_end",
    reason: "manual",
    mode: "discard",
    status: "failed",
    attempt: 6,
    error_message: "x",
  }),
  goal_finished: event({
    type: "goal_finished",
    outcome: "budget_limited",
    rounds: 3,
    tokens_used: 1200,
  }),
  model_switched: event({
    type: "model_switched",
    provider: "custom",
    model_id: "other",
    previous_provider: "custom",
    previous_model_id: "m",
  }),
  subagent: event({ type: "subagent", session_id: "session-2026-11-29-19-26-19-8997c56f" }),
  tool_list_ready: event({
    type: "tool_list_ready",
    tools: [{ name: "read_file", description: "Read", parameters: { type: "object" } }],
  }),
  mcp_connect_begin: event({ type: "mcp_connect_begin", servers: ["fs"] }),
  mcp_connect_end: event({
    type: "mcp_connect_end",
    status: "failed",
    results: [{
      server: "fs",
      transport: "stdio",
      status: "failed",
      duration_ms: 12,
      error: "boom",
    }],
  }),
  origin_tagged: {
    ...model({ type: "text", role: "assistant", text: "child", stop_reason: "completed" }),
    origin: ["session-child"],
  },
};

Deno.test("validateMessage accepts every payload type and round-trips it unchanged", () => {
  for (const [name, value] of Object.entries(EXAMPLES)) {
    const line = JSON.stringify(value);
    const result = parseMessageLine(line);
    assert.ok(result.ok, `${name}: ${result.ok ? "" : result.problem.message}`);
    assert.equal(JSON.stringify(result.message), line, name);
  }
});

Deno.test("validateMessage returns the very object it was given", () => {
  const value = structuredClone(EXAMPLES.tool_call!);
  const result = validateMessage(value);
  assert.ok(result.ok);
  assert.equal(result.message, value);
});

Deno.test("every stop_reason value is accepted and nothing else", () => {
  for (const s of STOP_REASONS) {
    assert.ok(validateMessage(event({ type: "request_end", status: s })).ok, s);
  }
  assert.equal(STOP_REASONS.length, 6);
  const bad = validateMessage(event({ type: "request_end", status: "done" }));
  assert.ok(!bad.ok);
  assert.equal(bad.problem.path, "payload.status");
  assert.match(
    bad.problem.message,
    /^payload\.status: expected one of "completed", "failed", .*found "done"$/,
  );
});

Deno.test("unknown extra fields are preserved at every level", () => {
  const value = {
    timestamp: T,
    type: "model_msg",
    payload: {
      type: "text",
      role: "assistant",
      text: "x",
      stop_reason: "completed",
      future_field: { a: [1, 2] },
    },
    envelope_extra: true,
  };
  const result = validateMessage(value);
  assert.ok(result.ok);
  assert.deepEqual((result.message.payload as Record<string, unknown>).future_field, { a: [1, 2] });
  assert.equal(JSON.stringify(result.message), JSON.stringify(value));
});

Deno.test("fidelity round-trips byte-for-byte, key order and nesting included", () => {
  const line = '{"timestamp":"' + T +
    '","type":"model_msg","payload":{"type":"thinking","role":"assistant",' +
    '"thinking":"","fidelity":{"z":1,"a":{"y":[true,null,"é\\n"],"b":0.5},"signature":"EqQBCkYI+/="},' +
    '"stop_reason":"completed"}}';
  const result = parseMessageLine(line);
  assert.ok(result.ok);
  assert.equal(JSON.stringify(result.message), line);
});

Deno.test("a missing field is named with what was expected and what was found", () => {
  const r = validateMessage(
    model({
      type: "tool_call",
      role: "assistant",
      name: "x",
      tool_call_id: "c",
      stop_reason: "completed",
    }),
  );
  assert.ok(!r.ok);
  assert.equal(
    r.problem.message,
    "payload.arguments: expected string, found nothing (the field is missing)",
  );
});

Deno.test("a wrong type names the field, the expected shape and the value found", () => {
  const r = validateMessage(
    event({ type: "token_usage", session: counts, request: { ...counts, output: "3" } }),
  );
  assert.ok(!r.ok);
  assert.equal(r.problem.path, "payload.request.output");
  assert.equal(r.problem.expected, "expected number");
  assert.equal(r.problem.found, '"3"');
});

Deno.test("an unknown payload type lists the known ones", () => {
  const r = validateMessage(event({ type: "made_up" }));
  assert.ok(!r.ok);
  assert.equal(r.problem.path, "payload.type");
  assert.match(r.problem.message, /expected one of request_begin, request_end, .*found "made_up"/);
});

Deno.test("envelope problems are reported before payload problems", () => {
  const noTime = validateMessage({ type: "event_msg", payload: { type: "request_begin" } });
  assert.ok(!noTime.ok);
  assert.equal(noTime.problem.path, "timestamp");
  const badTime = validateMessage({
    timestamp: "yesterday",
    type: "event_msg",
    payload: { type: "request_begin" },
  });
  assert.ok(!badTime.ok);
  assert.match(
    badTime.problem.message,
    /^timestamp: expected an ISO-8601 timestamp, found "yesterday"$/,
  );
  const emptyOrigin = validateMessage({ ...EXAMPLES.text_user, origin: [] });
  assert.ok(!emptyOrigin.ok);
  assert.equal(emptyOrigin.problem.path, "origin");
  const arr = validateMessage([1, 2]);
  assert.ok(!arr.ok);
  assert.match(arr.problem.message, /^record: expected a JSON object, found an array/);
});

Deno.test("parseMessageLine reports invalid JSON", () => {
  const r = parseMessageLine('{"timestamp":');
  assert.ok(!r.ok);
  assert.match(r.problem.message, /^not valid JSON \(/);
});

Deno.test("isRecordable keeps meta, events and complete messages, and drops partials and origin-tagged", () => {
  const verdicts = Object.fromEntries(
    Object.entries(EXAMPLES).map(([k, v]) => [k, isRecordable(v as OmniMessage)]),
  );
  for (const [k, v] of Object.entries(verdicts)) {
    const expected = !(k.startsWith("partial_") || k === "origin_tagged");
    assert.equal(v, expected, k);
  }
});
