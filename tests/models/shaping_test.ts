import assert from "node:assert/strict";
import {
  anthropicThinking,
  chatReasoning,
  clampMaxTokens,
  estimateHistoryTokens,
  estimateTokens,
  geminiThinkingConfig,
  IMAGE_TOKENS,
  responsesReasoning,
} from "../../lib/models/shaping.ts";
import type { ModelEndpoint } from "../../lib/models/wire.ts";

Deno.test("the estimate is ceil(ASCII chars / 4) plus one per non-ASCII char", () => {
  assert.equal(estimateTokens(""), 0);
  assert.equal(estimateTokens("abcd"), 1);
  assert.equal(estimateTokens("abcde"), 2);
  assert.equal(estimateTokens("你好"), 2);
  assert.equal(estimateTokens("ab你好"), 3);
  assert.equal(estimateTokens("😀"), 1, "counted per code point");
});

Deno.test("images count 1600 tokens, also inside tool outputs", () => {
  const n = estimateHistoryTokens([
    { type: "image_url", role: "user", image_url: "https://x/y.png", stop_reason: "completed" },
    {
      type: "tool_call_output",
      role: "user",
      output: "abcd",
      images: ["data:a", "data:b"],
      tool_call_id: "c",
      stop_reason: "completed",
    },
  ]);
  assert.equal(n, IMAGE_TOKENS + 1 + 2 * IMAGE_TOKENS);
});

Deno.test("max_tokens clamps to the window minus input and a 1024 reserve, floored at 512", () => {
  assert.equal(clampMaxTokens(8000, 100_000, 10_000), 8000);
  assert.equal(clampMaxTokens(8000, 12_000, 5_000), 12_000 - 5_000 - 1024);
  assert.equal(clampMaxTokens(8000, 12_000, 11_900), 512);
  assert.equal(clampMaxTokens(8000, "unknown", 1_000_000), 8000, "no clamp without a window");
  assert.equal(clampMaxTokens(0, 100_000, 10), undefined, "≤ 0 sends none");
  assert.equal(clampMaxTokens(undefined, 100_000, 10), undefined);
});

const ep = (provider: string, model_id: string): ModelEndpoint => ({
  provider,
  model_id,
  protocol: "openai-chat",
  base_url: "https://x/v1",
});

Deno.test("chat reasoning_effort is mapped per provider family", () => {
  assert.deepEqual(chatReasoning(undefined, ep("openai", "gpt-5.5")), {});
  assert.deepEqual(chatReasoning("none", ep("openai", "gpt-5.5")), { reasoning_effort: "none" });
  assert.deepEqual(chatReasoning("max", ep("openrouter", "x-ai/grok-4.5")), {
    reasoning_effort: "xhigh",
  });
  assert.deepEqual(chatReasoning("medium", ep("deepseek", "deepseek-v4-pro")), {
    reasoning_effort: "high",
  });
  assert.deepEqual(chatReasoning("max", ep("deepseek", "deepseek-v4-pro")), {
    reasoning_effort: "max",
  });
  assert.deepEqual(chatReasoning("none", ep("deepseek", "deepseek-v4-pro")), {});
  assert.deepEqual(chatReasoning("none", ep("minimax", "MiniMax-M3")), {
    reasoning_effort: "none",
  });
  assert.deepEqual(chatReasoning("xhigh", ep("custom", "qwen3")), { reasoning_effort: "high" });
  assert.deepEqual(chatReasoning("none", ep("custom", "qwen3")), {});
});

Deno.test("responses reasoning asks for summaries and encrypted content", () => {
  assert.deepEqual(responsesReasoning("high"), {
    reasoning: { effort: "high", summary: "auto" },
    include: ["reasoning.encrypted_content"],
  });
  assert.equal(responsesReasoning("max").reasoning.effort, "xhigh");
  assert.deepEqual(responsesReasoning("none").reasoning, { effort: "none" });
  assert.deepEqual(responsesReasoning(undefined).reasoning, { summary: "auto" });
});

Deno.test("anthropic thinking: disabled, adaptive with effort, or a budget below max_tokens", () => {
  assert.deepEqual(anthropicThinking(undefined, 32000), {});
  assert.deepEqual(anthropicThinking("none", 32000), { thinking: { type: "disabled" } });
  assert.deepEqual(anthropicThinking("high", 32000), {
    thinking: { type: "adaptive" },
    output_config: { effort: "high" },
  });
  assert.equal(anthropicThinking("max", 32000).output_config?.effort, "max");
  assert.deepEqual(anthropicThinking("medium", 32000, { adaptive: false }), {
    thinking: { type: "enabled", budget_tokens: 16000 },
  });
  assert.deepEqual(anthropicThinking("low", 1024, { adaptive: false }), {
    thinking: { type: "disabled" },
  });
});

Deno.test("gemini thinking: levels for Gemini 3, budgets for Gemini 2", () => {
  assert.deepEqual(geminiThinkingConfig("high", "gemini-3.5-flash"), {
    thinkingLevel: "high",
    includeThoughts: true,
  });
  assert.deepEqual(geminiThinkingConfig("max", "gemini-3.5-flash"), {
    thinkingLevel: "high",
    includeThoughts: true,
  });
  assert.deepEqual(geminiThinkingConfig("none", "gemini-3.5-flash"), {
    thinkingLevel: "minimal",
    includeThoughts: false,
  });
  assert.deepEqual(geminiThinkingConfig("none", "gemini-2.5-flash"), { thinkingBudget: 0 });
  assert.deepEqual(geminiThinkingConfig("low", "gemini-2.5-pro"), {
    thinkingBudget: 1024,
    includeThoughts: true,
  });
});
