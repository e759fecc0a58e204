/**
 * The model layer: provider catalog and model resolution, the four wire
 * protocols, the streaming driver that turns one request into OmniMessage
 * partials, complete messages, usage and a classified outcome, plus the
 * retry ladder, tool-call id allocation and request shaping.
 *
 * @module
 */
export type * from "./wire.ts";
export type { ModelOutcome, ModelStreamItem } from "./outcome.ts";
export { DEFAULT_IDLE_TIMEOUT_MS, streamModel, type StreamModelOptions } from "./stream.ts";
export { createTranslator, type Translator, type TranslatorState } from "./translate.ts";
export {
  classifyException,
  classifyHttpError,
  classifyStreamError,
  describeError,
  isAuthCode,
  isTransportStatus,
  MALFORMED_CODE,
  parseRetryAfter,
} from "./classify.ts";
export {
  interruptibleSleep,
  MAX_RETRIES,
  MAX_RETRY_AFTER_MS,
  retryDelayMs,
  shouldRetry,
} from "./retry.ts";
export { createToolCallIds, outboundToolCallId, type ToolCallIds } from "./tool_call_ids.ts";
export {
  anthropicThinking,
  type AnthropicThinkingFields,
  chatReasoning,
  CLAMP_FLOOR,
  CLAMP_RESERVE,
  clampMaxTokens,
  estimateHistoryTokens,
  estimateMessageTokens,
  estimatePromptTokens,
  estimateTokens,
  type GeminiThinkingConfig,
  geminiThinkingConfig,
  IMAGE_TOKENS,
  responsesReasoning,
} from "./shaping.ts";
export { WIRE_MODULES, wireModule } from "./protocols/mod.ts";
export * from "./catalog.ts";
export * from "./resolve.ts";
