import assert from "node:assert/strict";
import {
  buildChatRequest,
  createChatParser,
  openaiChatProtocol,
} from "../../lib/models/protocols/openai_chat.ts";
import type { WireDelta, WireRequest } from "../../lib/models/wire.ts";
import type { CompleteMessage } from "../../lib/protocol/types.ts";

type Json = Record<string, unknown>;

function req(
  history: CompleteMessage[],
  over: Partial<WireRequest> = {},
  base = "https://api.example.com/v1",
): WireRequest {
  return {
    endpoint: {
      provider: "openrouter",
      model_id: "x/model",
      protocol: "openai-chat",
      base_url: base,
    },
    system_prompt: "SYS",
    tools: [],
    history,
    ...over,
  };
}

const user = (text: string): CompleteMessage => ({
  type: "text",
  role: "user",
  text,
  stop_reason: "completed",
});

Deno.test("chat request: URL, streaming options, system first, tools, no auth without a key", () => {
  const r = buildChatRequest(req([user("hi")], {
    tools: [{ name: "ls", description: "list", parameters: { type: "object", properties: {} } }],
    max_tokens: 1000,
    thinking_level: "high",
  }));
  assert.equal(r.url, "https://api.example.com/v1/chat/completions");
  assert.equal(r.headers.authorization, undefined);
  const body = JSON.parse(r.body) as Json;
  assert.equal(body.model, "x/model");
  assert.equal(body.stream, true);
  assert.deepEqual(body.stream_options, { include_usage: true });
  assert.deepEqual((body.messages as Json[])[0], { role: "system", content: "SYS" });
  assert.deepEqual((body.messages as Json[])[1], { role: "user", content: "hi" });
  assert.deepEqual(body.tools, [{
    type: "function",
    function: { name: "ls", description: "list", parameters: { type: "object", properties: {} } },
  }]);
  assert.equal(body.max_completion_tokens, 1000);
  assert.equal(body.reasoning_effort, "high");
  assert.equal("tool_choice" in body, false);
});

Deno.test("chat request: Bearer auth with a key; max_tokens for DeepSeek and local servers; no tools key when empty", () => {
  const withKey = req([user("hi")], { max_tokens: 50 });
  withKey.endpoint.api_key = "sk-1";
  const r = buildChatRequest(withKey);
  assert.equal(r.headers.authorization, "Bearer sk-1");
  assert.equal("tools" in JSON.parse(r.body), false);
  const ds = req([user("hi")], { max_tokens: 50 });
  ds.endpoint.provider = "deepseek";
  assert.equal(JSON.parse(buildChatRequest(ds).body).max_tokens, 50);
  const local = buildChatRequest(req([user("hi")], { max_tokens: 60 }, "http://127.0.0.1:8080/v1"));
  assert.equal(JSON.parse(local.body).max_tokens, 60);
});

Deno.test("chat replay: one assistant message per turn with reasoning in its own field, tool calls and tool results", () => {
  const details = [{
    type: "reasoning.text",
    text: "plan",
    signature: "SIG",
    format: "anthropic-claude-v1",
    index: 0,
  }];
  const body = JSON.parse(
    buildChatRequest(req([
      user("go"),
      {
        type: "thinking",
        role: "assistant",
        thinking: "plan",
        fidelity: { reasoning_field: "reasoning", reasoning_details: details },
        stop_reason: "completed",
      },
      { type: "text", role: "assistant", text: "Calling.", stop_reason: "completed" },
      {
        type: "tool_call",
        role: "assistant",
        name: "ls",
        arguments: '{"p":"."}',
        tool_call_id: "call_1#2",
        stop_reason: "completed",
      },
      {
        type: "tool_call_output",
        role: "user",
        output: "a.txt",
        images: ["data:image/png;base64,AAAA"],
        tool_call_id: "call_1#2",
        stop_reason: "completed",
      },
    ])).body,
  ) as Json;
  const msgs = body.messages as Json[];
  assert.deepEqual(msgs[2], {
    role: "assistant",
    content: "Calling.",
    reasoning: "plan",
    reasoning_details: details,
    tool_calls: [{
      id: "call_1",
      type: "function",
      function: { name: "ls", arguments: '{"p":"."}' },
    }],
  });
  assert.deepEqual(msgs[3], { role: "tool", tool_call_id: "call_1", content: "a.txt" });
  assert.deepEqual(msgs[4], {
    role: "user",
    content: [
      { type: "text", text: "Images returned by tool call call_1:" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
    ],
  });
});

Deno.test("chat replay: thinking of unknown origin goes back in both reasoning fields", () => {
  const body = JSON.parse(
    buildChatRequest(req([
      user("go"),
      {
        type: "thinking",
        role: "assistant",
        thinking: "t",
        fidelity: { signature: "x" },
        stop_reason: "completed",
      },
      { type: "text", role: "assistant", text: "a", stop_reason: "completed" },
    ])).body,
  ) as Json;
  const a = (body.messages as Json[])[2]!;
  assert.equal(a.reasoning_content, "t");
  assert.equal(a.reasoning, "t");
});

Deno.test("chat replay: user images become content parts", () => {
  const body = JSON.parse(
    buildChatRequest(req([
      user("look"),
      { type: "image_url", role: "user", image_url: "https://x/y.png", stop_reason: "completed" },
    ])).body,
  ) as Json;
  assert.deepEqual((body.messages as Json[])[1], {
    role: "user",
    content: [{ type: "text", text: "look" }, {
      type: "image_url",
      image_url: { url: "https://x/y.png" },
    }],
  });
});

function parse(chunks: unknown[]): WireDelta[] {
  const p = createChatParser();
  const out: WireDelta[] = [];
  for (const c of chunks) {
    out.push(...p.push({ data: typeof c === "string" ? c : JSON.stringify(c) }));
  }
  out.push(...p.end());
  return out;
}

const tc = (index: number, fields: Json) => ({
  choices: [{ delta: { tool_calls: [{ index, ...fields }] } }],
});

Deno.test("chat parser: a tool call without an id falls back to the function name", () => {
  const d = parse([tc(0, { function: { name: "get_weather", arguments: '{"c":1}' } }), {
    choices: [{ delta: {}, finish_reason: "tool_calls" }],
  }]);
  assert.deepEqual(d.find((x) => x.type === "tool_call_start"), {
    type: "tool_call_start",
    key: "0:0",
    id: "get_weather",
    name: "get_weather",
  });
});

Deno.test("chat parser: a new id on a reused index starts a new call; a new index ends a complete one", () => {
  const d = parse([
    tc(0, { id: "a", function: { name: "f", arguments: "{}" } }),
    tc(0, { id: "b", function: { name: "g", arguments: "{}" } }),
    tc(1, { id: "c", function: { name: "h", arguments: "{}" } }),
  ]);
  assert.deepEqual(
    d.filter((x) => x.type.startsWith("tool_call_") && x.type !== "tool_call_args").map((x) =>
      x.type
    ),
    [
      "tool_call_start",
      "tool_call_end",
      "tool_call_start",
      "tool_call_end",
      "tool_call_start",
      "tool_call_end",
    ],
  );
});

Deno.test("chat parser: interleaved argument deltas of parallel calls stay with their call", () => {
  const d = parse([
    tc(0, { id: "a", function: { name: "f", arguments: '{"x":' } }),
    tc(1, { id: "b", function: { name: "g", arguments: '{"y":' } }),
    tc(0, { function: { arguments: "1}" } }),
    tc(1, { function: { arguments: "2}" } }),
  ]);
  const args = new Map<string, string>();
  for (const x of d) {
    if (x.type === "tool_call_args") args.set(x.key, (args.get(x.key) ?? "") + x.args);
  }
  assert.deepEqual([...args.values()].map((s) => JSON.parse(s)), [{ x: 1 }, { y: 2 }]);
});

Deno.test("chat parser: bad JSON and bad shapes become malformed errors, [DONE] and comments nothing", () => {
  const d = parse(["{nope", { choices: "x" }, "[DONE]"]);
  assert.deepEqual(d.map((x) => x.type === "error" && x.code), [
    "penguin_malformed",
    "penguin_malformed",
  ]);
});

Deno.test("chat parser: DeepSeek prompt_cache_hit_tokens count as cached input", () => {
  const d = parse([{
    choices: [],
    usage: { prompt_tokens: 100, completion_tokens: 7, prompt_cache_hit_tokens: 60 },
  }]);
  assert.deepEqual(d, [{ type: "usage", cache_read: 60, cache_write: 40, output: 7 }]);
});

Deno.test("consecutive user texts are sent as one message with blank lines between them", () => {
  const body = JSON.parse(
    openaiChatProtocol.buildRequest({
      endpoint: { provider: "p", model_id: "m", protocol: "openai-chat", base_url: "http://x" },
      system_prompt: "",
      tools: [],
      history: [
        {
          type: "text",
          role: "user",
          text: "[background_task_done]\nfinished",
          sender: "harness",
          stop_reason: "completed",
        },
        { type: "text", role: "user", text: "next task", stop_reason: "completed" },
      ],
    }).body,
  );
  assert.deepEqual(body.messages, [{
    role: "user",
    content: "[background_task_done]\nfinished\n\nnext task",
  }]);
});

const call = (i: number): CompleteMessage => ({
  type: "tool_call",
  role: "assistant",
  name: "exec_command",
  arguments: JSON.stringify({ cmd: `echo ${i}` }),
  tool_call_id: `call_${i}`,
  stop_reason: "completed",
});
const output = (i: number): CompleteMessage => ({
  type: "tool_call_output",
  role: "user",
  output: `${i}\n`,
  tool_call_id: `call_${i}`,
  stop_reason: "completed",
});
/** The body of the same history with none of its messages seen before. */
const freshBody = (history: CompleteMessage[]) =>
  buildChatRequest(req(structuredClone(history))).body;

Deno.test("chat request: a growing history reuses the messages converted for earlier requests, and the body is what a fresh conversion sends", () => {
  // The engine's turn loop: each request is the committed history plus the new input
  // (a copy), then the input and the model's output join the history.
  const committed: CompleteMessage[] = [user("go")];
  let input: CompleteMessage[] = [];
  const bodies: Json[][] = [];
  for (let i = 0; i < 6; i++) {
    const history = [...committed, ...input.map((m) => ({ ...m }))];
    const r = buildChatRequest(req(history));
    assert.equal(r.body, freshBody(history));
    bodies.push(r.json!.messages as Json[]);
    committed.push(...input, call(i));
    input = [output(i)];
  }
  // The first user message and the first turn's call were converted once, then reused.
  for (const messages of bodies.slice(2)) {
    assert.equal(messages[1], bodies[1]![1]);
    assert.equal(messages[2], bodies[2]![2]);
  }
  assert.deepEqual(bodies.at(-1)!.map((m) => m.role), [
    "system",
    "user",
    ...Array.from({ length: 5 }, () => ["assistant", "tool"]).flat(),
  ]);
});

Deno.test("chat request: a history that is not an extension of the one before is converted afresh", () => {
  const u2: CompleteMessage = user("second");
  const base: CompleteMessage[] = [user("go"), call(0), u2];
  assert.equal(buildChatRequest(req(base)).body, freshBody(base));
  // The remembered call run goes on: the assistant side continues past it.
  const longer = [base[0]!, base[1]!, call(1), output(0), output(1)];
  assert.equal(buildChatRequest(req(longer)).body, freshBody(longer));
  // The run after the remembered ones gains a message (two user texts become one).
  const joined = [base[0]!, base[1]!, u2, user("third")];
  const r = buildChatRequest(req(joined));
  assert.equal(r.body, freshBody(joined));
  assert.deepEqual((r.json!.messages as Json[]).at(-1), {
    role: "user",
    content: "second\n\nthird",
  });
  // A different message in the middle.
  const other = [base[0]!, call(7), u2];
  assert.equal(buildChatRequest(req(other)).body, freshBody(other));
  // A shorter history.
  assert.equal(buildChatRequest(req([base[0]!])).body, freshBody([base[0]!]));
});
