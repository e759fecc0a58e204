// Arguments a model streams past 2 MiB for one tool call are dropped, the call ends failed and the
// request stops: no tool runs it, and penguin does not keep growing with them.
import assert from "node:assert/strict";
import { createTranslator } from "../../lib/models/translate.ts";

Deno.test("arguments streamed past 2 MiB are dropped, their call fails, the request stops", () => {
  const t = createTranslator();
  const chunk = "x".repeat(1024 * 1024);
  const out = [...t.push({ type: "tool_call_start", key: "k", id: "c1", name: "write_file" })];
  out.push(...t.push({ type: "tool_call_args", key: "k", args: '{"content":"' }));
  for (let i = 0; i < 3; i++) {
    out.push(...t.push({ type: "tool_call_args", key: "k", args: chunk }));
  }
  assert.equal(t.state.error?.code, "penguin_too_large");
  assert.match(t.state.error.message, /2 MiB of arguments in a tool call \(write_file\)/);
  out.push(...t.close("failed"));
  const call = out.find((m) => m.type === "tool_call" && "arguments" in m);
  assert.ok(call && call.type === "tool_call");
  assert.equal(call.stop_reason, "failed");
  assert.equal(call.arguments, "");
  const deltas = out.filter((m) => m.type === "partial_tool_call");
  assert.ok(deltas.length < 12, "no partial deltas past the bound");
});
