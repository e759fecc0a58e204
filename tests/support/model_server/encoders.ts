/**
 * The registry of scripted-server encoders: one import and one entry per
 * protocol. Add a line here when a protocol's `encode_<protocol>.ts` exists.
 *
 * @module
 */
import type { Encoder } from "./script.ts";
import { openaiChatEncoder } from "./encode_openai_chat.ts";
import { openaiResponsesEncoder } from "./encode_openai_responses.ts";
import { anthropicMessagesEncoder } from "./encode_anthropic_messages.ts";
import { geminiEncoder } from "./encode_gemini.ts";

/** Every encoder the server knows; the first whose `matches` accepts a path serves it. */
export const ENCODERS: Encoder[] = [
  openaiChatEncoder,
  openaiResponsesEncoder,
  anthropicMessagesEncoder,
  geminiEncoder,
];
