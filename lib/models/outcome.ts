/**
 * What the streaming driver yields: model messages (partials and completes),
 * one usage report on success, and a final outcome. Failures are values.
 *
 * @module
 */
import type { ModelPayload, StopReason, TokenCounts } from "../protocol/types.ts";
import type { FailureClass } from "./failure.ts";
import type { FinishReason } from "./wire.ts";

/** How one model request ended. Never thrown; always the last stream item. */
export interface ModelOutcome {
  /** `completed` commits the round; anything else is a failure label (failed, aborted, timeout, malformed, auth). */
  status: StopReason;
  /** What went wrong, for non-completed outcomes. */
  error_message?: string;
  /** Set when retrying cannot help (a 4xx other than auth/429/408). */
  permanent?: boolean;
  /** HTTP status of an error response, when there was one. */
  http_status?: number;
  /** Server-requested wait before retrying (from `Retry-After`), in ms. */
  retry_after_ms?: number;
  /** What kind of failure (./failure.ts), for non-completed outcomes. */
  failure?: FailureClass;
  /** The endpoint host (`host[:port]`) the request went to, when known. */
  host?: string;
  /** The provider's neutral finish reason, when one arrived. */
  finish_reason?: FinishReason;
}

/** One item of a model stream. */
export type ModelStreamItem =
  /** A partial fragment or a complete message (complete right after its partial stop). */
  | { kind: "message"; message: ModelPayload }
  /** Token usage of this request; only on a completed outcome, just before `end`. */
  | { kind: "usage"; usage: TokenCounts }
  /** The last item. */
  | { kind: "end"; outcome: ModelOutcome };
