/**
 * Every recorded OpenAI Chat Completions and Responses fixture, served
 * byte-for-byte from a 127.0.0.1 server and read through `streamModel`.
 * Files are discovered by listing the fixture directories, so a new fixture
 * is covered by the generic invariants without code changes; named files
 * get specific expectations on top.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { wireModule } from "../../lib/models/protocols/mod.ts";
import type { WireProtocol } from "../../lib/models/wire.ts";
import type {
  CompleteMessage,
  ThinkingMessage,
  ToolCallMessage,
} from "../../lib/protocol/types.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { assertPartialDiscipline, collect, type Collected } from "./_support.ts";

const ROOT = new URL("../../../shared/fixtures/providers/", import.meta.url).pathname;
const PROTOCOLS: WireProtocol[] = ["openai-chat", "openai-responses"];

function fixtureFiles(protocol: WireProtocol): string[] {
  const dir = join(ROOT, protocol);
  const names: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (e.isFile && (e.name.endsWith(".sse") || e.name.endsWith(".json"))) names.push(e.name);
  }
  return names.sort();
}

/** Serve one fixture file verbatim and stream it. */
async function runFixture(protocol: WireProtocol, name: string): Promise<Collected> {
  const bytes = await Deno.readFile(join(ROOT, protocol, name));
  const status = /^error-(\d{3})/.exec(name)?.[1];
  const t = status !== undefined
    ? turn.error(Number(status), new TextDecoder().decode(bytes))
    : turn.raw(bytes, name.endsWith(".json") ? "application/json" : "text/event-stream");
  const server = await startModelServer({ turns: [t] });
  try {
    return await collect({
      endpoint: server.endpoint(protocol, "fixture-model"),
      system_prompt: "",
      tools: [],
      history: [],
    });
  } finally {
    await server.close();
  }
}

const thinkings = (c: Collected) =>
  c.completes.filter((m): m is ThinkingMessage => m.type === "thinking");
const calls = (c: Collected) =>
  c.completes.filter((m): m is ToolCallMessage => m.type === "tool_call");
const texts = (c: Collected) =>
  c.completes.filter((m) => m.type === "text").map((m) => (m as { text: string }).text);

/** Specific expectations for named files. */
const EXPECT: Record<string, (c: Collected) => void> = {
  "openai-chat/text-usage-gpt4o.sse": (c) => {
    assert.equal(c.outcome.status, "completed");
    assert.match(texts(c).join(""), /^I'm unable to provide real-time weather updates/);
    assert.deepEqual(c.usage, { cache_read: 0, cache_write: 14, output: 30, total: 44 });
  },
  "openai-chat/parallel-tool-calls-gpt5.sse": (c) => {
    assert.deepEqual(calls(c).map((m) => [m.name, JSON.parse(m.arguments)]), [
      ["add", { a: 2, b: 3 }],
      ["multiply", { a: 2, b: 3 }],
    ]);
    assert.equal(c.outcome.finish_reason, "tool_call");
  },
  "openai-chat/refusal-gpt4o.sse": (c) => {
    assert.equal(c.outcome.status, "completed");
    assert.equal(texts(c).join(""), "I'm sorry, I can't assist with that request.");
  },
  "openai-chat/deepseek-reasoner-reasoning-content.sse": (c) => {
    const [t] = thinkings(c);
    assert.equal(t?.fidelity?.reasoning_field, "reasoning_content");
    assert.match(t!.thinking, /^Hmm, the user just said "Hello"/);
    assert.equal(c.completes.at(-1)?.type, "text");
  },
  "openai-chat/deepseek-reasoner-tool-call.sse": (c) => {
    assert.equal(c.usage?.cache_read, 320, "DeepSeek cached tokens");
    assert.deepEqual(JSON.parse(calls(c)[0]!.arguments), { location: "San Francisco" });
  },
  "openai-chat/openrouter-claude-reasoning-details-tool-call.sse": (c) => {
    const [t] = thinkings(c);
    assert.equal(t?.fidelity?.reasoning_field, "reasoning");
    const details = t?.fidelity?.reasoning_details as Record<string, unknown>[];
    assert.equal(details.length, 1, "text fragments and the signature merge into one entry");
    assert.equal(details[0]!.text, t!.thinking);
    assert.match(details[0]!.signature as string, /^Eq0ECkgIDRAB/);
    assert.equal(details[0]!.format, "anthropic-claude-v1");
    assert.equal(calls(c)[0]?.tool_call_id, "toolu_bdrk_01N8hD5cYDw4WfvnjKXAkA2W");
  },
  "openai-chat/openrouter-grok-encrypted-reasoning-parallel-tools-cached.sse": (c) => {
    const details = thinkings(c)[0]?.fidelity?.reasoning_details as Record<string, unknown>[];
    assert.deepEqual(details.map((d) => d.type), ["reasoning.summary", "reasoning.encrypted"]);
    assert.equal(details[1]!.id, "rs_e929bb23-dcba-4b2e-9d89-a05866e95f4d");
    assert.match(details[1]!.data as string, /^sKMLUENtaFuNwiA/);
    assert.equal(calls(c).length, 2);
    assert.deepEqual(c.usage, { cache_read: 153, cache_write: 288, output: 267, total: 708 });
  },
  "openai-chat/openrouter-midstream-error.sse": (c) => {
    assert.equal(c.outcome.status, "failed");
    assert.match(c.outcome.error_message!, /Token limit reached/);
    assert.equal(c.usage, undefined);
  },
  "openai-chat/error-400-unsupported-value.json": (c) => {
    assert.equal(c.outcome.status, "failed");
    assert.equal(c.outcome.permanent, true);
    assert.match(c.outcome.error_message!, /unsupported_value/);
  },
  "openai-chat/ollama-gemma4-text.sse": (c) => {
    assert.equal(texts(c).join(""), "I'm fine, thank you.");
    assert.deepEqual(c.usage, { cache_read: 0, cache_write: 0, output: 0, total: 0 });
  },
  "openai-chat/ollama-qwen3-nonstream.json": (c) => {
    assert.equal(thinkings(c)[0]?.fidelity?.reasoning_field, "reasoning");
    assert.deepEqual(JSON.parse(texts(c).join("")), { city: "Paris", country: "France" });
  },
  "openai-chat/llamacpp-gpt-oss-reasoning-tool-call.sse": (c) => {
    assert.equal(thinkings(c)[0]?.fidelity?.reasoning_field, "reasoning_content");
    assert.equal(calls(c)[0]?.tool_call_id, "1wNpqrejg1FCTjf6xq8JRCGKgWZO74AL");
  },
  "openai-responses/text-gpt4o.sse": (c) => {
    assert.deepEqual(texts(c), ["Olá!"]);
    assert.deepEqual(c.usage, { cache_read: 0, cache_write: 20, output: 3, total: 23 });
  },
  "openai-responses/reasoning-encrypted-function-call-gpt5.sse": (c) => {
    const [t] = thinkings(c);
    assert.equal(t?.thinking, "");
    assert.equal(t?.fidelity?.id, "rs_0050471a34b36ae60068c97bac4dcc819595fd0f80d6b3c405");
    assert.match(
      t?.fidelity?.encrypted_content as string,
      /^gAAAAABoyXvx/,
      "the value from output_item.done",
    );
    assert.deepEqual(JSON.parse(calls(c)[0]!.arguments), { result: 6666 });
  },
  "openai-responses/reasoning-summary-encrypted-function-call-gpt5.sse": (c) => {
    const [t] = thinkings(c);
    assert.match(t!.thinking, /^\*\*Getting weather info\*\*/);
    assert.equal(t?.fidelity?.channel, "summary");
    assert.equal(typeof t?.fidelity?.encrypted_content, "string");
    assert.equal(calls(c)[0]?.tool_call_id, "call_zgUaIBRPTwxxOusyyKw5NVMH");
  },
  "openai-responses/web-search-call-cached-tokens-gpt5.sse": (c) => {
    assert.equal(thinkings(c).length, 2, "two reasoning items stay two blocks");
    assert.equal(c.usage?.cache_read, 8320);
    assert.match(texts(c).join(""), /^San Francisco weather today/);
  },
  "openai-responses/error-insufficient-quota.sse": (c) => {
    assert.equal(c.outcome.status, "failed");
    assert.match(c.outcome.error_message!, /insufficient_quota/);
  },
  "openai-responses/lmstudio-glm47-reasoning-text-tool-call.sse": (c) => {
    assert.deepEqual(c.completes.map((m) => m.type), ["thinking", "text", "tool_call"]);
    assert.deepEqual(JSON.parse(calls(c)[0]!.arguments), { location: "San Francisco" });
    assert.equal(c.usage?.cache_read, 2);
  },
  "openai-responses/error-400-invalid-request.json": (c) => {
    assert.equal(c.outcome.status, "failed");
    assert.equal(c.outcome.permanent, true);
  },
};

/** Replay the parsed turn: every fidelity value must reach the request body verbatim. */
function assertReplayCarriesFidelity(protocol: WireProtocol, completes: CompleteMessage[]): void {
  const history: CompleteMessage[] = [
    { type: "text", role: "user", text: "go", stop_reason: "completed" },
    ...completes,
  ];
  const req = wireModule(protocol).buildRequest({
    endpoint: { provider: "openai", model_id: "m", protocol, base_url: "http://127.0.0.1:1/v1" },
    system_prompt: "sys",
    tools: [],
    history,
  });
  const body = JSON.parse(req.body) as Record<string, unknown>;
  for (const m of completes) {
    if (m.type === "tool_call") {
      assert.ok(req.body.includes(JSON.stringify(m.tool_call_id)), "tool call id replayed");
    }
    const f = (m as { fidelity?: Record<string, unknown> }).fidelity;
    if (!f) continue;
    if (protocol === "openai-chat") {
      const msgs = body.messages as Record<string, unknown>[];
      const assistant = msgs.find((x) => x.role === "assistant")!;
      if (typeof f.reasoning_field === "string") {
        assert.equal(
          assistant[f.reasoning_field],
          (m as ThinkingMessage).thinking,
          "thinking in its own field",
        );
      }
      if (f.reasoning_details) {
        assert.deepEqual(
          assistant.reasoning_details,
          f.reasoning_details,
          "reasoning_details verbatim",
        );
      }
    } else if (typeof f.encrypted_content === "string") {
      const items = body.input as Record<string, unknown>[];
      const r = items.find((x) => x.type === "reasoning" && x.id === f.id);
      assert.ok(r, "reasoning item replayed with its id");
      assert.equal(r.encrypted_content, f.encrypted_content, "encrypted_content verbatim");
    }
  }
}

for (const protocol of PROTOCOLS) {
  for (const name of fixtureFiles(protocol)) {
    const key = `${protocol}/${name}`;
    Deno.test(`fixture ${key} streams into well-formed messages and an outcome`, async () => {
      const c = await runFixture(protocol, name);
      assertPartialDiscipline(c.messages);
      if (name.startsWith("error")) {
        assert.notEqual(c.outcome.status, "completed", "error fixtures do not complete");
        assert.equal(c.usage, undefined, "no usage on failure");
        assert.ok(c.outcome.error_message, "failures carry a message");
      }
      if (c.outcome.status === "completed") {
        assert.ok(c.usage, "completed requests report usage");
        assert.equal(c.usage.total, c.usage.cache_read + c.usage.cache_write + c.usage.output);
        assert.ok(c.completes.length >= 1, "completed requests yield a complete message");
        for (const call of calls(c)) assert.doesNotThrow(() => JSON.parse(call.arguments));
        assertReplayCarriesFidelity(protocol, c.completes);
      } else assert.equal(c.usage, undefined);
      EXPECT[key]?.(c);
    });
  }
}

Deno.test("every named fixture expectation refers to an existing file", () => {
  const all = new Set(PROTOCOLS.flatMap((p) => fixtureFiles(p).map((n) => `${p}/${n}`)));
  for (const key of Object.keys(EXPECT)) assert.ok(all.has(key), `${key} exists`);
});
