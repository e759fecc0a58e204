/**
 * The streaming driver against the scripted server: failure modes become
 * classified outcomes, never throws; open segments close with the outcome's
 * status; usage only on success. What every protocol must do alike (stalls,
 * disconnects, malformed chunks, HTTP and in-stream errors, finish by length)
 * is tests/models/conformance_test.ts.
 */
import assert from "node:assert/strict";
import { streamModel } from "../../lib/models/stream.ts";
import { createToolCallIds } from "../../lib/models/tool_call_ids.ts";
import type { WireProtocol, WireRequest } from "../../lib/models/wire.ts";
import {
  item,
  type ModelServer,
  startModelServer,
  turn,
  withModelServer,
} from "../support/model_server.ts";
import { assertPartialDiscipline, collect } from "./_support.ts";

function request(
  server: ModelServer,
  protocol: WireProtocol = "openai-chat",
  key?: string,
): WireRequest {
  return {
    endpoint: server.endpoint(protocol, "scripted-model", key),
    system_prompt: "You are terse.",
    tools: [{ name: "exec_command", description: "Run a command", parameters: { type: "object" } }],
    history: [{ type: "text", role: "user", text: "hi", stop_reason: "completed" }],
  };
}

for (const protocol of ["openai-chat", "openai-responses"] as const) {
  Deno.test(`${protocol}: a scripted thinking + text + tool call turn streams in order with usage`, async () => {
    const t = turn.of(
      item.thinking("let me think", { encrypted: "ENC", id: "rs_1" }),
      item.text("Running it."),
      item.toolCall("exec_command", { cmd: "ls -la" }, { id: "call_a" }),
    );
    t.usage = { input: 50, cached_input: 20, output: 9 };
    await withModelServer({ turns: [t] }, async (s) => {
      const c = await collect(request(s, protocol, "sk-test"));
      assertPartialDiscipline(c.messages);
      assert.equal(c.outcome.status, "completed");
      assert.deepEqual(c.completes.map((m) => m.type), ["thinking", "text", "tool_call"]);
      const call = c.completes[2] as { arguments: string; tool_call_id: string };
      assert.deepEqual(JSON.parse(call.arguments), { cmd: "ls -la" });
      assert.equal(call.tool_call_id, "call_a");
      assert.deepEqual(c.usage, { cache_read: 20, cache_write: 30, output: 9, total: 59 });
      assert.equal(s.requests.length, 1);
      assert.equal(s.requests[0]!.headers.authorization, "Bearer sk-test");
      assert.equal(s.requests[0]!.model, "scripted-model");
    });
  });
}

Deno.test("a delay before headers longer than the idle timeout is a timeout", async () => {
  await withModelServer({ turns: [{ ...turn.text("late"), delay_ms: 2000 }] }, async (s) => {
    const c = await collect(request(s), { idleTimeoutMs: 100 });
    assert.equal(c.outcome.status, "timeout");
    assert.equal(c.messages.length, 0);
  });
});

Deno.test("an idle timeout of 0 disables the timer", async () => {
  await withModelServer({ turns: [{ ...turn.text("slow but fine"), delay_ms: 50 }] }, async (s) => {
    const c = await collect(request(s), { idleTimeoutMs: 0 });
    assert.equal(c.outcome.status, "completed");
  });
});

Deno.test("aborting cancels the request at once and the server sees the connection close", async () => {
  await withModelServer(
    { turns: [{ ...turn.text("streaming forever"), stall_after: 3 }] },
    async (s) => {
      const ctl = new AbortController();
      const items = [];
      for await (const it of streamModel(request(s), { signal: ctl.signal })) {
        items.push(it);
        if (
          it.kind === "message" && it.message.type === "partial_text" &&
          it.message.event_type === "delta"
        ) {
          ctl.abort();
        }
      }
      const end = items.at(-1);
      assert.equal(end?.kind, "end");
      assert.equal(end.kind === "end" && end.outcome.status, "aborted");
      assert.ok(!items.some((i) => i.kind === "usage"));
      await s.requests[0]!.disconnected;
      assert.equal(s.requests[0]!.clientGone, true);
    },
  );
});

Deno.test("an already-aborted signal sends nothing", async () => {
  await withModelServer({ turns: [turn.text("unused")] }, async (s) => {
    const ctl = new AbortController();
    ctl.abort();
    const c = await collect(request(s), { signal: ctl.signal });
    assert.equal(c.outcome.status, "aborted");
    assert.equal(s.requests.length, 0);
  });
});

Deno.test("a refused connection is transport-shaped", async () => {
  const s = await startModelServer({ turns: [] });
  const req = request(s);
  await s.close();
  const c = await collect(req);
  assert.equal(c.outcome.status, "timeout");
});

Deno.test("an empty 200 stream is malformed", async () => {
  await withModelServer({ turns: [turn.raw("")] }, async (s) => {
    const c = await collect(request(s));
    assert.equal(c.outcome.status, "malformed");
    assert.match(c.outcome.error_message!, /yielded no events/);
  });
});

Deno.test("a stream without a finish event is malformed (truncated)", async () => {
  await withModelServer(
    { turns: [turn.raw('data: {"choices":[{"delta":{"content":"hi"}}]}\n\n')] },
    async (s) => {
      const c = await collect(request(s));
      assert.equal(c.outcome.status, "malformed");
      assert.equal(c.completes[0]?.stop_reason, "malformed");
    },
  );
});

Deno.test("tool-call arguments that are not JSON complete the call verbatim; the request still completes", async () => {
  await withModelServer({ turns: [turn.toolCall("exec_command", '{"cmd": "ls"')] }, async (s) => {
    const c = await collect(request(s));
    assert.equal(c.outcome.status, "completed");
    const call = c.completes[0] as { type: string; arguments: string; stop_reason: string };
    assert.equal(call.type, "tool_call");
    assert.equal(call.arguments, '{"cmd": "ls"');
    assert.equal(call.stop_reason, "completed");
  });
});

Deno.test("empty tool-call arguments become {}", async () => {
  await withModelServer({ turns: [turn.toolCall("list", "")] }, async (s) => {
    const c = await collect(request(s));
    assert.equal(c.outcome.status, "completed");
    assert.equal((c.completes[0] as { arguments: string }).arguments, "{}");
  });
});

Deno.test("a reused provider tool-call id gets a #n suffix within the session", async () => {
  const ids = createToolCallIds();
  const t = () => turn.of(item.toolCall("read", { p: 1 }, { id: "call_x" }));
  await withModelServer({ turns: [t(), t()] }, async (s) => {
    const a = await collect(request(s), { toolCallIds: ids });
    const b = await collect(request(s), { toolCallIds: ids });
    assert.equal((a.completes[0] as { tool_call_id: string }).tool_call_id, "call_x");
    assert.equal((b.completes[0] as { tool_call_id: string }).tool_call_id, "call_x#2");
  });
});
