/**
 * Responses API request building and history replay (`store: false`, so the
 * whole context is sent each time).
 *
 * Replay: thinking messages whose fidelity holds `encrypted_content` become
 * `reasoning` items with their fidelity keys (`id`, `encrypted_content`, and
 * any other provider keys except penguin's own `channel`) copied verbatim and
 * the text as `summary_text` (channel `summary`) or `reasoning_text`
 * content. Thinking without encrypted content is not replayed: with
 * `store: false` the server cannot resolve a bare reasoning id. Assistant
 * texts become assistant `message` items (one per segment, `phase` kept);
 * tool calls `function_call` items; tool outputs `function_call_output`
 * items (an `input_text` + `input_image` list when images are attached).
 *
 * @module
 */
import type { CompleteMessage, Fidelity, ToolSpec } from "../../protocol/types.ts";
import { responsesReasoning } from "../shaping.ts";
import { outboundToolCallId } from "../tool_call_ids.ts";
import type { HttpRequest, WireRequest } from "../wire.ts";
import { jsonRequest } from "../_json_body.ts";
import { elementBytes } from "../_element_bytes.ts";
import { dataUrl, openAiHeaders } from "./_openai_common.ts";
import { argumentsText } from "./_tool_arguments.ts";

type Json = Record<string, unknown>;

/** Responses `tools` entries (non-strict, so any JSON Schema is accepted). */
export function responsesTools(tools: ToolSpec[]): Json[] {
  return tools.map((t) => ({
    type: "function",
    name: t.name,
    description: t.description,
    parameters: t.parameters ?? { type: "object", properties: {} },
    strict: false,
  }));
}

function reasoningItem(thinking: string, f: Fidelity): Json | undefined {
  if (typeof f.encrypted_content !== "string") return undefined;
  const item: Json = { type: "reasoning" };
  for (const [k, v] of Object.entries(f)) if (k !== "channel") item[k] = v;
  const summary = f.channel === "summary";
  item.summary = summary && thinking !== "" ? [{ type: "summary_text", text: thinking }] : [];
  if (!summary && thinking !== "") item.content = [{ type: "reasoning_text", text: thinking }];
  return item;
}

/** The `input` items for a history. */
export function responsesInput(history: CompleteMessage[]): Json[] {
  const input: Json[] = [];
  let user: Json[] = [];
  const flushUser = () => {
    if (user.length === 0) return;
    input.push({ type: "message", role: "user", content: user });
    user = [];
  };
  for (const m of history) {
    if (
      m.role === "user" && (m.type === "text" || m.type === "image_url" || m.type === "inline_data")
    ) {
      if (m.type === "text") user.push({ type: "input_text", text: m.text });
      else if (m.type === "image_url") user.push({ type: "input_image", image_url: m.image_url });
      else user.push({ type: "input_image", image_url: dataUrl(m.mime_type, m.data) });
      continue;
    }
    flushUser();
    switch (m.type) {
      case "thinking": {
        const item = reasoningItem(m.thinking, m.fidelity ?? {});
        if (item) input.push(item);
        break;
      }
      case "text": {
        const msg: Json = {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: m.text, annotations: [] }],
        };
        if (typeof m.fidelity?.phase === "string") msg.phase = m.fidelity.phase;
        input.push(msg);
        break;
      }
      case "tool_call":
        input.push({
          type: "function_call",
          call_id: outboundToolCallId(m.tool_call_id),
          name: m.name,
          arguments: argumentsText(m.arguments),
        });
        break;
      case "tool_call_output": {
        const call_id = outboundToolCallId(m.tool_call_id);
        const images = m.images ?? [];
        const output = images.length === 0 ? m.output : [
          { type: "input_text", text: m.output },
          ...images.map((url) => ({ type: "input_image", image_url: url })),
        ];
        input.push({ type: "function_call_output", call_id, output });
        break;
      }
      default:
        break;
    }
  }
  flushUser();
  return input;
}

/** Build the streaming Responses request. */
export function buildResponsesRequest(req: WireRequest): HttpRequest {
  const ep = req.endpoint;
  const body: Json = { model: ep.model_id };
  if (req.system_prompt !== "") body.instructions = req.system_prompt;
  const input = responsesInput(req.history);
  body.input = input;
  body.stream = true;
  body.store = false;
  if (req.tools.length > 0) body.tools = responsesTools(req.tools);
  if (req.max_tokens !== undefined && req.max_tokens > 0) body.max_output_tokens = req.max_tokens;
  Object.assign(body, responsesReasoning(req.thinking_level));
  // Each input item is serialized once per conversation.
  const head = req.history[0];
  const known = head && (() => elementBytes(head, "openai-responses", "input", input));
  return jsonRequest(`${ep.base_url}/responses`, openAiHeaders(ep), body, known);
}
