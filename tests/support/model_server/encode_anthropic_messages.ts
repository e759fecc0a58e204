/**
 * Scripted-server encoder for the Anthropic Messages protocol: the event
 * sequence of the recorded streams (`message_start`, a `ping`, one
 * `content_block_start/delta…/stop` run per item, `message_delta` with the
 * stop reason and cumulative usage, `message_stop`), with the space padding
 * Anthropic puts before a data line's closing brace.
 *
 * @module
 */
import {
  argumentsText,
  chunks,
  type Encoder,
  finishOf,
  type ScriptedFinish,
  type ScriptedTurn,
  sse,
  toolCallIdOf,
  usageOf,
} from "./script.ts";

const STOP_REASON: Record<ScriptedFinish, string> = {
  stop: "end_turn",
  tool_call: "tool_use",
  length: "max_tokens",
  content_filter: "refusal",
  refusal: "refusal",
};

const ERROR_TYPE: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

/** JSON with `n` spaces before the closing brace, as Anthropic pads its data lines. */
function padded(data: Record<string, unknown>, n: number): string {
  const json = JSON.stringify(data);
  return `${json.slice(0, -1)}${" ".repeat(n)}}`;
}

/** The Anthropic Messages encoder. */
export const anthropicMessagesEncoder: Encoder = {
  protocol: "anthropic-messages",
  path: () => "/v1/messages",
  matches: (pathname) => pathname.endsWith("/v1/messages"),
  encodeTurn(turn: ScriptedTurn, model: string): string[] {
    const events: string[] = [];
    const emit = (data: Record<string, unknown>) =>
      events.push(sse(padded(data, (events.length * 7) % 13), String(data.type)));
    const usage = usageOf(turn);
    const wireUsage = (output: number) =>
      usage === null ? undefined : {
        input_tokens: usage.input - (usage.cached_input ?? 0),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: usage.cached_input ?? 0,
        output_tokens: output,
      };
    const message: Record<string, unknown> = {
      model,
      id: "msg_scripted0000000000000001",
      type: "message",
      role: "assistant",
      content: [],
      stop_reason: null,
      stop_sequence: null,
    };
    const startUsage = wireUsage(1);
    if (startUsage !== undefined) message.usage = startUsage;
    emit({ type: "message_start", message });
    const size = turn.chunk ?? 8;
    turn.items.forEach((it, index) => {
      const delta = (d: Record<string, unknown>) =>
        emit({ type: "content_block_delta", index, delta: d });
      if (it.kind === "text") {
        emit({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
        for (const text of chunks(it.text, size)) delta({ type: "text_delta", text });
      } else if (it.kind === "thinking" && it.encrypted !== undefined) {
        emit({
          type: "content_block_start",
          index,
          content_block: { type: "redacted_thinking", data: it.encrypted },
        });
      } else if (it.kind === "thinking") {
        emit({
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        });
        for (const thinking of chunks(it.thinking, size)) {
          delta({ type: "thinking_delta", thinking });
        }
        if (it.signature !== undefined) delta({ type: "signature_delta", signature: it.signature });
      } else {
        emit({
          type: "content_block_start",
          index,
          content_block: {
            type: "tool_use",
            id: toolCallIdOf(it, index, "toolu_"),
            name: it.name,
            input: {},
          },
        });
        for (const partial_json of chunks(argumentsText(it), size)) {
          delta({ type: "input_json_delta", partial_json });
        }
      }
      if (index === 0) events.push(sse(`{"type": "ping"}`, "ping"));
      emit({ type: "content_block_stop", index });
    });
    if (turn.stream_error !== undefined) {
      const { message: msg, code } = turn.stream_error;
      emit({ type: "error", error: { type: code ?? "api_error", message: msg } });
      return events;
    }
    const end: Record<string, unknown> = {
      type: "message_delta",
      delta: { stop_reason: STOP_REASON[finishOf(turn)], stop_sequence: null },
    };
    const endUsage = wireUsage(usage?.output ?? 0);
    if (endUsage !== undefined) end.usage = endUsage;
    emit(end);
    emit({ type: "message_stop" });
    return events;
  },
  httpErrorBody(status: number, message: string, code?: string): unknown {
    return {
      type: "error",
      error: { type: code ?? ERROR_TYPE[status] ?? "api_error", message },
      request_id: "req_scripted0000000000000001",
    };
  },
};
