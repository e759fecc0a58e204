/**
 * Chat Completions request building and history replay.
 *
 * `max_completion_tokens` is sent by default; DeepSeek and local servers
 * (localhost / 127.0.0.1 / ::1 base URLs: llama.cpp, Ollama, vLLM, LM Studio)
 * get `max_tokens`, which they all honour while some ignore the newer name.
 *
 * @module
 */
import type { CompleteMessage, Fidelity, ThinkingMessage, ToolSpec } from "../../protocol/types.ts";
import { chatReasoning } from "../shaping.ts";
import { outboundToolCallId } from "../tool_call_ids.ts";
import type { HttpRequest, ModelEndpoint, WireRequest } from "../wire.ts";
import { jsonRequest } from "../_json_body.ts";
import { dataUrl, openAiHeaders, runsBySide } from "./_openai_common.ts";
import { argumentsText } from "./_tool_arguments.ts";

type Json = Record<string, unknown>;

/** Whether the endpoint wants `max_tokens` rather than `max_completion_tokens`. */
export function usesLegacyMaxTokens(ep: ModelEndpoint): boolean {
  if (ep.provider.toLowerCase() === "deepseek") return true;
  try {
    const host = new URL(ep.base_url).hostname;
    return host === "localhost" || host === "127.0.0.1" || host === "[::1]" ||
      host.endsWith("deepseek.com");
  } catch {
    return false;
  }
}

/** Chat Completions `tools` entries. */
export function chatTools(tools: ToolSpec[]): Json[] {
  return tools.map((t) => ({
    type: "function",
    function: {
      name: t.name,
      description: t.description,
      parameters: t.parameters ?? { type: "object", properties: {} },
    },
  }));
}

function assistantMessage(run: CompleteMessage[]): Json {
  const msg: Json = { role: "assistant" };
  let text = "";
  let reasoning = "";
  const fieldsSeen = new Set<unknown>();
  let plainThinking = false;
  const details: unknown[] = [];
  const toolCalls: Json[] = [];
  for (const m of run) {
    if (m.type === "text") text += m.text;
    else if (m.type === "thinking") {
      const t = m as ThinkingMessage;
      reasoning += t.thinking;
      const f: Fidelity = t.fidelity ?? {};
      if (f.reasoning_field !== undefined) fieldsSeen.add(f.reasoning_field);
      else if (t.thinking !== "") plainThinking = true;
      if (Array.isArray(f.reasoning_details)) details.push(...f.reasoning_details);
    } else if (m.type === "tool_call") {
      toolCalls.push({
        id: outboundToolCallId(m.tool_call_id),
        type: "function",
        function: { name: m.name, arguments: argumentsText(m.arguments) },
      });
    }
  }
  msg.content = text === "" && toolCalls.length > 0 ? null : text;
  if (reasoning !== "") {
    const single = fieldsSeen.size === 1 && !plainThinking ? [...fieldsSeen][0] : undefined;
    if (single === "reasoning_content" || single === "reasoning") msg[single] = reasoning;
    else {
      msg.reasoning_content = reasoning;
      msg.reasoning = reasoning;
    }
  }
  if (details.length > 0) msg.reasoning_details = details;
  if (toolCalls.length > 0) msg.tool_calls = toolCalls;
  return msg;
}

function userMessages(run: CompleteMessage[]): Json[] {
  const out: Json[] = [];
  let parts: Json[] = [];
  const toolImages: Json[] = [];
  const flushUser = () => {
    if (parts.length === 0) return;
    // Several user texts in a row (a prompt after a harness notice, steering)
    // become one string with blank lines between them: providers concatenate
    // text parts verbatim, which would run the messages into each other.
    const onlyText = parts.every((p) => p.type === "text");
    out.push({
      role: "user",
      content: onlyText ? parts.map((p) => p.text as string).join("\n\n") : parts,
    });
    parts = [];
  };
  const flushToolImages = () => {
    if (toolImages.length === 0) return;
    out.push({ role: "user", content: [...toolImages] });
    toolImages.length = 0;
  };
  for (const m of run) {
    if (m.type === "tool_call_output") {
      flushUser();
      const id = outboundToolCallId(m.tool_call_id);
      out.push({ role: "tool", tool_call_id: id, content: m.output });
      for (const url of m.images ?? []) {
        if (toolImages.length === 0) {
          toolImages.push({ type: "text", text: `Images returned by tool call ${id}:` });
        }
        toolImages.push({ type: "image_url", image_url: { url } });
      }
      continue;
    }
    flushToolImages();
    if (m.type === "text") parts.push({ type: "text", text: m.text });
    else if (m.type === "image_url") {
      parts.push({ type: "image_url", image_url: { url: m.image_url } });
    } else if (m.type === "inline_data") {
      parts.push({ type: "image_url", image_url: { url: dataUrl(m.mime_type, m.data) } });
    }
  }
  flushUser();
  flushToolImages();
  return out;
}

/** The `messages` array for a history (system prompt first when non-empty). */
export function chatMessages(systemPrompt: string, history: CompleteMessage[]): Json[] {
  const messages: Json[] = [];
  if (systemPrompt !== "") messages.push({ role: "system", content: systemPrompt });
  for (const run of runsBySide(history)) {
    if (run[0]!.role === "assistant") messages.push(assistantMessage(run));
    else messages.push(...userMessages(run));
  }
  return messages;
}

/** Build the streaming Chat Completions request. */
export function buildChatRequest(req: WireRequest): HttpRequest {
  const ep = req.endpoint;
  const body: Json = {
    model: ep.model_id,
    messages: chatMessages(req.system_prompt, req.history),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (req.tools.length > 0) body.tools = chatTools(req.tools);
  if (req.max_tokens !== undefined && req.max_tokens > 0) {
    body[usesLegacyMaxTokens(ep) ? "max_tokens" : "max_completion_tokens"] = req.max_tokens;
  }
  Object.assign(body, chatReasoning(req.thinking_level, ep));
  return jsonRequest(`${ep.base_url}/chat/completions`, openAiHeaders(ep), body);
}
