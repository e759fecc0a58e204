import assert from "node:assert/strict";
import { cannedRequest, collectEach, parseSse, translateDeltas, withReplies } from "./_support.ts";
import type {
  CompleteMessage,
  ThinkingMessage,
  ToolCallMessage,
} from "../../lib/protocol/types.ts";
import { classifyStreamError } from "../../lib/models/classify.ts";
import type { WireDelta, WireRequest } from "../../lib/models/wire.ts";
import {
  ANTHROPIC_DEFAULT_MAX_TOKENS,
  anthropicMessagesProtocol as mod,
} from "../../lib/models/protocols/anthropic_messages.ts";
import { anthropicMessagesEncoder as encoder } from "../support/model_server/encode_anthropic_messages.ts";
import { item, type ScriptedTurn, turn } from "../support/model_server/script.ts";
import { assertSaneFixture, fin, of, providerFixtures, usageOf, use } from "./_recorded.ts";
import type { Json, Parsed } from "./_recorded.ts";

const RECORDED = providerFixtures("anthropic-messages", mod);
const { names: FIXTURES, load } = RECORDED;

/** The `data:` objects of an SSE fixture, for expectations derived from the recording. */
function sseData(raw: string): Json[] {
  return raw.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
}

for (const name of FIXTURES) {
  Deno.test(`anthropic fixture ${name} parses to complete JSON, a finish or error, sane usage`, () => {
    const p = assertSaneFixture(RECORDED, name);
    if (p && name.endsWith(".sse")) {
      assert.deepEqual(parseSse(mod, p.raw, 7), p.deltas, "chunking changes nothing");
    }
  });
}

const EXPECT: Record<string, (p: Parsed) => void> = {
  "text-sonnet45.sse": ({ messages, deltas }) => {
    assert.deepEqual(messages.map((m) => m.type), ["text"]);
    assert.equal(of(messages, "text")[0]!.text, "- Captain\n- Scoop");
    assert.deepEqual(deltas.find((d) => d.type === "finish"), fin("stop", "end_turn"));
    assert.deepEqual(usageOf(deltas), use(0, 17, 10));
  },
  "thinking-signature-sonnet4.sse": ({ messages, raw }) => {
    const sig = sseData(raw).map((d) => (d.delta as Json | undefined)?.signature).find((s) => s);
    assert.deepEqual(messages.map((m) => m.type), ["thinking", "text"]);
    const thinking = of(messages, "thinking")[0]!;
    assert.ok(thinking.thinking.length > 100);
    assert.deepEqual(thinking.fidelity, { signature: sig });
  },
  "redacted-thinking-sonnet45.sse": ({ messages, raw }) => {
    const data = sseData(raw).map((d) => (d.content_block as Json | undefined)?.data).filter((s) =>
      s
    );
    assert.equal(data.length, 2);
    assert.deepEqual(messages.map((m) => m.type), ["thinking", "thinking", "text"]);
    assert.deepEqual(
      of(messages, "thinking").map((t) => [t.thinking, t.fidelity]),
      data.map((d) => ["", { redacted: d }]),
    );
  },
  "parallel-tool-use-sonnet4.sse": ({ messages, deltas }) => {
    assert.deepEqual(messages.map((m) => m.type), ["text", "tool_call", "tool_call"]);
    const calls = of(messages, "tool_call");
    assert.deepEqual(calls.map((c) => [c.name, JSON.parse(c.arguments)]), [
      ["add", { a: 2, b: 3 }],
      ["multiply", { a: 2, b: 3 }],
    ]);
    assert.deepEqual(deltas.find((d) => d.type === "finish"), fin("tool_call", "tool_use"));
  },
  "thinking-then-tool-use-sonnet4.sse": ({ messages }) => {
    assert.deepEqual(messages.map((m) => m.type), ["thinking", "tool_call"]);
    assert.equal(typeof of(messages, "thinking")[0]!.fidelity?.signature, "string");
    assert.deepEqual(JSON.parse(of(messages, "tool_call")[0]!.arguments), {
      location: "Florence, Italy",
    });
  },
  "parallel-tool-use-empty-input-haiku45.sse": ({ messages }) => {
    const calls = of(messages, "tool_call");
    assert.deepEqual(calls.map((c) => c.arguments), ["{}", "{}"]);
    assert.notEqual(calls[0]!.tool_call_id, calls[1]!.tool_call_id);
  },
  "cache-read-compaction-block-sonnet46.sse": ({ messages, deltas }) => {
    assert.deepEqual(messages.map((m) => m.type), ["text"], "the compaction block is skipped");
    assert.equal(of(messages, "text")[0]!.text, "Hello! 👋");
    // usage.iterations: compaction (100 in, 55096 cached, 83 out) + message (181 in, 8 out)
    assert.deepEqual(usageOf(deltas), use(55096, 281, 91));
  },
  "error-overloaded-single-event.sse": ({ deltas }) => {
    assert.deepEqual(deltas, [{
      type: "error",
      message: "Overloaded",
      code: "overloaded_error",
      status: 529,
    }]);
    assert.equal(classifyStreamError(deltas[0] as { message: string }).status, "timeout");
  },
  "nonstream-thinking-tool-use-sonnet4.json": ({ messages, deltas, raw }) => {
    const body = JSON.parse(raw) as { content: Json[] };
    assert.deepEqual(messages.map((m) => m.type), ["thinking", "tool_call"]);
    assert.deepEqual(of(messages, "thinking")[0]!.fidelity, {
      signature: body.content[0]!.signature,
    });
    assert.equal(of(messages, "tool_call")[0]!.tool_call_id, body.content[1]!.id);
    assert.deepEqual(usageOf(deltas), use(0, 424, 118));
  },
  "error-400-invalid-request.json": ({ raw }) => {
    const err = mod.parseError(400, raw);
    assert.equal(err.code, "invalid_request_error");
    assert.match(err.message, /effort level 'xhigh'/);
  },
};

Deno.test("anthropic fixture expectations name only existing files and all hold", () => {
  for (const [name, check] of Object.entries(EXPECT)) {
    assert.ok(FIXTURES.includes(name), `fixture ${name} exists`);
    check(
      name.startsWith("error-") && name.endsWith(".json") ? RECORDED.rawOnly(name) : load(name),
    );
  }
});

function request(history: CompleteMessage[], extra: Partial<WireRequest> = {}): Json {
  const req: WireRequest = {
    endpoint: {
      provider: "anthropic",
      model_id: "claude-sonnet-4-6",
      protocol: "anthropic-messages",
      base_url: "https://api.anthropic.com",
      api_key: "sk-test",
    },
    system_prompt: "",
    tools: [],
    history,
    ...extra,
  };
  return JSON.parse(mod.buildRequest(req).body);
}

const user = (text: string): CompleteMessage => ({
  type: "text",
  role: "user",
  text,
  stop_reason: "completed",
});
const output = (id: string, out: string, images?: string[]): CompleteMessage => ({
  type: "tool_call_output",
  role: "user",
  output: out,
  tool_call_id: id,
  stop_reason: "completed",
  ...(images ? { images } : {}),
});

Deno.test("anthropic replay sends a recorded thinking signature and tool_use back verbatim", () => {
  const { messages } = load("thinking-then-tool-use-sonnet4.sse");
  const [thinking, call] = messages as [ThinkingMessage, ToolCallMessage];
  const body = request([user("weather?"), ...messages, output(call.tool_call_id, "sunny")]);
  const msgs = body.messages as { role: string; content: Json[] }[];
  assert.deepEqual(msgs.map((m) => m.role), ["user", "assistant", "user"]);
  assert.deepEqual(msgs[1]!.content, [
    { type: "thinking", thinking: thinking.thinking, signature: thinking.fidelity!.signature },
    {
      type: "tool_use",
      id: call.tool_call_id,
      name: "weather",
      input: { location: "Florence, Italy" },
    },
  ]);
  assert.deepEqual(msgs[2]!.content, [{
    type: "tool_result",
    tool_use_id: call.tool_call_id,
    content: [{ type: "text", text: "sunny" }],
    cache_control: { type: "ephemeral" },
  }]);
});

Deno.test("anthropic replay turns redacted thinking (ours and PenguinHarness's) into redacted_thinking", () => {
  const { messages, raw } = load("redacted-thinking-sonnet45.sse");
  const data = sseData(raw).map((d) => (d.content_block as Json | undefined)?.data).filter((s) =>
    s
  );
  const legacy: CompleteMessage = {
    type: "thinking",
    role: "assistant",
    thinking: "_REDACTED_THINKING",
    fidelity: { signature: "opaque-data" },
    stop_reason: "completed",
  };
  const body = request([user("hi"), ...messages, legacy]);
  const content = (body.messages as { content: Json[] }[])[1]!.content;
  assert.deepEqual(content.map((b) => b.type), [
    "redacted_thinking",
    "redacted_thinking",
    "text",
    "redacted_thinking",
  ]);
  assert.deepEqual(content.map((b) => b.data).filter((d) => d), [...data, "opaque-data"]);
});

Deno.test("anthropic request: endpoint, headers only with a key, defaults and tools", () => {
  const ep = {
    provider: "anthropic",
    model_id: "claude-sonnet-4-6",
    protocol: "anthropic-messages" as const,
    base_url: "https://proxy.example/v1/",
  };
  const base = { system_prompt: "", tools: [], history: [user("hi")] };
  const noKey = mod.buildRequest({ endpoint: ep, ...base });
  assert.equal(noKey.url, "https://proxy.example/v1/messages");
  assert.equal(noKey.headers["x-api-key"], undefined);
  assert.equal(noKey.headers["anthropic-version"], "2023-06-01");
  const keyed = mod.buildRequest({
    endpoint: { ...ep, base_url: "https://api.anthropic.com", api_key: "k1" },
    ...base,
  });
  assert.equal(keyed.url, "https://api.anthropic.com/v1/messages");
  assert.equal(keyed.headers["x-api-key"], "k1");
  const body = JSON.parse(noKey.body);
  assert.equal(body.stream, true);
  assert.equal(body.max_tokens, ANTHROPIC_DEFAULT_MAX_TOKENS);
  assert.equal("system" in body || "tools" in body || "thinking" in body, false);
  const full = request([user("hi")], {
    system_prompt: "be brief",
    max_tokens: 5000,
    tools: [{
      name: "ls",
      description: "list",
      parameters: { type: "object", properties: { p: {} } },
    }, {
      name: "noop",
      description: "nothing",
    }],
  });
  assert.equal(full.max_tokens, 5000);
  assert.deepEqual(full.system, [{
    type: "text",
    text: "be brief",
    cache_control: { type: "ephemeral" },
  }]);
  assert.deepEqual(full.tools, [
    { name: "ls", description: "list", input_schema: { type: "object", properties: { p: {} } } },
    { name: "noop", description: "nothing", input_schema: { type: "object", properties: {} } },
  ]);
});

Deno.test("anthropic request: thinking levels map to disabled, adaptive effort, or a budget on old models", () => {
  assert.deepEqual(request([user("x")], { thinking_level: "none" }).thinking, { type: "disabled" });
  const high = request([user("x")], { thinking_level: "high" });
  assert.deepEqual(high.thinking, { type: "adaptive", display: "summarized" });
  assert.deepEqual(high.output_config, { effort: "high" });
  const old = JSON.parse(
    mod.buildRequest({
      endpoint: {
        provider: "a",
        model_id: "claude-sonnet-4-5-20250929",
        protocol: "anthropic-messages",
        base_url: "http://x",
      },
      system_prompt: "",
      tools: [],
      history: [user("x")],
      thinking_level: "medium",
      max_tokens: 8000,
    }).body,
  );
  assert.equal(old.thinking.type, "enabled");
  assert.ok(old.thinking.budget_tokens >= 1024 && old.thinking.budget_tokens < 8000);
  assert.equal(old.output_config, undefined);
});

Deno.test("anthropic request merges same-role runs, puts tool_results first, dedupes ids, drops unsigned thinking", () => {
  const a = (m: Omit<CompleteMessage, "role" | "stop_reason">) =>
    ({ role: "assistant", stop_reason: "completed", ...m }) as CompleteMessage;
  const body = request([
    user("go"),
    a({ type: "thinking", thinking: "no signature" }),
    a({ type: "text", text: "calling" }),
    a({ type: "tool_call", name: "read", arguments: '{"p":1}', tool_call_id: "read" }),
    a({ type: "tool_call", name: "read", arguments: "not json", tool_call_id: "read" }),
    a({ type: "tool_call", name: "x", arguments: "{}", tool_call_id: "functions.x:0" }),
    user("also this"),
    output("read", "one"),
    output("read", "", ["data:image/png;base64,AAAA"]),
    { ...output("functions.x:0", "boom"), stop_reason: "failed" },
  ]);
  const msgs = body.messages as { role: string; content: Json[] }[];
  assert.deepEqual(msgs.map((m) => m.role), ["user", "assistant", "user"]);
  assert.deepEqual(msgs[1]!.content.map((b) => [b.type, b.id ?? b.text, b.input]), [
    ["text", "calling", undefined],
    ["tool_use", "read", { p: 1 }],
    ["tool_use", "read_2", {}],
    ["tool_use", "functions_x_0", {}],
  ]);
  const last = msgs[2]!.content;
  assert.deepEqual(last.map((b) => [b.type, b.tool_use_id ?? b.text]), [
    ["tool_result", "read"],
    ["tool_result", "read_2"],
    ["tool_result", "functions_x_0"],
    ["text", "also this"],
  ]);
  assert.deepEqual(last[1]!.content, [{
    type: "image",
    source: { type: "base64", media_type: "image/png", data: "AAAA" },
  }]);
  assert.equal(last[2]!.is_error, true);
  assert.deepEqual(last[3]!.cache_control, { type: "ephemeral" });
});

function roundTrip(t: ScriptedTurn): { deltas: WireDelta[]; messages: CompleteMessage[] } {
  const deltas = parseSse(mod, encoder.encodeTurn(t, "claude-test").join(""));
  return { deltas, messages: translateDeltas(deltas).messages };
}

Deno.test("anthropic encoder output parses back to the scripted turn", () => {
  const { deltas, messages } = roundTrip({
    items: [
      item.thinking("let me think about it", { signature: "sig-1" }),
      item.thinking("", { encrypted: "redacted-blob" }),
      item.text("Here you go, a longer answer."),
      item.toolCall("ls", { path: "/tmp" }, { id: "toolu_a" }),
      item.toolCall("pwd"),
    ],
    usage: { input: 120, cached_input: 100, output: 30 },
  });
  assert.deepEqual(messages.map((m) => [m.type, m.fidelity]), [
    ["thinking", { signature: "sig-1" }],
    ["thinking", { redacted: "redacted-blob" }],
    ["text", undefined],
    ["tool_call", undefined],
    ["tool_call", undefined],
  ]);
  assert.equal(of(messages, "thinking")[0]!.thinking, "let me think about it");
  assert.equal(of(messages, "text")[0]!.text, "Here you go, a longer answer.");
  assert.deepEqual(of(messages, "tool_call").map((c) => [c.tool_call_id, c.name, c.arguments]), [
    ["toolu_a", "ls", '{"path":"/tmp"}'],
    ["toolu_4", "pwd", "{}"],
  ]);
  assert.deepEqual(usageOf(deltas), use(100, 20, 30));
  assert.deepEqual(deltas.at(-1), fin("tool_call", "tool_use"));
});

Deno.test("anthropic encoder stream errors and HTTP error bodies parse to their codes", () => {
  const { deltas } = roundTrip(turn.streamError("Overloaded", "overloaded_error", "partial"));
  assert.deepEqual(deltas.at(-1), {
    type: "error",
    message: "Overloaded",
    code: "overloaded_error",
    status: 529,
  });
  assert.equal(deltas.some((d) => d.type === "finish"), false);
  const body = JSON.stringify(encoder.httpErrorBody(401, "invalid x-api-key"));
  assert.deepEqual(mod.parseError(401, body), {
    message: "invalid x-api-key",
    code: "authentication_error",
  });
  assert.deepEqual(mod.parseError(502, "<html>bad gateway</html>"), {
    message: "<html>bad gateway</html>",
  });
});

Deno.test("anthropic parser reports unparsable data as malformed instead of throwing", () => {
  const parser = mod.createParser();
  const out = parser.push({ event: "content_block_delta", data: "{not json" });
  assert.equal(out.length, 1);
  assert.equal(out[0]!.type, "error");
  assert.equal(
    classifyStreamError(out[0] as { message: string; code?: string }).status,
    "malformed",
  );
});

Deno.test("anthropic end to end: streamModel over a recorded stream and recorded errors", async () => {
  const fixture = RECORDED.text;
  await withReplies([
    { status: 200, type: "text/event-stream", body: fixture("thinking-then-tool-use-sonnet4.sse") },
    { status: 200, type: "text/event-stream", body: fixture("error-overloaded-single-event.sse") },
    { status: 400, type: "application/json", body: fixture("error-400-invalid-request.json") },
  ], async (base, seen) => {
    const req = cannedRequest(
      base,
      {
        provider: "anthropic",
        model_id: "claude-sonnet-4-6",
        protocol: "anthropic-messages",
        api_key: "k",
      },
      [user("weather in Florence?")],
      "sys",
    );
    const runs = await collectEach(req, 3, { idleTimeoutMs: 10_000 });
    const outcomes = runs.map((r) => r.outcome);
    const done = runs[0]!.completes;
    assert.deepEqual(done.map((m) => m.type), ["thinking", "tool_call"]);
    assert.equal(typeof (done[0] as ThinkingMessage).fidelity?.signature, "string");
    assert.deepEqual(outcomes.map((o) => [o.status, o.finish_reason]), [
      ["completed", "tool_call"],
      ["timeout", undefined],
      ["failed", undefined],
    ]);
    assert.match(outcomes[2]!.error_message ?? "", /invalid_request_error/);
    assert.equal(new URL(seen[0]!.url).pathname, "/v1/messages");
    assert.equal(seen[0]!.headers.get("x-api-key"), "k");
    assert.equal((await seen[0]!.json()).stream, true);
  });
});

Deno.test("anthropic request maps user media: images, PDFs and text as documents, others dropped", () => {
  const data = (mime_type: string, text: string): CompleteMessage => ({
    type: "inline_data",
    role: "user",
    data: btoa(text),
    mime_type,
    stop_reason: "completed",
  });
  const body = request([
    {
      type: "image_url",
      role: "user",
      image_url: "https://x.test/a.png",
      stop_reason: "completed",
    },
    data("application/pdf", "%PDF"),
    data("text/plain", "notes"),
    data("application/zip", "PK"),
  ]);
  const content = (body.messages as { content: Json[] }[])[0]!.content;
  assert.deepEqual(content.map((b) => [b.type, (b.source as Json).type]), [
    ["image", "url"],
    ["document", "base64"],
    ["document", "text"],
  ]);
  assert.equal((content[2]!.source as Json).data, "notes");
});
