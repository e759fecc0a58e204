// Streamed JSON request bodies (lib/models/_json_body.ts): byte-for-byte
// JSON.stringify, and the driver streams only very large histories.
import assert from "node:assert/strict";
import {
  historyChars,
  joinedFrom,
  jsonBodyStream,
  jsonRequest,
} from "../../lib/models/_json_body.ts";
import { streamModel } from "../../lib/models/stream.ts";
import type { CompleteMessage } from "../../lib/protocol/types.ts";
import { startModelServer, turn } from "../support/model_server.ts";

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

Deno.test("jsonBodyStream yields exactly the UTF-8 bytes of JSON.stringify, non-ASCII and skipped members included", async () => {
  const big = "x".repeat(70_000);
  const value: Record<string, unknown> = {
    model: "m",
    skipped: undefined,
    messages: [
      { role: "system", content: "Prompt — with “quotes” and \u2028 and 企鹅" },
      { role: "user", content: big },
      undefined,
      { role: "tool", content: '\u0000\n"' },
    ],
    empty: [],
    nested: { a: [1, { b: null }], c: "é" },
    stream: true,
  };
  const expected = new TextEncoder().encode(JSON.stringify(value));
  assert.deepEqual(await bytesOf(jsonBodyStream(value)), expected);
  assert.deepEqual(await bytesOf(jsonBodyStream({})), new TextEncoder().encode("{}"));
});

/** The chunks of a stream. */
async function chunksOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array<ArrayBuffer>[]> {
  const out: Uint8Array<ArrayBuffer>[] = [];
  for await (const c of stream) out.push(new Uint8Array(c));
  return out;
}

/** Most bytes a chunk may have: a ~64 Ki-character buffer, escaped and UTF-8 encoded, plus a piece. */
const MAX_CHUNK = 1024 * 1024;

Deno.test("jsonBodyStream cuts one huge string into small chunks, surrogate pairs and escapes intact", async () => {
  const huge = "a" + '😀\n"é'.repeat(600_000) + "\ud83d";
  const value = { model: "m", messages: [{ role: "assistant", content: huge }] };
  const chunks = await chunksOf(jsonBodyStream(value));
  assert.ok(chunks.length > 10, `${chunks.length} chunks`);
  const largest = Math.max(...chunks.map((c) => c.length));
  assert.ok(largest <= MAX_CHUNK, `largest chunk ${largest} bytes`);
  assert.deepEqual(
    new Uint8Array(await new Blob(chunks).arrayBuffer()),
    new TextEncoder().encode(JSON.stringify(value)),
  );
});

Deno.test("a string recorded as joined from parts is streamed part by part, as the same JSON", async () => {
  const parts = ["x".repeat(3_000_000), "ü", "😀".repeat(200_000), "", "end"];
  const msg: Record<string, unknown> = { role: "assistant", content: parts.join("") };
  joinedFrom(msg, "content", parts);
  const value = { messages: [msg], other: { content: "kept" } };
  const chunks = await chunksOf(jsonBodyStream(value));
  const largest = Math.max(...chunks.map((c) => c.length));
  assert.ok(largest <= MAX_CHUNK, `largest chunk ${largest} bytes`);
  assert.deepEqual(
    JSON.parse(new TextDecoder().decode(await new Blob(chunks).arrayBuffer())),
    JSON.parse(JSON.stringify(value)),
  );
});

Deno.test("jsonRequest serializes its body once, on first read", () => {
  const json = { a: [1, 2], b: "c" };
  const req = jsonRequest("http://x/y", { h: "v" }, json);
  assert.equal(req.body, JSON.stringify(json));
  assert.equal(req.body, req.body);
  assert.equal(req.json, json);
});

Deno.test("historyChars counts content characters of every message kind", () => {
  const msgs: CompleteMessage[] = [
    { type: "text", role: "user", text: "abc", stop_reason: "completed" },
    { type: "thinking", role: "assistant", thinking: "de", stop_reason: "completed" },
    {
      type: "tool_call",
      role: "assistant",
      name: "n",
      arguments: "{}",
      tool_call_id: "c",
      stop_reason: "completed",
    },
    {
      type: "tool_call_output",
      role: "user",
      output: "out",
      images: ["data:x"],
      tool_call_id: "c",
      stop_reason: "completed",
    },
  ];
  assert.equal(historyChars(msgs), 3 + 2 + 2 + 3 + 6);
});

Deno.test("a very large history is sent as a streamed body the server reads as the same JSON", async () => {
  const server = await startModelServer({ turns: [turn.text("ok"), turn.text("ok")] });
  try {
    const history = (n: number): CompleteMessage[] => [{
      type: "text",
      role: "user",
      text: "é".repeat(n),
      stop_reason: "completed",
    }];
    for (const size of [10, 9 * 1024 * 1024]) {
      for await (
        const _ of streamModel({
          endpoint: server.endpoint("openai-chat"),
          system_prompt: "Sys — tem",
          tools: [],
          history: history(size),
        })
      ) { /* drain */ }
    }
    const [small, large] = server.requests;
    assert.equal(
      small!.headers["content-length"],
      String(new TextEncoder().encode(JSON.stringify(small!.body)).length),
    );
    assert.equal(large!.headers["transfer-encoding"], "chunked");
    const messages = (large!.body as { messages: { content: string }[] }).messages;
    assert.equal(messages[1]!.content, "é".repeat(9 * 1024 * 1024));
  } finally {
    await server.close();
  }
});

Deno.test("jsonRequest takes the known bytes of an array's first elements as they are and encodes the rest", () => {
  const enc = new TextEncoder();
  const json = { model: "m — x", messages: [{ a: "é" }, { b: 2 }, { c: "企鹅" }], stream: true };
  const exact = jsonRequest("http://x/y", {}, json, {
    key: "messages",
    count: 2,
    chunks: [enc.encode('{"a":"é"},'), enc.encode('{"b":2}')],
  });
  assert.equal(exact.body, JSON.stringify(json));
  assert.deepEqual(exact.bytes, enc.encode(JSON.stringify(json)));
  // The known bytes are used, not recomputed: bytes that differ show up in the body.
  const marked = jsonRequest("http://x/y", {}, json, {
    key: "messages",
    count: 2,
    chunks: [enc.encode('{"a":"é" },{"b":2 }')],
  });
  assert.equal(
    marked.body,
    '{"model":"m — x","messages":[{"a":"é" },{"b":2 },{"c":"企鹅"}],"stream":true}',
  );
  // A known prefix longer than the array, or of another member, is ignored.
  for (
    const known of [
      { key: "messages", count: 4, chunks: [enc.encode("x")] },
      { key: "other", count: 1, chunks: [enc.encode("x")] },
    ]
  ) {
    const r = jsonRequest("http://x/y", {}, json, known);
    assert.equal(r.body, JSON.stringify(json));
    assert.deepEqual(r.bytes, enc.encode(JSON.stringify(json)));
  }
});

Deno.test("a request's body bytes are released once fetch has settled, after the server read them whole", async () => {
  const server = await startModelServer({ turns: [turn.text("ok"), turn.text("ok")] });
  try {
    const history: CompleteMessage[] = [
      { type: "text", role: "user", text: "first — é".repeat(1000), stop_reason: "completed" },
      { type: "text", role: "assistant", text: "reply", stop_reason: "completed" },
      { type: "text", role: "user", text: "second", stop_reason: "completed" },
    ];
    const sent: unknown[] = [];
    const recording: typeof fetch = (input, init) => {
      sent.push(init?.body);
      return fetch(input, init);
    };
    for (const tools of [[], [{ name: "t", description: "d", parameters: { type: "object" } }]]) {
      for await (
        const _ of streamModel({
          endpoint: server.endpoint("openai-chat"),
          system_prompt: "Sys — tem",
          tools,
          history,
        }, { fetch: recording })
      ) { /* drain */ }
    }
    assert.equal(sent.length, 2);
    for (const body of sent) {
      assert.ok(body instanceof Uint8Array, "sent as bytes");
      assert.equal((body.buffer as ArrayBuffer).detached, true, "its buffer is released");
      assert.equal(body.byteLength, 0);
    }
    for (const request of server.requests) {
      const messages = (request.body as { messages: { role: string; content: string }[] }).messages;
      assert.deepEqual(messages.map((m) => m.role), ["system", "user", "assistant", "user"]);
      assert.equal(messages[1]!.content, "first — é".repeat(1000));
      assert.equal(messages[3]!.content, "second");
    }
  } finally {
    await server.close();
  }
});
