/**
 * The wire-protocol registry: one {@linkcode WireModule} per
 * {@linkcode WireProtocol}.
 *
 * @module
 */
import type { WireModule, WireProtocol } from "../wire.ts";
import { anthropicMessagesProtocol } from "./anthropic_messages.ts";
import { geminiProtocol } from "./gemini.ts";
import { openaiChatProtocol } from "./openai_chat.ts";
import { openaiResponsesProtocol } from "./openai_responses.ts";

/** Every wire module, keyed by protocol id. */
export const WIRE_MODULES: Readonly<Record<WireProtocol, WireModule>> = {
  "openai-chat": openaiChatProtocol,
  "openai-responses": openaiResponsesProtocol,
  "anthropic-messages": anthropicMessagesProtocol,
  "gemini": geminiProtocol,
};

/** The wire module of `protocol`. */
export function wireModule(protocol: WireProtocol): WireModule {
  return WIRE_MODULES[protocol];
}

export { anthropicMessagesProtocol, geminiProtocol, openaiChatProtocol, openaiResponsesProtocol };
