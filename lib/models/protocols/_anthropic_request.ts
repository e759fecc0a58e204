/**
 * Anthropic Messages request building: endpoint, headers, thinking settings,
 * tools and the replay of penguin history as Anthropic messages.
 *
 * @module
 */
import type { CompleteMessage, ToolSpec } from "../../protocol/types.ts";
import { anthropicThinking } from "../shaping.ts";
import type { HttpRequest, ThinkingLevel, WireRequest } from "../wire.ts";
import { jsonRequest } from "../_json_body.ts";
import { elementBytes } from "../_element_bytes.ts";
import { argumentsObject } from "./_tool_arguments.ts";
import { roleRuns } from "./_role_runs.ts";

type Json = Record<string, unknown>;

/** `max_tokens` sent when the caller set none (Anthropic requires the field). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 32000;

/** The `anthropic-version` header value. */
export const ANTHROPIC_VERSION = "2023-06-01";

/** Thinking text of a PenguinHarness redacted-thinking message (data kept in `fidelity.signature`). */
const LEGACY_REDACTED_TEXT = "_REDACTED_THINKING";

/** Claude models older than 4.6: no adaptive thinking, only `budget_tokens`. */
const BUDGET_ONLY_MODEL = /claude-3|claude-(?:opus|sonnet|haiku)-4(?:[-.][0-5])?(?:-\d{8})?$/;

/**
 * The `thinking` / `output_config` fields for a level, from the shared
 * mapping in `shaping.ts` (undefined level → none: provider default). Claude
 * 4.6+ get adaptive thinking, and ask for `display: "summarized"` (Opus 4.7+
 * omit thinking text by default); older models get a token budget.
 */
export function anthropicThinkingFields(
  modelId: string,
  level: ThinkingLevel | undefined,
  maxTokens: number,
): Record<string, unknown> {
  const fields = anthropicThinking(level, maxTokens, {
    adaptive: !BUDGET_ONLY_MODEL.test(modelId),
  });
  const out: Json = { ...fields };
  if (fields.thinking?.type === "adaptive") {
    out.thinking = { ...fields.thinking, display: "summarized" };
  }
  return out;
}

/** `{base}/v1/messages`, tolerating a base URL that already ends in `/v1`. */
function endpointUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, "");
  return trimmed.endsWith("/v1") ? `${trimmed}/messages` : `${trimmed}/v1/messages`;
}

function toolSchema(tool: ToolSpec): Json {
  const params = tool.parameters;
  if (typeof params === "object" && params !== null && !Array.isArray(params)) {
    return params as Json;
  }
  return { type: "object", properties: {} };
}

/** Split a data URL into its media type and base64 payload. */
function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const m = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (m === null) return undefined;
  const mediaType = m[1] || "application/octet-stream";
  const payload = m[3] ?? "";
  if (/;base64/i.test(m[2] ?? "")) return { mediaType, data: payload };
  const bytes = new TextEncoder().encode(decodeURIComponent(payload));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return { mediaType, data: btoa(bin) };
}

/**
 * A block for base64 data: images as `image`, PDFs and plain text as
 * `document`; other types have no Anthropic block and yield none.
 */
function mediaBlocks(mediaType: string, data: string): Json[] {
  const source = { type: "base64", media_type: mediaType, data };
  if (mediaType.startsWith("image/")) return [{ type: "image", source }];
  if (mediaType === "application/pdf") return [{ type: "document", source }];
  if (mediaType.startsWith("text/")) {
    const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
    const text = new TextDecoder().decode(bytes);
    return [{ type: "document", source: { type: "text", media_type: "text/plain", data: text } }];
  }
  return [];
}

/** The block(s) for an http(s) image URL or a data URL. */
function urlBlocks(url: string): Json[] {
  const parsed = parseDataUrl(url);
  if (parsed !== undefined) return mediaBlocks(parsed.mediaType, parsed.data);
  return [{ type: "image", source: { type: "url", url } }];
}

/**
 * Tool-use ids for replay. Anthropic requires `^[a-zA-Z0-9_-]+$` ids, unique
 * within the request; ids from other providers (or a provider that reuses
 * ids, like Gemini's function names) are sanitized and de-duplicated, and each
 * output is paired with the earliest unanswered call of its id.
 */
function createIdMapper() {
  const used = new Set<string>();
  const pending = new Map<string, string[]>();
  const clean = (id: string) => id.replace(/[^a-zA-Z0-9_-]/g, "_") || "toolu";
  return {
    call(id: string): string {
      const base = clean(id);
      let out = base;
      for (let n = 2; used.has(out); n++) out = `${base}_${n}`;
      used.add(out);
      const queue = pending.get(id) ?? [];
      queue.push(out);
      pending.set(id, queue);
      return out;
    },
    output(id: string): string {
      return pending.get(id)?.shift() ?? clean(id);
    },
  };
}

/** One history message as Anthropic content blocks, with the role it belongs to. */
function toBlocks(
  msg: CompleteMessage,
  ids: ReturnType<typeof createIdMapper>,
): { role: "user" | "assistant"; content: Json[] } {
  switch (msg.type) {
    case "text":
      return { role: msg.role, content: msg.text === "" ? [] : [{ type: "text", text: msg.text }] };
    case "thinking": {
      const fid = msg.fidelity ?? {};
      if (typeof fid.redacted === "string") {
        return { role: "assistant", content: [{ type: "redacted_thinking", data: fid.redacted }] };
      }
      if (typeof fid.signature !== "string") return { role: "assistant", content: [] };
      if (msg.thinking === LEGACY_REDACTED_TEXT) {
        return { role: "assistant", content: [{ type: "redacted_thinking", data: fid.signature }] };
      }
      return {
        role: "assistant",
        content: [{ type: "thinking", thinking: msg.thinking, signature: fid.signature }],
      };
    }
    case "inline_thinking":
      return { role: "assistant", content: [] };
    case "tool_call":
      return {
        role: "assistant",
        content: [{
          type: "tool_use",
          id: ids.call(msg.tool_call_id),
          name: msg.name,
          input: argumentsObject(msg.arguments),
        }],
      };
    case "tool_call_output": {
      const content: Json[] = [];
      if (msg.output !== "") content.push({ type: "text", text: msg.output });
      for (const url of msg.images ?? []) content.push(...urlBlocks(url));
      const block: Json = { type: "tool_result", tool_use_id: ids.output(msg.tool_call_id) };
      if (content.length > 0) block.content = content;
      if (msg.stop_reason !== "completed") block.is_error = true;
      return { role: "user", content: [block] };
    }
    case "image_url":
      return { role: "user", content: urlBlocks(msg.image_url) };
    case "inline_data":
      return {
        role: msg.role,
        content: msg.role === "user" ? mediaBlocks(msg.mime_type, msg.data) : [],
      };
  }
}

/**
 * History → Anthropic `messages`: consecutive same-role messages merge into
 * one message; in a user message the `tool_result` blocks come first (an
 * Anthropic requirement). Messages left without blocks are dropped.
 */
export function anthropicMessages(history: CompleteMessage[]): Record<string, unknown>[] {
  const ids = createIdMapper();
  const out = roleRuns(history, "content", (msg) => toBlocks(msg, ids));
  for (const m of out) {
    if (m.role !== "user") continue;
    const results = m.content.filter((b) => b.type === "tool_result");
    if (results.length > 0) {
      m.content = [
        ...results,
        ...m.content.filter((b) => b.type !== "tool_result"),
      ];
    }
  }
  return out;
}

/**
 * Mark prompt-cache breakpoints: the last block of the last two user messages
 * (Anthropic caches only up to explicit `cache_control` marks; the system
 * prompt gets its own mark where it is built).
 */
function markCache(messages: Json[]): void {
  let marked = 0;
  for (let i = messages.length - 1; i >= 0 && marked < 2; i--) {
    const m = messages[i] as { role: string; content: Json[] };
    if (m.role !== "user") continue;
    const block = m.content[m.content.length - 1];
    if (block === undefined) continue;
    block.cache_control = { type: "ephemeral" };
    marked++;
  }
}

/** Build the streaming `POST {base}/v1/messages` request. */
export function buildAnthropicRequest(req: WireRequest): HttpRequest {
  const { endpoint } = req;
  const maxTokens = req.max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  const body: Json = { model: endpoint.model_id, max_tokens: maxTokens };
  if (req.system_prompt !== "") {
    body.system = [{ type: "text", text: req.system_prompt, cache_control: { type: "ephemeral" } }];
  }
  const messages = anthropicMessages(req.history);
  markCache(messages);
  body.messages = messages;
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: toolSchema(t),
    }));
  }
  Object.assign(body, anthropicThinkingFields(endpoint.model_id, req.thinking_level, maxTokens));
  body.stream = true;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "accept": "text/event-stream",
    "anthropic-version": ANTHROPIC_VERSION,
  };
  if (endpoint.api_key !== undefined && endpoint.api_key !== "") {
    headers["x-api-key"] = endpoint.api_key;
  }
  // Each message is serialized once per conversation; the cache markers move, so the last ones again.
  const head = req.history[0];
  const known = head && (() => elementBytes(head, "anthropic-messages", "messages", messages));
  return jsonRequest(endpointUrl(endpoint.base_url), headers, body, known);
}
