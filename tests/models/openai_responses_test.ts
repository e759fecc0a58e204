import assert from "node:assert/strict";
import {
  buildResponsesRequest,
  createResponsesParser,
} from "../../lib/models/protocols/openai_responses.ts";
import type { WireDelta, WireRequest } from "../../lib/models/wire.ts";
import type { CompleteMessage } from "../../lib/protocol/types.ts";

type Json = Record<string, unknown>;

function req(history: CompleteMessage[], over: Partial<WireRequest> = {}): WireRequest {
  return {
    endpoint: {
      provider: "openai",
      model_id: "gpt-5.5",
      protocol: "openai-responses",
      base_url: "https://api.openai.com/v1",
      api_key: "k",
    },
    system_prompt: "SYS",
    tools: [],
    history,
    ...over,
  };
}

Deno.test("responses request: URL, store false, instructions, cap, reasoning, non-strict tools", () => {
  const r = buildResponsesRequest(
    req([{ type: "text", role: "user", text: "hi", stop_reason: "completed" }], {
      tools: [{ name: "ls", description: "list", parameters: { type: "object" } }],
      max_tokens: 900,
      thinking_level: "medium",
    }),
  );
  assert.equal(r.url, "https://api.openai.com/v1/responses");
  assert.equal(r.headers.authorization, "Bearer k");
  const body = JSON.parse(r.body) as Json;
  assert.equal(body.store, false);
  assert.equal(body.stream, true);
  assert.equal(body.instructions, "SYS");
  assert.equal(body.max_output_tokens, 900);
  assert.deepEqual(body.reasoning, { effort: "medium", summary: "auto" });
  assert.deepEqual(body.include, ["reasoning.encrypted_content"]);
  assert.deepEqual(body.tools, [{
    type: "function",
    name: "ls",
    description: "list",
    parameters: { type: "object" },
    strict: false,
  }]);
  assert.deepEqual(body.input, [{
    type: "message",
    role: "user",
    content: [{ type: "input_text", text: "hi" }],
  }]);
});

Deno.test("responses replay: reasoning items verbatim, phases kept, calls and outputs by call_id", () => {
  const body = JSON.parse(
    buildResponsesRequest(req([
      { type: "text", role: "user", text: "go", stop_reason: "completed" },
      {
        type: "thinking",
        role: "assistant",
        thinking: "sum",
        fidelity: { id: "rs_1", encrypted_content: "ENC", channel: "summary" },
        stop_reason: "completed",
      },
      {
        type: "thinking",
        role: "assistant",
        thinking: "raw",
        fidelity: { id: "rs_2", encrypted_content: "E2" },
        stop_reason: "completed",
      },
      {
        type: "thinking",
        role: "assistant",
        thinking: "foreign",
        fidelity: { signature: "s" },
        stop_reason: "completed",
      },
      {
        type: "text",
        role: "assistant",
        text: "working",
        fidelity: { phase: "commentary" },
        stop_reason: "completed",
      },
      {
        type: "tool_call",
        role: "assistant",
        name: "ls",
        arguments: "{}",
        tool_call_id: "call_9#3",
        stop_reason: "completed",
      },
      {
        type: "tool_call_output",
        role: "user",
        output: "ok",
        images: ["data:image/png;base64,AA"],
        tool_call_id: "call_9#3",
        stop_reason: "completed",
      },
    ])).body,
  ) as Json;
  const input = body.input as Json[];
  assert.deepEqual(input.slice(1), [
    {
      type: "reasoning",
      id: "rs_1",
      encrypted_content: "ENC",
      summary: [{ type: "summary_text", text: "sum" }],
    },
    {
      type: "reasoning",
      id: "rs_2",
      encrypted_content: "E2",
      summary: [],
      content: [{ type: "reasoning_text", text: "raw" }],
    },
    {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "working", annotations: [] }],
      phase: "commentary",
    },
    { type: "function_call", call_id: "call_9", name: "ls", arguments: "{}" },
    {
      type: "function_call_output",
      call_id: "call_9",
      output: [{ type: "input_text", text: "ok" }, {
        type: "input_image",
        image_url: "data:image/png;base64,AA",
      }],
    },
  ]);
});

function parse(events: Json[]): WireDelta[] {
  const p = createResponsesParser();
  const out: WireDelta[] = [];
  for (const e of events) out.push(...p.push({ event: e.type as string, data: JSON.stringify(e) }));
  out.push(...p.end());
  return out;
}

Deno.test("responses parser: a message item's phase opens its text segment", () => {
  const d = parse([
    {
      type: "response.output_item.added",
      item: { id: "m1", type: "message", phase: "commentary", content: [] },
    },
    { type: "response.output_text.delta", item_id: "m1", delta: "hi" },
  ]);
  assert.deepEqual(d, [
    { type: "segment_end" },
    { type: "text", text: "", fidelity: { phase: "commentary" } },
    { type: "text", text: "hi" },
  ]);
});

Deno.test("responses parser: incomplete is a length finish with usage", () => {
  const d = parse([{
    type: "response.incomplete",
    response: {
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      usage: { input_tokens: 10, output_tokens: 5, input_tokens_details: { cached_tokens: 4 } },
    },
  }]);
  assert.deepEqual(d, [
    { type: "usage", cache_read: 4, cache_write: 6, output: 5 },
    { type: "finish", reason: "length", raw: "incomplete" },
  ]);
});

Deno.test("responses parser: a top-level error event keeps its code", () => {
  const d = parse([{ type: "error", code: "rate_limit_exceeded", message: "slow down" }]);
  assert.deepEqual(d, [{ type: "error", message: "slow down", code: "rate_limit_exceeded" }]);
});

Deno.test("responses parser: summary parts of one reasoning item are joined by a blank line", () => {
  const d = parse([
    { type: "response.output_item.added", item: { id: "rs", type: "reasoning", summary: [] } },
    {
      type: "response.reasoning_summary_text.delta",
      item_id: "rs",
      summary_index: 0,
      delta: "one",
    },
    {
      type: "response.reasoning_summary_text.delta",
      item_id: "rs",
      summary_index: 1,
      delta: "two",
    },
    {
      type: "response.output_item.done",
      item: { id: "rs", type: "reasoning", summary: [], encrypted_content: "E" },
    },
  ]);
  const text = d.flatMap((x) => (x.type === "thinking" ? [x.thinking] : [])).join("");
  assert.equal(text, "one\n\ntwo");
  assert.deepEqual(d.at(-1), {
    type: "thinking",
    thinking: "",
    fidelity: { id: "rs", encrypted_content: "E", channel: "summary" },
  });
});
