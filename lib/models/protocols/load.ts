/**
 * The wire module of one protocol, loaded when a request first needs it: a
 * session speaks one protocol, so the other three (their request builders and
 * stream parsers) stay off the path to its first request. Each is named by a
 * literal dynamic import, so `deno compile` still embeds every one.
 *
 * @module
 */
import type { WireModule, WireProtocol } from "../wire.ts";

/** The wire module of `protocol`, imported on first use. */
export async function loadWireModule(protocol: WireProtocol): Promise<WireModule> {
  switch (protocol) {
    case "openai-chat":
      return (await import("./openai_chat.ts")).openaiChatProtocol;
    case "openai-responses":
      return (await import("./openai_responses.ts")).openaiResponsesProtocol;
    case "anthropic-messages":
      return (await import("./anthropic_messages.ts")).anthropicMessagesProtocol;
    case "gemini":
      return (await import("./gemini.ts")).geminiProtocol;
  }
}
