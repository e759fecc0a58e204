/**
 * Scripted-server encoder for Chat Completions streams: a role chunk, then
 * reasoning (`reasoning_content`, `reasoning`, or OpenRouter
 * `reasoning` + `reasoning_details`), content, tool-call deltas by index,
 * a finish chunk, a usage chunk (`choices: []`) and `[DONE]`.
 *
 * @module
 */
import {
  argumentsText,
  chunks,
  type Encoder,
  finishOf,
  type ScriptedFinish,
  type ScriptedThinking,
  type ScriptedTurn,
  sse,
  toolCallIdOf,
  usageOf,
} from "./script.ts";

type Json = Record<string, unknown>;

/** The error body OpenAI's APIs (Chat Completions and Responses) send with an HTTP error. */
export function openaiErrorBody(status: number, message: string, code?: string): unknown {
  const type = status === 401
    ? "authentication_error"
    : status === 429
    ? "rate_limit_error"
    : "invalid_request_error";
  return { error: { message, type, param: null, code: code ?? null } };
}

const FINISH: Record<ScriptedFinish, string> = {
  stop: "stop",
  tool_call: "tool_calls",
  length: "length",
  content_filter: "content_filter",
  refusal: "stop",
};

function thinkingChunks(t: ScriptedThinking, size: number, delta: (d: Json) => string): string[] {
  const field = t.field ?? "reasoning_content";
  const out: string[] = [];
  if (field !== "reasoning_details") {
    for (const piece of chunks(t.thinking, size)) {
      if (piece !== "") out.push(delta({ [field]: piece }));
    }
    return out;
  }
  for (const piece of chunks(t.thinking, size)) {
    if (piece === "") continue;
    out.push(delta({
      reasoning: piece,
      reasoning_details: [{ type: "reasoning.text", text: piece, format: "unknown", index: 0 }],
    }));
  }
  if (t.signature !== undefined) {
    out.push(delta({
      reasoning: null,
      reasoning_details: [{
        type: "reasoning.text",
        signature: t.signature,
        format: "unknown",
        index: 0,
      }],
    }));
  }
  if (t.encrypted !== undefined) {
    const detail: Json = {
      type: "reasoning.encrypted",
      data: t.encrypted,
      format: "unknown",
      index: 0,
    };
    if (t.id !== undefined) detail.id = t.id;
    out.push(delta({ reasoning: null, reasoning_details: [detail] }));
  }
  return out;
}

/** The Chat Completions encoder. */
export const openaiChatEncoder: Encoder = {
  protocol: "openai-chat",
  path: () => "/v1/chat/completions",
  matches: (pathname) => pathname.endsWith("/chat/completions"),
  encodeTurn(turn: ScriptedTurn, model: string): string[] {
    const size = turn.chunk ?? 8;
    const base = { id: "chatcmpl-scripted", object: "chat.completion.chunk", created: 1, model };
    const chunk = (choice: Json, extra: Json = {}) =>
      sse({ ...base, choices: [{ index: 0, ...choice }], ...extra });
    const delta = (d: Json) => chunk({ delta: d, finish_reason: null });
    const finish = finishOf(turn);
    const out: string[] = [delta({ role: "assistant", content: "" })];
    let callIndex = 0;
    turn.items.forEach((item, i) => {
      if (item.kind === "thinking") out.push(...thinkingChunks(item, size, delta));
      else if (item.kind === "text") {
        const field = finish === "refusal" ? "refusal" : "content";
        for (const piece of chunks(item.text, size)) {
          if (piece !== "") out.push(delta({ [field]: piece }));
        }
      } else {
        const index = callIndex++;
        out.push(delta({
          tool_calls: [{
            index,
            id: toolCallIdOf(item, i),
            type: "function",
            function: { name: item.name, arguments: "" },
          }],
        }));
        for (const piece of chunks(argumentsText(item), size)) {
          if (piece !== "") {
            out.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }));
          }
        }
      }
    });
    if (turn.stream_error) {
      const e = turn.stream_error;
      out.push(chunk({ delta: { content: "" }, finish_reason: null }, {
        error: { message: e.message, code: e.status ?? e.code ?? 500 },
      }));
      out.push(sse("[DONE]"));
      return out;
    }
    out.push(chunk({ delta: {}, finish_reason: FINISH[finish] }));
    const u = usageOf(turn);
    if (u) {
      out.push(sse({
        ...base,
        choices: [],
        usage: {
          prompt_tokens: u.input,
          completion_tokens: u.output,
          total_tokens: u.input + u.output,
          prompt_tokens_details: { cached_tokens: u.cached_input ?? 0 },
          completion_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
        },
      }));
    }
    out.push(sse("[DONE]"));
    return out;
  },
  httpErrorBody: openaiErrorBody,
};
