/**
 * The scripted model server itself: routing by path for every registered
 * encoder, recording, scripting by content, bounded scripts, failure modes.
 */
import assert from "node:assert/strict";
import type { WireRequest } from "../../lib/models/wire.ts";
import {
  ENCODERS,
  item,
  type ModelServer,
  startModelServer,
  turn,
  withModelServer,
} from "../support/model_server.ts";
import { assertPartialDiscipline, collect } from "./_support.ts";

function request(s: ModelServer, protocol = ENCODERS[0]!.protocol, text = "hi"): WireRequest {
  return {
    endpoint: s.endpoint(protocol, "model-a", "key-1"),
    system_prompt: "sys",
    tools: [{ name: "exec_command", description: "run", parameters: { type: "object" } }],
    history: [{ type: "text", role: "user", text, stop_reason: "completed" }],
  };
}

for (const encoder of ENCODERS) {
  Deno.test(`server speaks ${encoder.protocol}: text, thinking and a tool call round-trip through streamModel`, async () => {
    const t = turn.of(
      item.thinking("thinking hard"),
      item.text("Here you go."),
      item.toolCall("exec_command", { cmd: "ls" }, { id: "call_z" }),
    );
    await withModelServer({ turns: [t] }, async (s) => {
      const c = await collect(request(s, encoder.protocol));
      assertPartialDiscipline(c.messages);
      assert.equal(c.outcome.status, "completed", c.outcome.error_message);
      const byType = (type: string) => c.completes.filter((m) => m.type === type);
      assert.equal(
        byType("text").map((m) => (m as { text: string }).text).join(""),
        "Here you go.",
      );
      assert.equal(
        byType("thinking").map((m) => (m as { thinking: string }).thinking).join(""),
        "thinking hard",
      );
      const call = byType("tool_call")[0] as { name: string; arguments: string };
      assert.equal(call.name, "exec_command");
      assert.deepEqual(JSON.parse(call.arguments), { cmd: "ls" });
      assert.ok(c.usage && c.usage.total > 0);
      const rec = s.requests[0]!;
      assert.equal(rec.protocol, encoder.protocol);
      assert.equal(rec.method, "POST");
      assert.equal(rec.model, "model-a");
      assert.equal(typeof rec.body, "object");
    });
  });

  Deno.test(`server speaks ${encoder.protocol}: an encoder-built HTTP error body is parsed by its wire module`, async () => {
    const t = turn.error(400);
    t.http_error!.message = "field x is wrong";
    await withModelServer({ turns: [t] }, async (s) => {
      const c = await collect(request(s, encoder.protocol));
      assert.equal(c.outcome.status, "failed");
      assert.match(c.outcome.error_message!, /field x is wrong/);
    });
  });
}

Deno.test("server records method, path, headers and the parsed JSON body", async () => {
  await withModelServer({ turns: [turn.text("ok")] }, async (s) => {
    await collect(request(s, "openai-chat", "hello"));
    const rec = s.requests[0]!;
    assert.equal(rec.path, "/v1/chat/completions");
    assert.equal(rec.headers.authorization, "Bearer key-1");
    assert.equal(rec.headers["content-type"], "application/json");
    const body = rec.body as { messages: { role: string; content: string }[] };
    assert.deepEqual(body.messages.at(-1), { role: "user", content: "hello" });
  });
});

Deno.test("server answers requests beyond its script with a 500 saying the script is exhausted", async () => {
  await withModelServer({ turns: [turn.text("only one")] }, async (s) => {
    await collect(request(s));
    const res = await fetch(`${s.url}/v1/chat/completions`, { method: "POST", body: "{}" });
    assert.equal(res.status, 500);
    assert.match(await res.text(), /script exhausted after 1 scripted turn/);
  });
});

Deno.test("server answers an unknown path with 404", async () => {
  await withModelServer({ turns: [] }, async (s) => {
    const res = await fetch(`${s.url}/nope`, { method: "POST", body: "{}" });
    assert.equal(res.status, 404);
    await res.body?.cancel();
  });
});

Deno.test("a handler scripts by request content and is bounded by maxRequests", async () => {
  const handler = (r: { body: unknown }) => {
    const msgs = (r.body as { messages: { content: string }[] }).messages;
    return turn.text(`echo: ${msgs.at(-1)!.content}`);
  };
  await withModelServer({ handler, maxRequests: 2 }, async (s) => {
    const a = await collect(request(s, "openai-chat", "one"));
    const b = await collect(request(s, "openai-chat", "two"));
    assert.equal((a.completes[0] as { text: string }).text, "echo: one");
    assert.equal((b.completes[0] as { text: string }).text, "echo: two");
    const c = await collect(request(s, "openai-chat", "three"));
    assert.equal(c.outcome.status, "timeout", "the 500 after the bound is transport-shaped");
    assert.match(c.outcome.error_message!, /script exhausted/);
  });
});

Deno.test("an HTTP error turn sends its status, body and headers", async () => {
  await withModelServer({
    turns: [turn.error(429, { error: { message: "slow" } }, { "retry-after": "3" })],
  }, async (s) => {
    const res = await fetch(`${s.url}/v1/responses`, { method: "POST", body: "{}" });
    assert.equal(res.status, 429);
    assert.equal(res.headers.get("retry-after"), "3");
    assert.deepEqual(await res.json(), { error: { message: "slow" } });
  });
});

Deno.test("raw events bypass the encoder and keep the failure modes", async () => {
  const events = ['data: {"choices":[{"delta":{"content":"a"}}]}\n\n', "data: [DONE]\n\n"];
  await withModelServer(
    { turns: [{ items: [], raw_events: events, malformed_at: 0 }] },
    async (s) => {
      const res = await fetch(`${s.url}/v1/chat/completions`, { method: "POST", body: "{}" });
      const text = await res.text();
      assert.ok(text.startsWith('data: {"scripted_malformed_chunk"'));
      assert.ok(text.endsWith("data: [DONE]\n\n"));
    },
  );
});

Deno.test("a stalled response is released when the server closes", async () => {
  const s = await startModelServer({
    turns: [{ ...turn.text("abc"), stall_after: 1 }],
    maxHoldMs: 60_000,
  });
  const res = await fetch(`${s.url}/v1/chat/completions`, { method: "POST", body: "{}" });
  const reader = res.body!.getReader();
  const first = await reader.read();
  assert.equal(first.done, false);
  const closing = s.close();
  await assert.rejects(async () => {
    while (!(await reader.read()).done) { /* drain until the error */ }
  });
  await closing;
});
