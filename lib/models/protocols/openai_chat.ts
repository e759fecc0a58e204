/**
 * The OpenAI Chat Completions wire protocol (`openai-chat`), also spoken by
 * DeepSeek, OpenRouter, llama.cpp, Ollama, vLLM and other compatible servers:
 * `POST {base}/chat/completions` with `stream: true` and
 * `stream_options.include_usage`.
 *
 * Fidelity it produces and replays verbatim, on thinking messages:
 * - `reasoning_field` — `reasoning_content` or `reasoning`, the delta field
 *   the reasoning came in (absent when both were used); replay sends the
 *   thinking back in that field (in both when unknown or mixed).
 * - `reasoning_details` — OpenRouter's detail entries merged per index/type
 *   (signatures, encrypted `data`, ids kept as sent); replayed as the
 *   assistant message's `reasoning_details`.
 *
 * Refusals (`delta.refusal`) are delivered as assistant text.
 *
 * @module
 */
import type { WireModule } from "../wire.ts";
import { chatFinish, createChatParser, parseChatBody } from "./_openai_chat_parse.ts";
import {
  buildChatRequest,
  chatMessages,
  chatTools,
  usesLegacyMaxTokens,
} from "./_openai_chat_request.ts";
import { parseOpenAiError } from "./_openai_common.ts";

export {
  buildChatRequest,
  chatFinish,
  chatMessages,
  chatTools,
  createChatParser,
  parseChatBody,
  usesLegacyMaxTokens,
};

/** The Chat Completions protocol module. */
export const openaiChatProtocol: WireModule = {
  id: "openai-chat",
  buildRequest: buildChatRequest,
  createParser: createChatParser,
  parseBody: parseChatBody,
  parseError: parseOpenAiError,
};
