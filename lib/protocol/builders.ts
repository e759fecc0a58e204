/**
 * Builders for OmniMessages. Every builder stamps the creation time and sets
 * `stop_reason` on complete payloads; `fidelity` is set only when non-empty.
 *
 * @module
 */
import type {
  CompleteMessage,
  EventMsgEnvelope,
  EventPayload,
  Fidelity,
  ModelMsgEnvelope,
  ModelPayload,
  PartialEventType,
  PartialText,
  PartialThinking,
  PartialToolCall,
  PartialToolCallOutput,
  Sender,
  SessionMeta,
  SessionMetaEnvelope,
  StopReason,
  TextMessage,
  ToolCallMessage,
  ToolCallOutputMessage,
} from "./types.ts";

/** The current time as an ISO-8601 UTC string. */
export function timestamp(): string {
  return new Date().toISOString();
}

/** Wrap a model payload in an envelope. */
export function modelMsg<P extends ModelPayload>(
  payload: P,
  origin?: string[],
): ModelMsgEnvelope<P> {
  const env: ModelMsgEnvelope<P> = { timestamp: timestamp(), type: "model_msg", payload };
  if (origin && origin.length > 0) env.origin = origin;
  return env;
}

/** Wrap an event payload in an envelope. */
export function eventMsg<P extends EventPayload>(
  payload: P,
  origin?: string[],
): EventMsgEnvelope<P> {
  const env: EventMsgEnvelope<P> = { timestamp: timestamp(), type: "event_msg", payload };
  if (origin && origin.length > 0) env.origin = origin;
  return env;
}

/** Wrap a session meta payload in an envelope. */
export function sessionMetaMsg(meta: SessionMeta): SessionMetaEnvelope {
  return { timestamp: timestamp(), type: "session_meta", payload: meta };
}

function withFidelity<T extends CompleteMessage>(msg: T, fidelity?: Fidelity): T {
  if (fidelity && Object.keys(fidelity).length > 0) msg.fidelity = fidelity;
  return msg;
}

/** A user-side text; `sender` marks harness, parent-agent or server texts. */
export function userText(text: string, sender?: Sender): TextMessage {
  const msg: TextMessage = { type: "text", role: "user", text, stop_reason: "completed" };
  if (sender) msg.sender = sender;
  return msg;
}

/** An assistant text. */
export function assistantText(
  text: string,
  stopReason: StopReason = "completed",
  fidelity?: Fidelity,
): TextMessage {
  return withFidelity({ type: "text", role: "assistant", text, stop_reason: stopReason }, fidelity);
}

/** A complete tool call. */
export function toolCall(
  name: string,
  args: string,
  toolCallId: string,
  stopReason: StopReason = "completed",
  fidelity?: Fidelity,
): ToolCallMessage {
  return withFidelity({
    type: "tool_call",
    role: "assistant",
    name,
    arguments: args,
    tool_call_id: toolCallId,
    stop_reason: stopReason,
  }, fidelity);
}

/** A complete tool output. */
export function toolCallOutput(
  toolCallId: string,
  output: string,
  stopReason: StopReason = "completed",
  images?: string[],
): ToolCallOutputMessage {
  const msg: ToolCallOutputMessage = {
    type: "tool_call_output",
    role: "user",
    output,
    tool_call_id: toolCallId,
    stop_reason: stopReason,
  };
  if (images && images.length > 0) msg.images = images;
  return msg;
}

/** A streaming text fragment (`start` and `stop` carry empty text). */
export function partialText(
  eventType: PartialEventType,
  text = "",
  stopReason: StopReason = "completed",
): PartialText {
  return {
    type: "partial_text",
    role: "assistant",
    event_type: eventType,
    text,
    stop_reason: stopReason,
  };
}

/** A streaming thinking fragment. */
export function partialThinking(
  eventType: PartialEventType,
  thinking = "",
  stopReason: StopReason = "completed",
): PartialThinking {
  return {
    type: "partial_thinking",
    role: "assistant",
    event_type: eventType,
    thinking,
    stop_reason: stopReason,
  };
}

/** A streaming tool-call fragment (`name` only on start, argument text on deltas). */
export function partialToolCall(
  eventType: PartialEventType,
  toolCallId: string,
  name = "",
  args = "",
  stopReason: StopReason = "completed",
): PartialToolCall {
  return {
    type: "partial_tool_call",
    role: "assistant",
    event_type: eventType,
    name,
    arguments: args,
    tool_call_id: toolCallId,
    stop_reason: stopReason,
  };
}

/** A streaming tool-output fragment (images, when any, all in one delta). */
export function partialToolOutput(
  eventType: PartialEventType,
  toolCallId: string,
  output = "",
  stopReason: StopReason = "completed",
  images?: string[],
): PartialToolCallOutput {
  const msg: PartialToolCallOutput = {
    type: "partial_tool_call_output",
    role: "user",
    event_type: eventType,
    output,
    tool_call_id: toolCallId,
    stop_reason: stopReason,
  };
  if (images && images.length > 0) msg.images = images;
  return msg;
}
