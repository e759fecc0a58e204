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
import { historyChars, joinedFrom, jsonRequest, type KnownPrefix } from "../_json_body.ts";
import { dataUrl, isAssistantSide, openAiHeaders, runsBySide } from "./_openai_common.ts";
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
  const texts: string[] = [];
  for (const m of run) {
    if (m.type === "text") {
      text += m.text;
      texts.push(m.text);
    } else if (m.type === "thinking") {
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
  if (texts.length > 1) joinedFrom(msg, "content", texts);
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

function runMessages(run: CompleteMessage[]): Json[] {
  return run[0]!.role === "assistant" ? [assistantMessage(run)] : userMessages(run);
}

/** The `messages` array for a history (system prompt first when non-empty). */
export function chatMessages(systemPrompt: string, history: CompleteMessage[]): Json[] {
  const messages: Json[] = [];
  if (systemPrompt !== "") messages.push({ role: "system", content: systemPrompt });
  for (const run of runsBySide(history)) messages.push(...runMessages(run));
  return messages;
}

/** The longest remembered conversion (bytes of JSON); a longer history is converted afresh. */
const KEPT_BYTES = 4 * 1024 * 1024;

/**
 * A history's conversion up to the start of its last run: the history
 * messages, their chat messages (frozen: requests share them; what they hold
 * may be the history's own, e.g. reasoning details, and is left alone) and the UTF-8
 * bytes of those messages' JSON texts joined with "," (`bytes[0, length)`;
 * room to grow after).
 */
interface Converted {
  history: CompleteMessage[];
  messages: Json[];
  bytes: Uint8Array;
  length: number;
}

/** The last conversion of each history, by its first message. */
const converted = new WeakMap<CompleteMessage, Converted>();

/** Whether `history` begins with `prefix` (the same objects), a run ending where `prefix` does. */
function extends_(
  history: readonly CompleteMessage[],
  prefix: readonly CompleteMessage[],
): boolean {
  const k = prefix.length;
  if (k === 0 || k > history.length) return false;
  for (let i = 0; i < k; i++) if (history[i] !== prefix[i]) return false;
  return k === history.length || isAssistantSide(history[k - 1]!) !== isAssistantSide(history[k]!);
}

const encoder = new TextEncoder();

/** `c.bytes` with `more` appended at `c.length` (a bigger buffer when full). */
function append(c: Converted, more: Uint8Array): void {
  if (c.length + more.length > c.bytes.length) {
    const grown = new Uint8Array(Math.max(2 * c.bytes.length, c.length + more.length, 4096));
    grown.set(c.bytes.subarray(0, c.length));
    c.bytes = grown;
  }
  c.bytes.set(more, c.length);
  c.length += more.length;
}

/**
 * The chat messages of `history`, with how many of them the returned bytes
 * (their JSON, joined with ",") cover. Runs convert independently of each
 * other, and a session's history only grows between requests, so each call
 * converts what follows the runs converted before and remembers all but the
 * last run (the next input may still join it). A long session thus pays per
 * turn for its new messages and one copy of bytes, not for converting,
 * serializing and encoding its whole history again.
 */
function historyMessages(
  history: CompleteMessage[],
): { messages: Json[]; count: number; bytes: Uint8Array } {
  const head = history[0];
  const before = head === undefined ? undefined : converted.get(head);
  const reuse = before !== undefined && extends_(history, before.history);
  const c: Converted = reuse
    ? { ...before }
    : { history: [], messages: [], bytes: new Uint8Array(0), length: 0 };
  const messages = [...c.messages];
  let done = c.history.length;
  let count = messages.length;
  const runs = runsBySide(reuse ? history.slice(done) : history);
  // Once a run would take the kept bytes past their bound, it and the runs after it are not kept:
  // a huge history (a resumed session) is then not serialized here beside its streamed body.
  let keeping = true;
  for (const [i, run] of runs.entries()) {
    const out = runMessages(run);
    messages.push(...out);
    keeping &&= i < runs.length - 1 && c.length + historyChars(run) <= KEPT_BYTES;
    if (!keeping) continue;
    for (const m of out) {
      Object.freeze(m);
      append(c, encoder.encode((c.length === 0 ? "" : ",") + JSON.stringify(m)));
    }
    done += run.length;
    count = messages.length;
  }
  if (head !== undefined && c.length <= KEPT_BYTES && done > 0) {
    c.history = history.slice(0, done);
    c.messages = messages.slice(0, count);
    converted.set(head, c);
  } else if (head !== undefined) converted.delete(head);
  return { messages, count, bytes: c.bytes.subarray(0, c.length) };
}

/** Build the streaming Chat Completions request. */
export function buildChatRequest(req: WireRequest): HttpRequest {
  const ep = req.endpoint;
  const fromHistory = historyMessages(req.history);
  const messages = fromHistory.messages;
  const known: KnownPrefix = { key: "messages", count: 0, chunks: [] };
  if (req.system_prompt !== "") {
    const system = { role: "system", content: req.system_prompt };
    messages.unshift(system);
    const comma = fromHistory.count > 0 ? "," : "";
    known.count = 1;
    known.chunks.push(encoder.encode(JSON.stringify(system) + comma));
  }
  if (fromHistory.count > 0) {
    known.count += fromHistory.count;
    known.chunks.push(fromHistory.bytes);
  }
  const body: Json = {
    model: ep.model_id,
    messages,
    stream: true,
    stream_options: { include_usage: true },
  };
  if (req.tools.length > 0) body.tools = chatTools(req.tools);
  if (req.max_tokens !== undefined && req.max_tokens > 0) {
    body[usesLegacyMaxTokens(ep) ? "max_tokens" : "max_completion_tokens"] = req.max_tokens;
  }
  Object.assign(body, chatReasoning(req.thinking_level, ep));
  const url = `${ep.base_url}/chat/completions`;
  return jsonRequest(url, openAiHeaders(ep), body, known.count > 0 ? known : undefined);
}
