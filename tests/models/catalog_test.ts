import assert from "node:assert/strict";
import {
  cnyToUsd,
  findPreset,
  findProviderGroup,
  MODEL_PRESETS,
  presetsOf,
  PROVIDER_GROUPS,
} from "../../lib/models/catalog.ts";

const PROTOCOLS = ["openai-chat", "openai-responses", "anthropic-messages", "gemini"];

Deno.test("catalog: the provider groups, their protocols and their own key env vars", () => {
  const table = PROVIDER_GROUPS.map((g) => [g.id, g.protocol, g.api_key_env ?? null]);
  assert.deepEqual(table, [
    ["deepseek", "openai-chat", "DEEPSEEK_API_KEY"],
    ["openrouter", "openai-chat", "OPENROUTER_API_KEY"],
    ["fireworks", "openai-chat", "FIREWORKS_API_KEY"],
    ["siliconflow", "openai-chat", "SILICONFLOW_API_KEY"],
    ["qwen-token-plan", "openai-chat", "QWEN_TOKEN_PLAN_API_KEY"],
    ["qwen-pay-as-you-go", "openai-chat", "DASHSCOPE_API_KEY"],
    ["google", "gemini", "GEMINI_API_KEY"],
    ["anthropic", "anthropic-messages", "ANTHROPIC_API_KEY"],
    ["openai", "openai-responses", "OPENAI_API_KEY"],
    ["zhipu", "openai-chat", "ZAI_API_KEY"],
    ["moonshot", "openai-chat", "MOONSHOT_API_KEY"],
    ["minimax", "openai-chat", "MINIMAX_API_KEY"],
    ["ollama", "openai-chat", null],
    ["vllm", "openai-chat", null],
    ["llamacpp", "openai-chat", null],
    ["lmstudio", "openai-chat", null],
    ["custom", "openai-chat", null],
  ]);
});

Deno.test("catalog: every group has a protocol and a clean base URL; no env var is shared", () => {
  const envs = new Set<string>();
  for (const g of PROVIDER_GROUPS) {
    assert.ok(PROTOCOLS.includes(g.protocol), g.id);
    if (g.kind === "custom") {
      assert.equal(g.base_url, undefined);
      assert.equal(g.api_key_env, undefined);
      assert.equal(g.key_required, false);
      continue;
    }
    assert.ok(g.base_url, g.id);
    const url = new URL(g.base_url);
    assert.ok(!g.base_url.endsWith("/"), g.id);
    if (g.kind === "local") {
      assert.equal(url.hostname, "127.0.0.1", g.id);
      assert.equal(g.key_required, false, g.id);
      assert.equal(g.api_key_env, undefined, g.id);
    } else {
      assert.equal(url.protocol, "https:", g.id);
      assert.equal(g.key_required, true, g.id);
      assert.ok(g.api_key_env && !envs.has(g.api_key_env), `${g.id}: own env var`);
      envs.add(g.api_key_env);
    }
  }
});

Deno.test("catalog: presets are unique pairs of known groups with sane numbers", () => {
  assert.equal(MODEL_PRESETS.length, 96);
  const seen = new Set<string>();
  for (const p of MODEL_PRESETS) {
    const key = `${p.provider}\u0000${p.model_id}`;
    assert.ok(!seen.has(key), `duplicate ${p.provider} ${p.model_id}`);
    seen.add(key);
    const group = findProviderGroup(p.provider);
    assert.ok(group && group.kind !== "local" && group.kind !== "custom", p.provider);
    assert.ok(Number.isInteger(p.context_window) && p.context_window >= 128000, p.model_id);
    for (const v of Object.values(p.pricing)) {
      assert.ok(Number.isFinite(v) && v >= 0, `${p.model_id} price ${v}`);
    }
    if (p.client_type) assert.ok(PROTOCOLS.includes(p.client_type));
    assert.equal(findPreset(p.provider, p.model_id), p);
  }
});

Deno.test("catalog: CNY list prices are converted at /7 and rounded to 6 decimals", () => {
  assert.equal(cnyToUsd(13.5), 1.928571);
  assert.equal(cnyToUsd(7), 1);
  assert.deepEqual(findPreset("deepseek", "deepseek-v4-pro")!.pricing, {
    cache_read: cnyToUsd(0.15),
    cache_write: cnyToUsd(4.5),
    output: cnyToUsd(13.5),
  });
  assert.deepEqual(findPreset("moonshot", "kimi-k3")!.pricing, {
    cache_read: cnyToUsd(2),
    cache_write: cnyToUsd(20),
    output: cnyToUsd(100),
  });
  // USD blocks are taken as listed.
  assert.deepEqual(findPreset("anthropic", "claude-sonnet-4-6")!.pricing, {
    cache_read: 0.3,
    cache_write: 3.75,
    output: 15,
  });
});

Deno.test("catalog: openrouter openai/* presets pin openai-responses; fireworks ids carry their prefix", () => {
  for (const p of presetsOf("openrouter")) {
    assert.equal(
      p.client_type,
      p.model_id.startsWith("openai/") ? "openai-responses" : undefined,
      p.model_id,
    );
  }
  const fw = presetsOf("fireworks");
  assert.ok(fw.length > 0);
  for (const p of fw) assert.match(p.model_id, /^accounts\/fireworks\/models\/[^/]+$/);
  assert.equal(findPreset("deepseek", "not-a-model"), undefined);
  assert.equal(findProviderGroup("nope"), undefined);
});
