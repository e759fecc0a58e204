/**
 * Request shaping: the clamp that keeps the output-token limit
 * inside the context window left after the estimated input,
 * and the per-protocol mapping of thinking levels.
 *
 * Thinking-level choices (documented in the model-layer report):
 * - openai-chat sends `reasoning_effort`. OpenAI, OpenRouter and MiniMax
 *   accept `none` and `xhigh` (`max` → `xhigh`); DeepSeek accepts
 *   low/high/max (medium, xhigh → high; `none` → omitted = provider default);
 *   every other OpenAI-compatible server gets low/medium/high (`xhigh`, `max`
 *   → high; `none` → omitted, since many local servers reject unknown values).
 * - openai-responses sends `reasoning.effort` (`max` → `xhigh`) with
 *   `summary: "auto"` and always includes `reasoning.encrypted_content`.
 * - anthropic: `none` → `{type: "disabled"}`; otherwise adaptive thinking +
 *   `output_config.effort` (low/medium/high, `xhigh`/`max` → `max`), or a
 *   budget (`{type: "enabled", budget_tokens}`) for pre-4.6 models.
 * - gemini: `thinkingLevel` (`none` → minimal without thoughts; `xhigh`/`max`
 *   → high) for Gemini 3; `thinkingBudget` for Gemini 2.x.
 *
 * @module
 */
import type { CompleteMessage, ToolSpec } from "../protocol/types.ts";
import type { ModelEndpoint, ThinkingLevel } from "./wire.ts";

/** Flat token estimate of one image (also each image in a tool output). */
export const IMAGE_TOKENS = 1600;

/** Output room reserved besides the estimated input. */
export const CLAMP_RESERVE = 1024;

/** The clamp never goes below this. */
export const CLAMP_FLOOR = 512;

/** Token estimate of a text: ceil(ASCII chars / 4) + non-ASCII chars. */
export function estimateTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (const ch of text) {
    if (ch.codePointAt(0)! < 128) ascii++;
    else other++;
  }
  return Math.ceil(ascii / 4) + other;
}

/** Token estimate of one complete message (images count {@linkcode IMAGE_TOKENS}). */
export function estimateMessageTokens(m: CompleteMessage): number {
  switch (m.type) {
    case "text":
      return estimateTokens(m.text);
    case "thinking":
      return estimateTokens(m.thinking);
    case "tool_call":
      return estimateTokens(m.name) + estimateTokens(m.arguments);
    case "tool_call_output":
      return estimateTokens(m.output) + (m.images?.length ?? 0) * IMAGE_TOKENS;
    case "image_url":
      return IMAGE_TOKENS;
    case "inline_data":
      return m.mime_type.startsWith("image/") ? IMAGE_TOKENS : estimateTokens(m.data);
    case "inline_thinking":
      return 0;
  }
}

/** Token estimate of a system prompt plus tool definitions (the seed of the input estimate). */
export function estimatePromptTokens(systemPrompt: string, tools: ToolSpec[]): number {
  return estimateTokens(systemPrompt) +
    (tools.length > 0 ? estimateTokens(JSON.stringify(tools)) : 0);
}

/** Token estimate of a list of messages. */
export function estimateHistoryTokens(messages: CompleteMessage[]): number {
  let n = 0;
  for (const m of messages) n += estimateMessageTokens(m);
  return n;
}

/**
 * The `max_tokens` to send: undefined when not configured or ≤ 0; the
 * configured value when the window is unknown; else
 * `min(maxTokens, max(window − estimatedInput − 1024, 512))`.
 */
export function clampMaxTokens(
  maxTokens: number | undefined,
  contextWindow: number | "unknown" | undefined,
  estimatedInput: number,
): number | undefined {
  if (maxTokens === undefined || maxTokens <= 0) return undefined;
  if (typeof contextWindow !== "number" || contextWindow <= 0) return maxTokens;
  return Math.min(maxTokens, Math.max(contextWindow - estimatedInput - CLAMP_RESERVE, CLAMP_FLOOR));
}

type Family = "openai" | "deepseek" | "minimax" | "other";

function chatFamily(ep: ModelEndpoint): Family {
  const p = ep.provider.toLowerCase();
  const m = ep.model_id.toLowerCase();
  if (p === "openai" || p === "openrouter" || /(^|\/)(gpt-|o\d)/.test(m)) return "openai";
  if (m.includes("deepseek")) return "deepseek";
  if (p === "minimax" || m.includes("minimax")) return "minimax";
  return "other";
}

/** Chat Completions body fields for a thinking level (`reasoning_effort`), possibly none. */
export function chatReasoning(
  level: ThinkingLevel | undefined,
  ep: ModelEndpoint,
): { reasoning_effort?: string } {
  if (level === undefined) return {};
  const family = chatFamily(ep);
  // MiniMax takes OpenAI's levels.
  const openai: Record<ThinkingLevel, string> = {
    none: "none",
    low: "low",
    medium: "medium",
    high: "high",
    xhigh: "xhigh",
    max: "xhigh",
  };
  const table: Record<Family, Record<ThinkingLevel, string | undefined>> = {
    openai,
    minimax: openai,
    deepseek: {
      none: undefined,
      low: "low",
      medium: "high",
      high: "high",
      xhigh: "high",
      max: "max",
    },
    other: {
      none: undefined,
      low: "low",
      medium: "medium",
      high: "high",
      xhigh: "high",
      max: "high",
    },
  };
  const effort = table[family][level];
  return effort === undefined ? {} : { reasoning_effort: effort };
}

/** Responses body fields for a thinking level: `reasoning` and `include`. */
export function responsesReasoning(
  level: ThinkingLevel | undefined,
): { reasoning: { effort?: string; summary?: string }; include: string[] } {
  const include = ["reasoning.encrypted_content"];
  if (level === undefined) return { reasoning: { summary: "auto" }, include };
  if (level === "none") return { reasoning: { effort: "none" }, include };
  const effort = level === "max" ? "xhigh" : level;
  return { reasoning: { effort, summary: "auto" }, include };
}

/** Anthropic Messages body fields for a thinking level. */
export interface AnthropicThinkingFields {
  /** The `thinking` parameter. */
  thinking?:
    | { type: "disabled" }
    | { type: "adaptive" }
    | { type: "enabled"; budget_tokens: number };
  /** `output_config.effort` (adaptive thinking only). */
  output_config?: { effort: string };
}

/**
 * Anthropic thinking for `level`: `none` → disabled; otherwise adaptive
 * thinking with `output_config.effort` (default), or with `adaptive: false`
 * (models before 4.6) an explicit budget below `maxTokens`
 * (low ¼, medium ½, high/xhigh/max ¾ of it, at least 1024). Undefined level
 * → no fields (provider default).
 */
export function anthropicThinking(
  level: ThinkingLevel | undefined,
  maxTokens: number,
  opts: { adaptive?: boolean } = {},
): AnthropicThinkingFields {
  if (level === undefined) return {};
  if (level === "none") return { thinking: { type: "disabled" } };
  if (opts.adaptive ?? true) {
    const effort = level === "xhigh" || level === "max" ? "max" : level;
    return { thinking: { type: "adaptive" }, output_config: { effort } };
  }
  const share = level === "low" ? 0.25 : level === "medium" ? 0.5 : 0.75;
  const budget = Math.max(1024, Math.floor(maxTokens * share));
  if (budget >= maxTokens) return { thinking: { type: "disabled" } };
  return { thinking: { type: "enabled", budget_tokens: budget } };
}

/** Gemini `generationConfig.thinkingConfig`. */
export interface GeminiThinkingConfig {
  /** Gemini 3: `minimal|low|medium|high`. */
  thinkingLevel?: string;
  /** Gemini 2.x: token budget (0 = off, -1 = dynamic). */
  thinkingBudget?: number;
  /** Whether thought summaries are returned. */
  includeThoughts?: boolean;
}

/**
 * Gemini thinking config for `level` (undefined level → thoughts included,
 * provider-default depth). Gemini 2.x model ids get a `thinkingBudget`.
 */
export function geminiThinkingConfig(
  level: ThinkingLevel | undefined,
  modelId = "",
): GeminiThinkingConfig {
  if (level === undefined) return { includeThoughts: true };
  if (/gemini-2/.test(modelId.toLowerCase())) {
    const budgets: Record<ThinkingLevel, number> = {
      none: 0,
      low: 1024,
      medium: 8192,
      high: 24576,
      xhigh: -1,
      max: -1,
    };
    const thinkingBudget = budgets[level];
    return thinkingBudget === 0 ? { thinkingBudget } : { thinkingBudget, includeThoughts: true };
  }
  if (level === "none") return { thinkingLevel: "minimal", includeThoughts: false };
  const thinkingLevel = level === "xhigh" || level === "max" ? "high" : level;
  return { thinkingLevel, includeThoughts: true };
}
