import assert from "node:assert/strict";
import { createToolCallIds } from "../../lib/models/tool_call_ids.ts";
import { createTranslator } from "../../lib/models/translate.ts";
import type { WireDelta } from "../../lib/models/wire.ts";
import type { CompleteMessage, ModelPayload } from "../../lib/protocol/types.ts";
import { assertPartialDiscipline } from "./_support.ts";

function run(deltas: WireDelta[], status: "completed" | "timeout" = "completed") {
  const t = createTranslator();
  const out: ModelPayload[] = [];
  for (const d of deltas) out.push(...t.push(d));
  out.push(...t.close(status));
  assertPartialDiscipline(out);
  const completes = out.filter((m) => !m.type.startsWith("partial_")) as CompleteMessage[];
  return { out, completes, state: t.state };
}

Deno.test("thinking deltas with equal fidelity stay one block; a conflicting fidelity starts another", () => {
  const { completes } = run([
    { type: "thinking", thinking: "a", fidelity: { reasoning_field: "reasoning" } },
    { type: "thinking", thinking: "b", fidelity: { reasoning_field: "reasoning" } },
    {
      type: "thinking",
      thinking: "c",
      fidelity: { signature: "S2", reasoning_field: "reasoning" },
    },
    { type: "thinking", thinking: "d", fidelity: { signature: "S3" } },
  ]);
  assert.deepEqual(completes.map((m) => [(m as { thinking: string }).thinking, m.fidelity]), [
    ["abc", { reasoning_field: "reasoning", signature: "S2" }],
    ["d", { signature: "S3" }],
  ]);
});

Deno.test("a signature arriving after thinking text attaches to the open block", () => {
  const { completes } = run([
    { type: "thinking", thinking: "plan" },
    { type: "thinking", thinking: "", fidelity: { signature: "SIG" } },
    { type: "segment_end" },
    { type: "thinking", thinking: "second" },
  ]);
  assert.deepEqual(
    completes.map((m) => [m.type, (m as { thinking: string }).thinking, m.fidelity]),
    [
      ["thinking", "plan", { signature: "SIG" }],
      ["thinking", "second", undefined],
    ],
  );
});

Deno.test("text splits on a differing phase and closes after a signature", () => {
  const { completes } = run([
    { type: "text", text: "", fidelity: { phase: "commentary" } },
    { type: "text", text: "working" },
    { type: "text", text: "", fidelity: { phase: "final_answer" } },
    { type: "text", text: "done" },
    { type: "text", text: "", fidelity: { signature: "T" } },
    { type: "text", text: "more" },
  ]);
  assert.deepEqual(completes.map((m) => [(m as { text: string }).text, m.fidelity]), [
    ["working", { phase: "commentary" }],
    ["done", { phase: "final_answer", signature: "T" }],
    ["more", undefined],
  ]);
});

Deno.test("an empty segment carrying fidelity still yields a complete message", () => {
  const { completes } = run([
    { type: "thinking", thinking: "", fidelity: { id: "rs_1", encrypted_content: "E" } },
    { type: "segment_end" },
  ]);
  assert.deepEqual(completes, [{
    type: "thinking",
    role: "assistant",
    thinking: "",
    fidelity: { id: "rs_1", encrypted_content: "E" },
    stop_reason: "completed",
  }]);
});

Deno.test("empty deltas without fidelity produce nothing", () => {
  const { out } = run([{ type: "text", text: "" }, { type: "thinking", thinking: "" }]);
  assert.deepEqual(out, []);
});

Deno.test("type boundaries flush: thinking, then text, then a tool call, in order", () => {
  const { out, completes } = run([
    { type: "thinking", thinking: "hmm" },
    { type: "text", text: "ok" },
    { type: "tool_call_start", key: "0", id: "c1", name: "ls" },
    { type: "tool_call_args", key: "0", args: '{"a":' },
    { type: "tool_call_args", key: "0", args: "1}" },
    { type: "tool_call_end", key: "0" },
  ]);
  assert.deepEqual(completes.map((m) => m.type), ["thinking", "text", "tool_call"]);
  const start = out.find((m) => m.type === "partial_tool_call" && m.event_type === "start");
  assert.deepEqual(start, {
    type: "partial_tool_call",
    role: "assistant",
    event_type: "start",
    name: "ls",
    arguments: "",
    tool_call_id: "c1",
    stop_reason: "completed",
  });
});

Deno.test("a tool call is completed eagerly at its end, before the stream finishes", () => {
  const t = createTranslator();
  t.push({ type: "tool_call_start", key: "k", id: "c", name: "read" });
  t.push({ type: "tool_call_args", key: "k", args: '{"path":"a"}' });
  const out = t.push({ type: "tool_call_end", key: "k" });
  assert.equal(out.at(-1)?.type, "tool_call");
  assert.equal(out.at(-1)?.stop_reason, "completed");
});

Deno.test("invalid tool-call JSON completes the call with its text verbatim (the tool reports the problem)", () => {
  const { completes, state } = run([
    { type: "tool_call_start", key: "k", id: "c", name: "read" },
    { type: "tool_call_args", key: "k", args: '{"path":' },
    { type: "tool_call_end", key: "k" },
  ]);
  assert.equal(completes[0]!.stop_reason, "completed");
  assert.equal((completes[0] as { arguments: string }).arguments, '{"path":');
  assert.equal(state.error, undefined);
});

Deno.test("a tool call left open is completed from its deltas when the stream closes", () => {
  const { completes } = run([
    { type: "tool_call_start", key: "k", id: "c", name: "read" },
    { type: "tool_call_args", key: "k", args: '{"x":1}' },
    { type: "finish", reason: "tool_call" },
  ]);
  assert.deepEqual(completes.map((m) => [m.type, m.stop_reason]), [["tool_call", "completed"]]);
});

Deno.test("finish by length fails the final segment only", () => {
  const { completes } = run([
    { type: "thinking", thinking: "t" },
    { type: "text", text: "cut" },
    { type: "finish", reason: "length" },
  ]);
  assert.deepEqual(completes.map((m) => m.stop_reason), ["completed", "failed"]);
});

Deno.test("a non-completed close gives every open segment that status", () => {
  const { completes } = run([{ type: "text", text: "partial" }], "timeout");
  assert.equal(completes[0]!.stop_reason, "timeout");
});

Deno.test("usage snapshots replace each other and carry a total", () => {
  const { state } = run([
    { type: "usage", cache_read: 1, cache_write: 2, output: 3 },
    { type: "usage", cache_read: 10, cache_write: 20, output: 30 },
  ]);
  assert.deepEqual(state.usage, { cache_read: 10, cache_write: 20, output: 30, total: 60 });
});

Deno.test("a second call with an already-used provider id in one request is a new call", () => {
  const t = createTranslator(createToolCallIds());
  const out: ModelPayload[] = [];
  for (const key of ["a", "b"]) {
    out.push(...t.push({ type: "tool_call_start", key, id: "get_weather", name: "get_weather" }));
    out.push(...t.push({ type: "tool_call_end", key }));
  }
  const ids = out.filter((m) => m.type === "tool_call").map((m) =>
    (m as { tool_call_id: string }).tool_call_id
  );
  assert.deepEqual(ids, ["get_weather", "get_weather#2"]);
});
