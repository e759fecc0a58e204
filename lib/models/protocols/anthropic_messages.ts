/**
 * The Anthropic Messages wire protocol (`anthropic-messages`):
 * `POST {base}/v1/messages` with `stream: true`.
 *
 * Fidelity keys it produces and replays verbatim:
 * - `signature` — on a thinking message; replayed as
 *   `{type:"thinking", thinking, signature}`.
 * - `redacted` — the opaque `data` of a `redacted_thinking` block, on a
 *   thinking message with empty text; replayed as
 *   `{type:"redacted_thinking", data}`. (PenguinHarness traces that store it
 *   as thinking text `_REDACTED_THINKING` + `signature` replay the same way.)
 *
 * Thinking without a signature (e.g. from another provider) is not replayed:
 * Anthropic rejects unsigned thinking blocks.
 *
 * @module
 */
import type { WireModule } from "../wire.ts";
import {
  createAnthropicParser,
  parseAnthropicBody,
  parseAnthropicError,
} from "./_anthropic_parse.ts";
import { buildAnthropicRequest } from "./_anthropic_request.ts";

export { anthropicFinish } from "./_anthropic_parse.ts";
export {
  ANTHROPIC_DEFAULT_MAX_TOKENS,
  ANTHROPIC_VERSION,
  anthropicMessages,
  anthropicThinkingFields,
} from "./_anthropic_request.ts";

/** The Anthropic Messages protocol module. */
export const anthropicMessagesProtocol: WireModule = {
  id: "anthropic-messages",
  buildRequest: buildAnthropicRequest,
  createParser: createAnthropicParser,
  parseBody: parseAnthropicBody,
  parseError: parseAnthropicError,
};
