/**
 * Predicates over OmniMessages.
 *
 * @module
 */
import type { CompleteMessage, ModelPayload, OmniMessage, PartialMessage } from "./types.ts";

const PARTIAL_TYPES = new Set([
  "partial_text",
  "partial_thinking",
  "partial_tool_call",
  "partial_tool_call_output",
]);

/** True for the four streaming fragment payloads. */
export function isPartial(payload: ModelPayload): payload is PartialMessage {
  return PARTIAL_TYPES.has(payload.type);
}

/** True for the seven complete model message payloads. */
export function isComplete(payload: ModelPayload): payload is CompleteMessage {
  return !PARTIAL_TYPES.has(payload.type);
}

/** True when the message was forwarded from a child session. */
export function hasOrigin(msg: OmniMessage): boolean {
  return Array.isArray(msg.origin) && msg.origin.length > 0;
}

/**
 * True when the message belongs in a trace file: it has no `origin`, and it is
 * a `session_meta`, an `event_msg` or a complete `model_msg`.
 */
export function isRecordable(msg: OmniMessage): boolean {
  if (hasOrigin(msg)) return false;
  if (msg.type === "model_msg") return isComplete(msg.payload);
  return msg.type === "session_meta" || msg.type === "event_msg";
}
