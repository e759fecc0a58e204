/**
 * The OpenAI Responses wire protocol (`openai-responses`):
 * `POST {base}/responses` with `stream: true` and `store: false`.
 *
 * Fidelity it produces and replays verbatim:
 * - on thinking: `id` + `encrypted_content` of the reasoning item (and
 *   `format` / `signature` when sent), `channel: "summary"` when the text is
 *   a reasoning summary; thinking text may be empty.
 * - on text: `phase` of the message item (e.g. `commentary`).
 *
 * @module
 */
import type { WireModule } from "../wire.ts";
import { parseOpenAiError } from "./_openai_common.ts";
import { createResponsesParser, parseResponsesBody } from "./_openai_responses_parse.ts";
import {
  buildResponsesRequest,
  responsesInput,
  responsesTools,
} from "./_openai_responses_request.ts";

export {
  buildResponsesRequest,
  createResponsesParser,
  parseResponsesBody,
  responsesInput,
  responsesTools,
};

/** The Responses protocol module. */
export const openaiResponsesProtocol: WireModule = {
  id: "openai-responses",
  buildRequest: buildResponsesRequest,
  createParser: createResponsesParser,
  parseBody: parseResponsesBody,
  parseError: parseOpenAiError,
};
