/**
 * The provider catalog as data: provider groups, their endpoints and protocols, and model presets. Edit this file to add a
 * provider group or a model preset; `catalog.ts` only reads it.
 *
 * Prices are list prices per one million tokens in the block's currency, in
 * the order cache_read / cache_write (uncached input) / output. CNY blocks
 * are converted to USD at 1 USD = 7 CNY, rounded to 6 decimals.
 *
 * @module
 */
import type { WireProtocol } from "./wire.ts";

/** How a provider group is reached. */
export type ProviderKind = "vendor" | "gateway" | "local" | "custom";

/** One provider group. */
export interface ProviderGroup {
  /** Group id used in `(provider, model_id)` pairs. */
  id: string;
  /** Human name. */
  label: string;
  /** Vendor API, multi-vendor gateway, local server, or user-defined. */
  kind: ProviderKind;
  /** Default wire protocol. */
  protocol: WireProtocol;
  /** Default base URL (no trailing slash); none for `custom`. */
  base_url?: string;
  /** The ONE env var this group's key may come from; none for local servers and `custom`. */
  api_key_env?: string;
  /** Whether requests need a key at all. */
  key_required: boolean;
  /** Whether the provider has a fast (priority) tier penguin can request. */
  fast_mode: boolean;
}

/** Provider groups, in display order. */
export const GROUPS: readonly ProviderGroup[] = [
  {
    id: "deepseek",
    label: "DeepSeek",
    kind: "vendor",
    protocol: "openai-chat",
    base_url: "https://api.deepseek.com",
    api_key_env: "DEEPSEEK_API_KEY",
    key_required: true,
    fast_mode: false,
  },
  {
    id: "openrouter",
    label: "OpenRouter",
    kind: "gateway",
    protocol: "openai-chat",
    base_url: "https://openrouter.ai/api/v1",
    api_key_env: "OPENROUTER_API_KEY",
    key_required: true,
    fast_mode: false,
  },
  {
    id: "fireworks",
    label: "Fireworks AI",
    kind: "gateway",
    protocol: "openai-chat",
    base_url: "https://api.fireworks.ai/inference/v1",
    api_key_env: "FIREWORKS_API_KEY",
    key_required: true,
    fast_mode: false,
  },
  {
    id: "siliconflow",
    label: "SiliconFlow",
    kind: "gateway",
    protocol: "openai-chat",
    base_url: "https://api.siliconflow.cn/v1",
    api_key_env: "SILICONFLOW_API_KEY",
    key_required: true,
    fast_mode: false,
  },
  {
    id: "qwen-token-plan",
    label: "Qwen Token Plan",
    kind: "gateway",
    protocol: "openai-chat",
    base_url: "https://token-plan.cn-beijing.maas.aliyuncs.com/compatible-mode/v1",
    api_key_env: "QWEN_TOKEN_PLAN_API_KEY",
    key_required: true,
    fast_mode: false,
  },
  {
    id: "qwen-pay-as-you-go",
    label: "Qwen Pay-As-You-Go (DashScope)",
    kind: "gateway",
    protocol: "openai-chat",
    base_url: "https://dashscope.aliyuncs.com/compatible-mode/v1",
    api_key_env: "DASHSCOPE_API_KEY",
    key_required: true,
    fast_mode: false,
  },
  {
    id: "google",
    label: "Google Gemini",
    kind: "vendor",
    protocol: "gemini",
    base_url: "https://generativelanguage.googleapis.com/v1beta",
    api_key_env: "GEMINI_API_KEY",
    key_required: true,
    fast_mode: false,
  },
  {
    id: "anthropic",
    label: "Anthropic",
    kind: "vendor",
    protocol: "anthropic-messages",
    base_url: "https://api.anthropic.com",
    api_key_env: "ANTHROPIC_API_KEY",
    key_required: true,
    fast_mode: true,
  },
  {
    id: "openai",
    label: "OpenAI",
    kind: "vendor",
    protocol: "openai-responses",
    base_url: "https://api.openai.com/v1",
    api_key_env: "OPENAI_API_KEY",
    key_required: true,
    fast_mode: true,
  },
  {
    id: "zhipu",
    label: "Zhipu (Z.ai)",
    kind: "vendor",
    protocol: "openai-chat",
    base_url: "https://api.z.ai/api/paas/v4",
    api_key_env: "ZAI_API_KEY",
    key_required: true,
    fast_mode: false,
  },
  {
    id: "moonshot",
    label: "Moonshot (Kimi)",
    kind: "vendor",
    protocol: "openai-chat",
    base_url: "https://api.moonshot.ai/v1",
    api_key_env: "MOONSHOT_API_KEY",
    key_required: true,
    fast_mode: false,
  },
  {
    id: "minimax",
    label: "MiniMax",
    kind: "vendor",
    protocol: "openai-chat",
    base_url: "https://api.minimax.io/v1",
    api_key_env: "MINIMAX_API_KEY",
    key_required: true,
    fast_mode: false,
  },
  {
    id: "ollama",
    label: "Ollama (local)",
    kind: "local",
    protocol: "openai-chat",
    base_url: "http://127.0.0.1:11434/v1",
    key_required: false,
    fast_mode: false,
  },
  {
    id: "vllm",
    label: "vLLM (local)",
    kind: "local",
    protocol: "openai-chat",
    base_url: "http://127.0.0.1:8000/v1",
    key_required: false,
    fast_mode: false,
  },
  {
    id: "llamacpp",
    label: "llama.cpp server (local)",
    kind: "local",
    protocol: "openai-chat",
    base_url: "http://127.0.0.1:8080/v1",
    key_required: false,
    fast_mode: false,
  },
  {
    id: "lmstudio",
    label: "LM Studio (local)",
    kind: "local",
    protocol: "openai-chat",
    base_url: "http://127.0.0.1:1234/v1",
    key_required: false,
    fast_mode: false,
  },
  {
    id: "custom",
    label: "Custom endpoint",
    kind: "custom",
    protocol: "openai-chat",
    key_required: false,
    fast_mode: false,
  },
];

/** `[model_id, context_window, vision, cache_read, cache_write, output]`. */
export type PresetRow = readonly [string, number, boolean, number, number, number];

/** A block of presets of one group in one currency. */
export interface PresetBlock {
  /** Group id. */
  provider: string;
  /** Currency of the prices in `rows`. */
  currency: "USD" | "CNY";
  /** Prepended to every model id of the block. */
  prefix?: string;
  /** Wire protocol for rows whose model id starts with the key (after the prefix). */
  protocol_by_prefix?: Readonly<Record<string, WireProtocol>>;
  /**
   * The model id (without the prefix) of the block's recommended preset: the
   * one a first run suggests. A mid-priced model, never the most expensive
   * of the block when its prices differ.
   */
  recommended: string;
  /** The presets. */
  rows: readonly PresetRow[];
}

const M = 1_000_000;
const V = true;
const T = false; // text only

/** Model presets: 96 rows in 12 blocks. */
export const PRESET_BLOCKS: readonly PresetBlock[] = [
  {
    provider: "deepseek",
    recommended: "deepseek-v4-flash",
    currency: "CNY",
    rows: [
      ["deepseek-v4-flash", M, T, 0.05, 1.5, 4.5],
      ["deepseek-v4-flash-vision-exp", M, V, 0.05, 1.5, 4.5],
      ["deepseek-v4-pro", M, T, 0.15, 4.5, 13.5],
    ],
  },
  {
    provider: "openrouter",
    recommended: "anthropic/claude-sonnet-5",
    currency: "USD",
    protocol_by_prefix: { "openai/": "openai-responses" },
    rows: [
      ["anthropic/claude-fable-5", M, V, 1, 12.5, 50],
      ["anthropic/claude-opus-5", M, V, 0.5, 6.25, 25],
      ["anthropic/claude-opus-4.8", M, V, 0.5, 6.25, 25],
      ["anthropic/claude-opus-4.7", M, V, 0.5, 6.25, 25],
      ["anthropic/claude-sonnet-5", M, V, 0.2, 2.5, 10],
      ["deepseek/deepseek-v4-flash-0731", M, T, 0.0157192, 0.078596, 0.157192],
      ["deepseek/deepseek-v4-flash", M, T, 0.0168, 0.0679, 0.168],
      ["deepseek/deepseek-v4-flash-vision-exp", 1048576, V, 0.007, 0.22, 0.66],
      ["deepseek/deepseek-v4-pro-0813", 1048576, T, 0.022, 0.66, 1.98],
      ["deepseek/deepseek-v4-pro", M, T, 0.022, 0.66, 1.98],
      ["google/gemini-3.7-flash", 1048576, V, 0.0375, 0.375, 1.875],
      ["google/gemini-3.6-flash", 1048576, V, 0.15, 1.5, 7.5],
      ["google/gemini-3.5-flash", 1048576, V, 0.15, 1.5, 9],
      ["google/gemini-3.5-flash-lite", 1048576, V, 0.03, 0.3, 2.5],
      ["minimax/minimax-m3", 1048576, V, 0.06, 0.3, 1.2],
      ["moonshotai/kimi-k3", M, V, 0.3, 3, 15],
      ["moonshotai/kimi-k2.6", 262144, V, 0.0992, 0.589, 2.48],
      ["nvidia/nemotron-3-ultra-550b-a55b:free", M, T, 0, 0, 0],
      ["openai/gpt-5.6-luna", 1050000, V, 0.02, 0.25, 1.2],
      ["openai/gpt-5.6-sol", 1050000, V, 0.25, 3.125, 15],
      ["openai/gpt-5.6-terra", 1050000, V, 0.2, 2.5, 12],
      ["openai/gpt-5.5", 1050000, V, 0.5, 5, 30],
      ["openai/gpt-5.5-pro", 1050000, V, 30, 30, 180],
      ["openai/gpt-5.4", 1050000, V, 0.25, 2.5, 15],
      ["openai/gpt-5.4-mini", 400000, V, 0.075, 0.75, 4.5],
      ["openai/gpt-5.4-nano", 400000, V, 0.02, 0.2, 1.25],
      ["openai/gpt-5.4-pro", 1050000, V, 30, 30, 180],
      ["openrouter/free", 128000, T, 0, 0, 0],
      ["qwen/qwen3.8-max", M, V, 0.25, 2.5, 6],
      ["qwen/qwen3.6-35b-a3b", 262144, V, 0.05, 0.14, 1],
      ["stepfun/step-3.7-flash", 256000, V, 0.04, 0.2, 1.15],
      ["tencent/hy3", 262144, T, 0.033, 0.132, 0.528],
      ["thinkingmachines/inkling", M, V, 0.17, 1, 4.05],
      ["x-ai/grok-4.6", 500000, V, 0.5, 2, 6],
      ["x-ai/grok-4.5", 500000, V, 0.3, 2, 6],
      ["xiaomi/mimo-v2.5", 1048576, V, 0.0028, 0.14, 0.28],
      ["z-ai/glm-5.3", 1048576, T, 0.26, 1.4, 4.4],
      ["z-ai/glm-5.2", M, T, 0.1261, 0.679, 2.134],
    ],
  },
  {
    provider: "fireworks",
    recommended: "deepseek-v4-pro",
    currency: "USD",
    prefix: "accounts/fireworks/models/",
    rows: [
      ["deepseek-v4-flash-0731", M, T, 0.028, 0.14, 0.28],
      ["deepseek-v4-flash", M, T, 0.03, 0.14, 0.28],
      ["deepseek-v4-pro", M, T, 0.15, 1.74, 3.48],
      ["glm-5p2", M, T, 0.14, 1.4, 4.4],
      ["inkling", M, V, 0.17, 1, 4.05],
      ["kimi-k3", M, V, 0.3, 3, 15],
      ["kimi-k2p7-code", 262144, V, 0.19, 0.95, 4],
      ["minimax-m3", 524288, V, 0.06, 0.3, 1.2],
    ],
  },
  {
    provider: "siliconflow",
    recommended: "deepseek-ai/DeepSeek-V4-Pro",
    currency: "CNY",
    rows: [
      ["deepseek-ai/DeepSeek-V4-Flash", M, T, 0.02, 1, 2],
      ["deepseek-ai/DeepSeek-V4-Pro", M, T, 0.1, 12, 24],
      ["meituan-longcat/LongCat-2.0", M, T, 0.1, 5, 20],
      ["moonshotai/Kimi-K2.7-Code", 262144, V, 1.3, 6.5, 27],
      ["Pro/moonshotai/Kimi-K2.6", 262144, V, 1.1, 6.5, 27],
      ["Qwen/Qwen3.6-35B-A3B", 262144, V, 1.8, 1.8, 10.8],
      ["zai-org/GLM-5.2", M, T, 2, 8, 28],
    ],
  },
  {
    provider: "qwen-token-plan",
    recommended: "qwen3.7-plus",
    currency: "CNY",
    rows: [
      ["deepseek-v4-flash-0731", M, T, 0.2, 1, 2],
      ["deepseek-v4-pro", M, T, 1, 12, 24],
      ["glm-5.2", 1048576, T, 2, 8, 28],
      ["qwen3.8-max", M, V, 1.5, 12, 36],
      ["qwen3.7-plus", M, V, 0.4, 2, 8],
    ],
  },
  {
    provider: "qwen-pay-as-you-go",
    recommended: "qwen3.7-plus",
    currency: "CNY",
    rows: [
      ["deepseek-v4-flash-0731", M, T, 0.2, 1, 2],
      ["kimi/kimi-k3", 1048576, V, 2, 20, 100],
      ["qwen3.8-max", M, V, 1.5, 12, 36],
      ["qwen3.7-plus", M, V, 0.4, 2, 8],
      ["ZHIPU/GLM-5.2", 1048576, T, 2, 8, 28],
    ],
  },
  {
    provider: "minimax",
    recommended: "MiniMax-M3",
    currency: "USD",
    rows: [
      ["MiniMax-M3", M, V, 0.06, 0.3, 1.2],
    ],
  },
  {
    provider: "google",
    recommended: "gemini-3.7-flash",
    currency: "USD",
    rows: [
      ["gemini-3.7-flash", 1048576, V, 0.15, 1.5, 7.5],
      ["gemini-3.6-flash", 1048576, V, 0.15, 1.5, 7.5],
      ["gemini-3.5-flash", 1048576, V, 0.15, 1.5, 9],
      ["gemini-3.5-flash-lite", 1048576, V, 0.03, 0.3, 2.5],
      ["gemini-3.1-flash-lite", 1048576, V, 0.025, 0.25, 1.5],
      ["gemini-3.1-pro-preview", 1048576, V, 0.2, 2, 12],
      ["gemini-3-flash-preview", 1048576, V, 0.05, 0.5, 3],
    ],
  },
  {
    provider: "anthropic",
    recommended: "claude-sonnet-5",
    currency: "USD",
    rows: [
      ["claude-fable-5", M, V, 1, 12.5, 50],
      ["claude-opus-5", M, V, 0.5, 6.25, 25],
      ["claude-opus-4-8", M, V, 0.5, 6.25, 25],
      ["claude-opus-4-7", M, V, 0.5, 6.25, 25],
      ["claude-sonnet-5", M, V, 0.2, 2.5, 10],
      ["claude-sonnet-4-6", M, V, 0.3, 3.75, 15],
    ],
  },
  {
    provider: "openai",
    recommended: "gpt-5.6-terra",
    currency: "USD",
    rows: [
      ["gpt-5.6", 1050000, V, 0.5, 5, 30],
      ["gpt-5.6-luna", 1050000, V, 0.02, 0.2, 1.2],
      ["gpt-5.6-terra", 1050000, V, 0.2, 2, 12],
      ["gpt-5.5", 1050000, V, 0.5, 5, 30],
      ["gpt-5.5-pro", 1050000, V, 30, 30, 180],
      ["gpt-5.4", 1050000, V, 0.25, 2.5, 15],
      ["gpt-5.4-mini", 400000, V, 0.075, 0.75, 4.5],
      ["gpt-5.4-nano", 400000, V, 0.02, 0.2, 1.25],
      ["gpt-5.4-pro", 1050000, V, 30, 30, 180],
    ],
  },
  {
    provider: "zhipu",
    recommended: "glm-5",
    currency: "USD",
    rows: [
      ["glm-5.3", M, T, 0.26, 1.4, 4.4],
      ["glm-5.2", M, T, 0.26, 1.4, 4.4],
      ["glm-5.1", 200000, T, 0.26, 1.4, 4.4],
      ["glm-5", 200000, T, 0.2, 1, 3.2],
    ],
  },
  {
    provider: "moonshot",
    recommended: "kimi-k2.6",
    currency: "CNY",
    rows: [
      ["kimi-k3", 1048576, V, 2, 20, 100],
      ["kimi-k2.6", 262144, V, 1.1, 6.5, 27],
      ["kimi-k2.5", 262144, V, 0.7, 4, 21],
    ],
  },
];
