/**
 * The Gemini wire protocol (`gemini`):
 * `POST {base}/models/{model}:streamGenerateContent?alt=sse`, key in the
 * `x-goog-api-key` header (never in the URL).
 *
 * Fidelity key it produces and replays verbatim: `thought_signature` — the
 * `thoughtSignature` of the part a text, thinking or tool call came from,
 * put back on the same kind of part. Tool calls without a wire `id` use the
 * function name as id (the shared allocator adds `#n` on collision); a call
 * whose id differs from its name sends the id back on `functionCall` and
 * `functionResponse`.
 *
 * @module
 */
import type { WireModule } from "../wire.ts";
import { createGeminiParser, parseGeminiBody, parseGeminiError } from "./_gemini_parse.ts";
import { buildGeminiRequest } from "./_gemini_request.ts";

export { geminiFinish } from "./_gemini_parse.ts";
export { GEMINI_SKIP_SIGNATURE, geminiContents, geminiThinkingFields } from "./_gemini_request.ts";

/** The Gemini protocol module. */
export const geminiProtocol: WireModule = {
  id: "gemini",
  buildRequest: buildGeminiRequest,
  createParser: createGeminiParser,
  parseBody: parseGeminiBody,
  parseError: parseGeminiError,
};
