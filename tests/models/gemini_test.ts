import assert from "node:assert/strict";
import {
  type CannedReply,
  cannedRequest,
  collectEach,
  parseSse,
  translateDeltas,
  withReplies,
} from "./_support.ts";

const withGeminiServer = (
  replies: CannedReply[],
  fn: (base: string, seen: Request[]) => Promise<void>,
) => withReplies(replies, fn, "/v1beta");
import type { CompleteMessage, ToolCallMessage } from "../../lib/protocol/types.ts";
import { isAuthCode } from "../../lib/models/classify.ts";
import type { WireDelta, WireRequest } from "../../lib/models/wire.ts";
import { GEMINI_SKIP_SIGNATURE, geminiProtocol as mod } from "../../lib/models/protocols/gemini.ts";
import { geminiEncoder as encoder } from "../support/model_server/encode_gemini.ts";
import { item, type ScriptedTurn } from "../support/model_server/script.ts";
import { assertSaneFixture, fin, of, providerFixtures, usageOf, use } from "./_recorded.ts";
import type { Json, Parsed } from "./_recorded.ts";

const RECORDED = providerFixtures("gemini", mod);
const { names: FIXTURES, load } = RECORDED;

/** Every part of a recorded stream or body, in order, for expectations derived from the recording. */
function rawParts(p: Parsed, name: string): Json[] {
  const chunks: Json[] = name.endsWith(".sse")
    ? p.raw.split("\r\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)))
    : [JSON.parse(p.raw)].flat();
  return chunks.flatMap((c) => {
    const cand = (c.candidates as Json[] | undefined)?.[0];
    return ((cand?.content as Json | undefined)?.parts as Json[] | undefined) ?? [];
  });
}

const finishOf = (d: WireDelta[]) => d.find((x) => x.type === "finish");

for (const name of FIXTURES) {
  Deno.test(`gemini fixture ${name} parses to complete JSON, a finish or error, sane usage`, () => {
    const p = assertSaneFixture(RECORDED, name);
    if (p && name.endsWith(".sse")) {
      assert.ok(p.raw.includes("\r\n\r\n"), "recorded with CRLF framing");
      assert.deepEqual(
        parseSse(mod, p.raw, 7),
        p.deltas,
        "chunking (split CRLFs included) changes nothing",
      );
    }
  });
}

const signatures = (p: Parsed, name: string) =>
  rawParts(p, name).map((x) => x.thoughtSignature).filter((s) => s !== undefined);

const EXPECT: Record<string, (p: Parsed, name: string) => void> = {
  "text-gemini20flash.sse": ({ messages, deltas }) => {
    assert.deepEqual(messages.map((m) => m.type), ["text"]);
    assert.equal(of(messages, "text")[0]!.text, "The capital of France is Paris.\n");
    assert.deepEqual(finishOf(deltas), fin("stop", "STOP"));
    assert.deepEqual(usageOf(deltas), use(0, 13, 8));
  },
  "thinking-thought-summary-gemini25pro.sse": (p, name) => {
    const parts = rawParts(p, name);
    const texts = of(p.messages, "text");
    assert.deepEqual(p.messages.map((m) => m.type), ["thinking", "text", "text"]);
    assert.equal(
      of(p.messages, "thinking")[0]!.thinking,
      parts.filter((x) => x.thought).map((x) => x.text).join(""),
    );
    assert.deepEqual(texts[0]!.fidelity, { thought_signature: signatures(p, name)[0] });
    assert.equal(
      texts[0]!.text,
      parts.find((x) => x.thoughtSignature)!.text,
      "the signed part stands alone",
    );
    assert.equal(texts[1]!.fidelity, undefined);
    assert.equal(
      texts.map((t) => t.text).join(""),
      parts.filter((x) => !x.thought).map((x) => x.text).join(""),
    );
  },
  "parallel-function-calls-gemini31pro.sse": (p, name) => {
    const calls = of(p.messages, "tool_call");
    assert.deepEqual(calls.map((c) => [c.tool_call_id, c.name, JSON.parse(c.arguments)]), [
      ["8hd01vsf", "add", { a: 2, b: 3 }],
      ["k0srpqrc", "multiply", { a: 2, b: 3 }],
    ]);
    assert.deepEqual(calls.map((c) => c.fidelity), [
      { thought_signature: signatures(p, name)[0] },
      undefined,
    ]);
    assert.deepEqual(finishOf(p.deltas), fin("tool_call", "STOP"));
  },
  "thinking-function-call-gemini25flash.sse": (p, name) => {
    assert.deepEqual(p.messages.map((m) => m.type), ["thinking", "tool_call"]);
    const call = of(p.messages, "tool_call")[0]!;
    assert.equal(call.tool_call_id, "weather", "no wire id: the function name is the id");
    assert.deepEqual(call.fidelity, { thought_signature: signatures(p, name)[0] });
  },
  "function-call-thought-signature-gemini3pro.sse": (p, name) => {
    const [call] = of(p.messages, "tool_call");
    assert.deepEqual([call!.name, call!.arguments, call!.fidelity], [
      "get_country",
      "{}",
      { thought_signature: signatures(p, name)[0] },
    ]);
    assert.deepEqual(usageOf(p.deltas), use(0, 29, 212));
  },
  "json-array-stream-thinking-function-calls-gemini25flash.json": (p, name) => {
    assert.deepEqual(p.messages.map((m) => m.type), ["thinking", "tool_call"]);
    assert.deepEqual(of(p.messages, "tool_call")[0]!.fidelity, {
      thought_signature: signatures(p, name)[0],
    });
  },
  "nonstream-parallel-function-calls-gemini31pro.json": (p) => {
    assert.deepEqual(of(p.messages, "tool_call").map((c) => [c.tool_call_id, c.name]), [
      ["wxvlv0tv", "add"],
      ["75p2opbh", "multiply"],
    ]);
  },
  "nonstream-cached-content-gemini25flash.json": ({ deltas, messages }) => {
    assert.equal(of(messages, "text")[0]!.text, "Paris.");
    assert.deepEqual(usageOf(deltas), use(3512, 8, 44));
  },
  "nonstream-blocked-prompt-model-armor-vertex.json": ({ deltas, messages }) => {
    assert.deepEqual(messages, []);
    assert.deepEqual(finishOf(deltas), fin("content_filter", "MODEL_ARMOR"));
    const err = deltas.find((d) => d.type === "error");
    assert.equal(err?.type === "error" && err.code, "MODEL_ARMOR");
    assert.match(err?.type === "error" ? err.message : "", /Prompt Injection/);
  },
  "stream-prompt-blocked-safety-vertex.sse": ({ deltas }) => {
    assert.deepEqual(deltas.map((d) => d.type), ["finish", "error"]);
    assert.equal(deltas[1]?.type === "error" && deltas[1].code, "SAFETY");
  },
  "error-400-api-key-invalid.json": ({ raw }) => {
    const err = mod.parseError(400, raw);
    assert.deepEqual(err, {
      message: "API key not valid. Please pass a valid API key.",
      code: "API_KEY_INVALID",
    });
    assert.ok(isAuthCode(err.code), "the driver classifies it as auth");
  },
};

Deno.test("gemini fixture expectations name only existing files and all hold", () => {
  for (const [name, check] of Object.entries(EXPECT)) {
    assert.ok(FIXTURES.includes(name), `fixture ${name} exists`);
    check(
      name.startsWith("error-") ? RECORDED.rawOnly(name) : load(name),
      name,
    );
  }
});

function build(
  history: CompleteMessage[],
  extra: Partial<WireRequest> = {},
  model = "gemini-3.1-pro-preview",
) {
  return mod.buildRequest({
    endpoint: {
      provider: "google",
      model_id: model,
      protocol: "gemini",
      base_url: "https://generativelanguage.googleapis.com/v1beta",
      api_key: "AIza-test",
    },
    system_prompt: "",
    tools: [],
    history,
    ...extra,
  });
}
const contentsOf = (history: CompleteMessage[], model?: string) =>
  JSON.parse(build(history, {}, model).body).contents as { role: string; parts: Json[] }[];

const user = (text: string): CompleteMessage => ({
  type: "text",
  role: "user",
  text,
  stop_reason: "completed",
});
const output = (id: string, out: string): CompleteMessage => ({
  type: "tool_call_output",
  role: "user",
  output: out,
  tool_call_id: id,
  stop_reason: "completed",
});

Deno.test("gemini replay restores thought signatures verbatim onto the same parts", () => {
  const name = "thinking-thought-summary-gemini25pro.sse";
  const p = load(name);
  const contents = contentsOf([user("how?"), ...p.messages]);
  assert.deepEqual(contents.map((c) => c.role), ["user", "model"]);
  const parts = contents[1]!.parts;
  assert.deepEqual(parts.map((x) => [x.thought ?? false, x.thoughtSignature]), [
    [true, undefined],
    [false, signatures(p, name)[0]],
    [false, undefined],
  ]);
});

Deno.test("gemini replay answers calls with functionResponse by recovered name and id", () => {
  const p = load("parallel-function-calls-gemini31pro.sse");
  const [add, mul] = of(p.messages, "tool_call") as [ToolCallMessage, ToolCallMessage];
  const contents = contentsOf([
    user("2 and 3"),
    ...p.messages,
    output(mul.tool_call_id, "6"),
    { ...output(add.tool_call_id, "oops"), stop_reason: "failed" },
    user("thanks"),
  ]);
  assert.deepEqual(contents[1]!.parts, [
    {
      functionCall: { name: "add", args: { a: 2, b: 3 }, id: "8hd01vsf" },
      thoughtSignature: add.fidelity!.thought_signature,
    },
    { functionCall: { name: "multiply", args: { a: 2, b: 3 }, id: "k0srpqrc" } },
  ]);
  assert.deepEqual(contents[2]!.parts, [
    { functionResponse: { name: "multiply", response: { output: "6" }, id: "k0srpqrc" } },
    { functionResponse: { name: "add", response: { error: "oops" }, id: "8hd01vsf" } },
    { text: "thanks" },
  ]);
});

Deno.test("gemini replay pairs repeated name-as-id calls in order and signs unsigned first calls on Gemini 3", () => {
  const call = (args: string): CompleteMessage => ({
    type: "tool_call",
    role: "assistant",
    name: "roll",
    arguments: args,
    tool_call_id: "roll",
    stop_reason: "completed",
  });
  const history = [
    user("roll twice"),
    call('{"n":1}'),
    call('{"n":2}'),
    output("roll", "4"),
    output("roll", "2"),
  ];
  const g3 = contentsOf(history);
  assert.deepEqual(g3[1]!.parts.map((x) => x.thoughtSignature), [GEMINI_SKIP_SIGNATURE, undefined]);
  assert.deepEqual(g3[2]!.parts, [
    { functionResponse: { name: "roll", response: { output: "4" } } },
    { functionResponse: { name: "roll", response: { output: "2" } } },
  ]);
  const g25 = contentsOf(history, "gemini-2.5-flash");
  assert.equal(g25[1]!.parts[0]!.thoughtSignature, undefined);
});

Deno.test("gemini request: URL, key only in a header, system, tools and generation config", () => {
  const req = build([user("hi")], {
    system_prompt: "be brief",
    max_tokens: 900,
    thinking_level: "low",
    tools: [{
      name: "ls",
      description: "list",
      parameters: { type: "object", additionalProperties: false },
    }],
  });
  assert.equal(
    req.url,
    "https://generativelanguage.googleapis.com/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent?alt=sse",
  );
  assert.equal(req.headers["x-goog-api-key"], "AIza-test");
  assert.ok(!req.url.includes("AIza"));
  const body = JSON.parse(req.body);
  assert.deepEqual(body.systemInstruction, { parts: [{ text: "be brief" }] });
  assert.deepEqual(body.contents, [{ role: "user", parts: [{ text: "hi" }] }]);
  assert.deepEqual(body.tools, [{
    functionDeclarations: [{
      name: "ls",
      description: "list",
      parametersJsonSchema: { type: "object", additionalProperties: false },
    }],
  }]);
  assert.deepEqual(body.generationConfig, {
    maxOutputTokens: 900,
    thinkingConfig: { thinkingLevel: "low", includeThoughts: true },
  });
  const bare = mod.buildRequest({
    endpoint: {
      provider: "g",
      model_id: "gemini-3-flash-preview",
      protocol: "gemini",
      base_url: "http://127.0.0.1:9/",
    },
    system_prompt: "",
    tools: [],
    history: [user("hi")],
  });
  assert.equal(
    bare.url,
    "http://127.0.0.1:9/models/gemini-3-flash-preview:streamGenerateContent?alt=sse",
  );
  assert.equal(bare.headers["x-goog-api-key"], undefined);
  const bareBody = JSON.parse(bare.body);
  assert.equal("systemInstruction" in bareBody || "tools" in bareBody, false);
  assert.deepEqual(bareBody.generationConfig, { thinkingConfig: { includeThoughts: true } });
  const none = JSON.parse(build([user("x")], { thinking_level: "none" }).body);
  assert.equal(
    none.generationConfig.thinkingConfig.thinkingLevel,
    "low",
    "Pro cannot go below low",
  );
});

function roundTrip(
  t: ScriptedTurn,
): { events: string[]; deltas: WireDelta[]; messages: CompleteMessage[] } {
  const events = encoder.encodeTurn(t, "gemini-test");
  const deltas = parseSse(mod, events.join(""));
  return { events, deltas, messages: translateDeltas(deltas).messages };
}

Deno.test("gemini encoder output (CRLF framed) parses back to the scripted turn", () => {
  const { events, deltas, messages } = roundTrip({
    items: [
      item.thinking("pondering the request"),
      item.text("Two calls coming."),
      item.toolCall("ls", { path: "/" }, { signature: "sig-A" }),
      item.toolCall("ls", { path: "/tmp" }),
    ],
    usage: { input: 50, cached_input: 30, output: 25, reasoning: 10 },
  });
  assert.ok(events.every((e) => e.endsWith("\r\n\r\n")));
  assert.deepEqual(messages.map((m) => [m.type, m.fidelity]), [
    ["thinking", undefined],
    ["text", undefined],
    ["tool_call", { thought_signature: "sig-A" }],
    ["tool_call", undefined],
  ]);
  assert.equal(of(messages, "thinking")[0]!.thinking, "pondering the request");
  assert.deepEqual(of(messages, "tool_call").map((c) => [c.tool_call_id, c.arguments]), [
    ["ls", '{"path":"/"}'],
    ["ls#2", '{"path":"/tmp"}'],
  ]);
  assert.deepEqual(usageOf(deltas), use(30, 20, 25));
  assert.deepEqual(finishOf(deltas), fin("tool_call", "STOP"));
});

Deno.test("gemini encoder stream errors and HTTP error bodies parse to their codes", () => {
  const { deltas } = roundTrip({
    items: [item.text("partial")],
    stream_error: { message: "busy", code: "UNAVAILABLE", status: 503 },
  });
  assert.deepEqual(deltas.at(-1), {
    type: "error",
    message: "busy",
    code: "UNAVAILABLE",
    status: 503,
  });
  const body = JSON.stringify(encoder.httpErrorBody(400, "API key not valid.", "API_KEY_INVALID"));
  assert.deepEqual(mod.parseError(400, body), {
    message: "API key not valid.",
    code: "API_KEY_INVALID",
  });
  assert.deepEqual(mod.parseError(429, JSON.stringify(encoder.httpErrorBody(429, "quota"))), {
    message: "quota",
    code: "RESOURCE_EXHAUSTED",
  });
});

Deno.test("gemini parser flags tool-call failures and unparsable chunks instead of throwing", () => {
  const parser = mod.createParser();
  const bad = parser.push({ data: "{oops" });
  assert.equal(bad[0]?.type === "error" && bad[0].code, "penguin_malformed");
  const out = parser.push({
    data: JSON.stringify({
      candidates: [{ finishReason: "MALFORMED_FUNCTION_CALL", finishMessage: "bad call" }],
    }),
  });
  assert.deepEqual(out.map((d) => d.type), ["finish", "error"]);
  assert.deepEqual(out[0], fin("other", "MALFORMED_FUNCTION_CALL"));
  assert.equal(out[1]?.type === "error" && out[1].code, "MALFORMED_FUNCTION_CALL");
});

Deno.test("gemini end to end: streamModel over recorded SSE, a JSON-array stream and recorded errors", async () => {
  const fixture = RECORDED.text;
  await withGeminiServer([
    {
      status: 200,
      type: "text/event-stream",
      body: fixture("parallel-function-calls-gemini31pro.sse"),
    },
    {
      status: 200,
      type: "application/json",
      body: fixture("json-array-stream-thinking-function-calls-gemini25flash.json"),
    },
    {
      status: 200,
      type: "text/event-stream",
      body: fixture("stream-prompt-blocked-safety-vertex.sse"),
    },
    { status: 400, type: "application/json", body: fixture("error-400-api-key-invalid.json") },
  ], async (base, seen) => {
    const req = cannedRequest(base, {
      provider: "google",
      model_id: "gemini-3.1-pro-preview",
      protocol: "gemini",
      api_key: "AIza-k",
    }, [user("2 and 3")]);
    const runs = await collectEach(req, 4, { idleTimeoutMs: 10_000 });
    const outcomes = runs.map((r) => r.outcome);
    const calls = runs.slice(0, 2).map((r) => r.completes.filter((m) => m.type === "tool_call"));
    assert.deepEqual(calls.map((c) => c.map((m) => (m as ToolCallMessage).name)), [
      ["add", "multiply"],
      ["pelican_name_generator"],
    ]);
    assert.deepEqual(outcomes.map((o) => [o.status, o.finish_reason]), [
      ["completed", "tool_call"],
      ["completed", "tool_call"],
      ["failed", "content_filter"],
      ["auth", undefined],
    ]);
    const url = new URL(seen[0]!.url);
    assert.equal(url.pathname, "/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent");
    assert.equal(url.search, "?alt=sse");
    assert.equal(seen[0]!.headers.get("x-goog-api-key"), "AIza-k");
  });
});

Deno.test("gemini parser keeps each signed part in a segment of its own", () => {
  const parser = mod.createParser();
  const chunk = (...parts: Json[]) => ({
    data: JSON.stringify({ candidates: [{ content: { parts, role: "model" } }] }),
  });
  const deltas = [
    chunk({ text: "plan", thought: true }, { text: "", thought: true, thoughtSignature: "T" }),
    chunk({ text: "a" }, { text: "b", thoughtSignature: "S1" }),
    chunk({ text: "c" }, { text: "", thoughtSignature: "S2" }),
  ].flatMap((e) => parser.push(e));
  const { messages } = translateDeltas(deltas);
  assert.deepEqual(
    messages.map((m) => [m.type, m.type === "text" ? m.text : m.thinking, m.fidelity]),
    [
      ["thinking", "plan", undefined],
      ["thinking", "", { thought_signature: "T" }],
      ["text", "a", undefined],
      ["text", "b", { thought_signature: "S1" }],
      ["text", "c", undefined],
      ["text", "", { thought_signature: "S2" }],
    ],
  );
});
