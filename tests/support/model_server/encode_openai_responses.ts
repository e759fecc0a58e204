/**
 * Scripted-server encoder for Responses API streams: `response.created`,
 * then per item `output_item.added` → deltas → `.done` events (reasoning
 * summaries with `encrypted_content`, messages with `phase`, function calls
 * with argument deltas), then `response.completed` / `response.incomplete`,
 * or an `error` event + `response.failed`.
 *
 * @module
 */
import {
  argumentsText,
  chunks,
  type Encoder,
  finishOf,
  type ScriptedTurn,
  sse,
  toolCallIdOf,
  usageOf,
} from "./script.ts";
import { openaiErrorBody } from "./encode_openai_chat.ts";

type Json = Record<string, unknown>;

/** The Responses encoder. */
export const openaiResponsesEncoder: Encoder = {
  protocol: "openai-responses",
  path: () => "/v1/responses",
  matches: (pathname) => pathname.endsWith("/responses"),
  encodeTurn(turn: ScriptedTurn, model: string): string[] {
    const size = turn.chunk ?? 8;
    let seq = 0;
    const out: string[] = [];
    const ev = (type: string, fields: Json) =>
      out.push(sse({ type, sequence_number: seq++, ...fields }, type));
    const response = (status: string, extra: Json = {}) => ({
      id: "resp_scripted",
      object: "response",
      model,
      status,
      output: [],
      ...extra,
    });
    ev("response.created", { response: response("in_progress") });
    turn.items.forEach((item, output_index) => {
      if (item.kind === "thinking") {
        const id = item.id ?? `rs_${output_index}`;
        const done: Json = { id, type: "reasoning", summary: [] as Json[] };
        if (item.encrypted !== undefined) done.encrypted_content = item.encrypted;
        ev("response.output_item.added", { output_index, item: { ...done } });
        if (item.thinking !== "") {
          ev("response.reasoning_summary_part.added", {
            item_id: id,
            output_index,
            summary_index: 0,
            part: { type: "summary_text", text: "" },
          });
          for (const delta of chunks(item.thinking, size)) {
            ev("response.reasoning_summary_text.delta", {
              item_id: id,
              output_index,
              summary_index: 0,
              delta,
            });
          }
          ev("response.reasoning_summary_text.done", {
            item_id: id,
            output_index,
            summary_index: 0,
            text: item.thinking,
          });
          done.summary = [{ type: "summary_text", text: item.thinking }];
        }
        ev("response.output_item.done", { output_index, item: done });
      } else if (item.kind === "text") {
        const id = `msg_${output_index}`;
        const added: Json = {
          id,
          type: "message",
          status: "in_progress",
          role: "assistant",
          content: [],
        };
        if (item.phase !== undefined) added.phase = item.phase;
        ev("response.output_item.added", { output_index, item: added });
        const part = { type: "output_text", text: "", annotations: [] };
        ev("response.content_part.added", { item_id: id, output_index, content_index: 0, part });
        const refusal = finishOf(turn) === "refusal";
        for (const delta of chunks(item.text, size)) {
          if (delta === "") continue;
          ev(refusal ? "response.refusal.delta" : "response.output_text.delta", {
            item_id: id,
            output_index,
            content_index: 0,
            delta,
          });
        }
        ev("response.output_text.done", {
          item_id: id,
          output_index,
          content_index: 0,
          text: item.text,
        });
        const content = [{ type: "output_text", text: item.text, annotations: [] }];
        ev("response.output_item.done", {
          output_index,
          item: { ...added, status: "completed", content },
        });
      } else {
        const id = `fc_${output_index}`;
        const call_id = toolCallIdOf(item, output_index);
        const args = argumentsText(item);
        const added = {
          id,
          type: "function_call",
          status: "in_progress",
          arguments: "",
          call_id,
          name: item.name,
        };
        ev("response.output_item.added", { output_index, item: added });
        for (const delta of chunks(args, size)) {
          if (delta !== "") {
            ev("response.function_call_arguments.delta", { item_id: id, output_index, delta });
          }
        }
        ev("response.function_call_arguments.done", { item_id: id, output_index, arguments: args });
        ev("response.output_item.done", {
          output_index,
          item: { ...added, status: "completed", arguments: args },
        });
      }
    });
    if (turn.stream_error) {
      const e = turn.stream_error;
      const code = e.code ?? "server_error";
      ev("error", { error: { type: code, code, message: e.message, param: null } });
      ev("response.failed", {
        response: response("failed", { error: { code, message: e.message } }),
      });
      return out;
    }
    const u = usageOf(turn);
    const usage = u === null ? null : {
      input_tokens: u.input,
      input_tokens_details: { cached_tokens: u.cached_input ?? 0 },
      output_tokens: u.output,
      output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
      total_tokens: u.input + u.output,
    };
    const finish = finishOf(turn);
    if (finish === "length" || finish === "content_filter") {
      const reason = finish === "length" ? "max_output_tokens" : "content_filter";
      ev("response.incomplete", {
        response: response("incomplete", { usage, incomplete_details: { reason } }),
      });
    } else ev("response.completed", { response: response("completed", { usage }) });
    return out;
  },
  httpErrorBody: openaiErrorBody,
};
