/**
 * Request bodies built from remembered per-message JSON, over every wire
 * protocol: as a session's history grows turn by turn, each request's bytes
 * must be exactly `JSON.stringify` of its body (what a build without any
 * remembered JSON sends, and what the streamed body of a very large history
 * writes), while the JSON of earlier messages is not serialized again.
 * Histories hold texts, thinking with each protocol's opaque fidelity
 * payloads, tool calls and outputs with images, user images and inline data,
 * and strings JSON must escape.
 */
import assert from "node:assert/strict";
import { wireModule } from "../../lib/models/protocols/mod.ts";
import { jsonBodyStream } from "../../lib/models/_json_body.ts";
import { CLIENT_TYPES } from "../../lib/state/project_config_types.ts";
import type { HttpRequest, WireProtocol, WireRequest } from "../../lib/models/wire.ts";
import type { CompleteMessage } from "../../lib/protocol/types.ts";

const PROTOCOLS: readonly WireProtocol[] = CLIENT_TYPES;

/** Fidelity payloads of every protocol at once: each replays its own, byte for byte. */
const FIDELITY = {
  signature: "sig/+=\u2028",
  encrypted_content: 'enc\u0000"\\',
  id: "rs_1",
  reasoning_details: [{ type: "reasoning.text", text: "d\u00e9tail", signature: null }],
  thought_signature: "ts==",
};

/** The messages of turn `n`: a tool call and its output, with extras on some turns. */
function turnMessages(n: number): CompleteMessage[] {
  const out: CompleteMessage[] = [];
  if (n % 3 === 0) {
    out.push({
      type: "thinking",
      role: "assistant",
      thinking: `thought ${n} \u{1F427}`,
      fidelity: { ...FIDELITY, id: `rs_${n}` },
      stop_reason: "completed",
    });
  }
  if (n % 2 === 0) {
    out.push({
      type: "text",
      role: "assistant",
      text: `step ${n}\n\t"q"`,
      stop_reason: "completed",
    });
  }
  out.push({
    type: "tool_call",
    role: "assistant",
    name: "exec_command",
    arguments: JSON.stringify({ cmd: `echo ${n} </\u2029>` }),
    tool_call_id: `call_${n}`,
    stop_reason: "completed",
  });
  out.push({
    type: "tool_call_output",
    role: "user",
    output: `${n}: ${"x\u00e9\u0001".repeat(700)}`,
    tool_call_id: `call_${n}`,
    stop_reason: n % 4 === 1 ? "failed" : "completed",
    ...(n % 5 === 2
      ? { images: ["data:image/png;base64,iVBORw0KGgo=", "https://example.test/a.png"] }
      : {}),
  });
  if (n % 4 === 3) {
    out.push(
      { type: "text", role: "user", text: `steer ${n}`, stop_reason: "completed" },
      {
        type: "image_url",
        role: "user",
        image_url: "https://example.test/b.jpg",
        stop_reason: "completed",
      },
      {
        type: "inline_data",
        role: "user",
        data: "aGVsbG8=",
        mime_type: "image/png",
        stop_reason: "completed",
      },
    );
  }
  return out;
}

function requestOf(protocol: WireProtocol, history: CompleteMessage[]): WireRequest {
  return {
    endpoint: {
      provider: "test",
      model_id: protocol === "gemini" ? "gemini-3-pro" : "m",
      protocol,
      base_url: "http://127.0.0.1:9/v1",
      api_key: "k",
    },
    system_prompt: "Be terse. \u00a7",
    tools: [{ name: "exec_command", description: "Run", parameters: { type: "object" } }],
    history,
    max_tokens: 1000,
  };
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** The bytes a request sends (the driver sends `bytes` when there are some, else `body`). */
function sent(http: HttpRequest): string {
  return http.bytes !== undefined ? text(http.bytes) : http.body;
}

/** JSON.stringify counting the characters it writes. */
function countingStringify<T>(run: () => T): { value: T; chars: number } {
  const original = JSON.stringify;
  let chars = 0;
  JSON.stringify = ((...args: Parameters<typeof original>) => {
    const s = original(...args);
    if (typeof s === "string") chars += s.length;
    return s;
  }) as typeof JSON.stringify;
  try {
    return { value: run(), chars };
  } finally {
    JSON.stringify = original;
  }
}

for (const protocol of PROTOCOLS) {
  Deno.test(`${protocol}: each turn's body is its JSON, built from each message's JSON once`, async () => {
    const module = wireModule(protocol);
    const history: CompleteMessage[] = [
      { type: "text", role: "user", text: "start \u{1F427}", stop_reason: "completed" },
    ];
    for (let n = 1; n <= 12; n++) {
      history.push(...turnMessages(n));
      const req = requestOf(protocol, [...history]);
      const http = module.buildRequest(req);
      const { value: bytes, chars } = countingStringify(() => http.bytes);
      assert.ok(bytes !== undefined, "the module builds the body's bytes");
      const body = text(bytes);
      // Today's JSON: the body object serialized whole, and a build from fresh copies.
      assert.equal(body, JSON.stringify(http.json));
      const fresh = module.buildRequest(requestOf(protocol, structuredClone(history)));
      assert.equal(body, JSON.stringify(fresh.json), `turn ${n}`);
      assert.equal(sent(fresh), body);
      // The streamed body (very large histories) writes the same bytes.
      assert.equal(await new Response(jsonBodyStream(http.json!)).text(), body);
      if (n >= 8) {
        // Earlier messages were taken as remembered: what is serialized is about a turn's new
        // messages (and, for Anthropic, the message whose cache mark moved), not the history.
        assert.ok(
          chars < body.length / 3,
          `turn ${n}: ${chars} of ${body.length} chars serialized`,
        );
      }
    }
  });

  Deno.test(`${protocol}: a message replaced at the same place is serialized anew`, () => {
    const module = wireModule(protocol);
    const history: CompleteMessage[] = [
      { type: "text", role: "user", text: "start", stop_reason: "completed" },
      ...turnMessages(1),
      ...turnMessages(2),
    ];
    const first = sent(module.buildRequest(requestOf(protocol, history)));
    const at = history.findIndex((m) => m.type === "tool_call_output");
    const old = history[at]!;
    assert.equal(old.type, "tool_call_output");
    history[at] = { ...old, output: "CHANGED" };
    const second = sent(module.buildRequest(requestOf(protocol, history)));
    assert.notEqual(second, first);
    assert.ok(second.includes("CHANGED"));
    assert.equal(second, JSON.stringify(module.buildRequest(requestOf(protocol, history)).json));
  });
}

Deno.test("anthropic-messages: the prompt-cache marks move to the last user messages each turn", () => {
  const module = wireModule("anthropic-messages");
  const history: CompleteMessage[] = [
    { type: "text", role: "user", text: "start", stop_reason: "completed" },
  ];
  for (let n = 1; n <= 6; n++) {
    history.push(...turnMessages(n));
    const http = module.buildRequest(requestOf("anthropic-messages", history));
    const body = JSON.parse(sent(http)) as { messages: { role: string; content: object[] }[] };
    const marked = body.messages.flatMap((m, i) =>
      m.content.some((b) => "cache_control" in b) ? [i] : []
    );
    const users = body.messages.flatMap((m, i) => m.role === "user" ? [i] : []);
    assert.deepEqual(marked, users.slice(-2), `turn ${n}`);
  }
});

Deno.test("the suite runs over every protocol, from the one id list", () => {
  assert.deepEqual([...PROTOCOLS].sort(), [
    "anthropic-messages",
    "gemini",
    "openai-chat",
    "openai-responses",
  ]);
});
