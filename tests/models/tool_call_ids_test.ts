import assert from "node:assert/strict";
import { createToolCallIds, outboundToolCallId } from "../../lib/models/tool_call_ids.ts";

Deno.test("an unused id is kept; a used one gets the first free #n from 2", () => {
  const ids = createToolCallIds();
  assert.equal(ids.allocate("call_1"), "call_1");
  assert.equal(ids.allocate("call_1"), "call_1#2");
  assert.equal(ids.allocate("call_1"), "call_1#3");
  assert.equal(ids.allocate("get_weather"), "get_weather");
});

Deno.test("historical ids are pre-registered", () => {
  const ids = createToolCallIds(["add", "add#2"]);
  assert.equal(ids.allocate("add"), "add#3");
  ids.register(["mul"]);
  assert.ok(ids.has("mul"));
  assert.equal(ids.allocate("mul"), "mul#2");
});

Deno.test("outbound ids lose only a trailing #digits suffix", () => {
  assert.equal(outboundToolCallId("call_1#2"), "call_1");
  assert.equal(outboundToolCallId("call_1#12"), "call_1");
  assert.equal(outboundToolCallId("call#x"), "call#x");
  assert.equal(outboundToolCallId("a#2#3"), "a#2");
  assert.equal(outboundToolCallId("plain"), "plain");
});
