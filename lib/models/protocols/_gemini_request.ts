/**
 * Gemini request building: endpoint, headers, generation config, tools and
 * the replay of penguin history as Gemini `contents`.
 *
 * @module
 */
import type { CompleteMessage, ToolSpec } from "../../protocol/types.ts";
import { geminiThinkingConfig } from "../shaping.ts";
import type { HttpRequest, ThinkingLevel, WireRequest } from "../wire.ts";
import { jsonRequest } from "../_json_body.ts";
import { elementBytes } from "../_element_bytes.ts";
import { argumentsObject } from "./_tool_arguments.ts";
import { roleRuns } from "./_role_runs.ts";

type Json = Record<string, unknown>;

/**
 * Google's documented placeholder for a function call that has no thought
 * signature (history written by another model); Gemini 3 rejects an unsigned
 * first function call of a model turn otherwise.
 */
export const GEMINI_SKIP_SIGNATURE = "skip_thought_signature_validator";

/** Model ids that predate signature enforcement (Gemini 1.x / 2.x). */
const NO_SIGNATURE_MODEL = /gemini-[12]\./;

/**
 * `generationConfig.thinkingConfig` for a level: the shared mapping of
 * `shaping.ts`, except that Gemini Pro models, which cannot turn thinking
 * off, get their lowest setting for `none` (`low`; a 128-token budget on 2.x).
 */
export function geminiThinkingFields(
  modelId: string,
  level: ThinkingLevel | undefined,
): Record<string, unknown> {
  const config: Json = { ...geminiThinkingConfig(level, modelId) };
  if (/pro/i.test(modelId)) {
    if (config.thinkingLevel === "minimal") config.thinkingLevel = "low";
    if (config.thinkingBudget === 0) config.thinkingBudget = 128;
  }
  return config;
}

/** `{base}/models/{model}:streamGenerateContent?alt=sse` (a model id with a `/` is used as given). */
function endpointUrl(base: string, modelId: string): string {
  const trimmed = base.replace(/\/+$/, "");
  const model = modelId.includes("/") ? modelId : `models/${modelId}`;
  return `${trimmed}/${model}:streamGenerateContent?alt=sse`;
}

function functionDeclaration(tool: ToolSpec): Json {
  const decl: Json = { name: tool.name, description: tool.description };
  if (typeof tool.parameters === "object" && tool.parameters !== null) {
    decl.parametersJsonSchema = tool.parameters;
  }
  return decl;
}

const EXT_MIME: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  heic: "image/heic",
  pdf: "application/pdf",
};

/** An `inlineData` part for a data URL, else a `fileData` part for an http(s) URL. */
function urlPart(url: string): Json {
  const m = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (m !== null) {
    const mimeType = m[1] || "application/octet-stream";
    let data = m[3] ?? "";
    if (!/;base64/i.test(m[2] ?? "")) {
      let bin = "";
      for (const b of new TextEncoder().encode(decodeURIComponent(data))) {
        bin += String.fromCharCode(b);
      }
      data = btoa(bin);
    }
    return { inlineData: { mimeType, data } };
  }
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase() ?? "";
  return { fileData: { mimeType: EXT_MIME[ext] ?? "image/jpeg", fileUri: url } };
}

function signed(part: Json, fidelity: Record<string, unknown> | undefined): Json {
  const sig = fidelity?.thought_signature;
  if (typeof sig === "string") part.thoughtSignature = sig;
  return part;
}

/**
 * Tool-call names by id for `functionResponse` parts. Ids may repeat (Gemini
 * uses the function name as the id), so each output takes the earliest
 * unanswered call with its id.
 */
function createCallIndex() {
  const pending = new Map<string, string[]>();
  return {
    call(id: string, name: string): void {
      const queue = pending.get(id) ?? [];
      queue.push(name);
      pending.set(id, queue);
    },
    nameFor(id: string): string {
      return pending.get(id)?.shift() ?? id;
    },
  };
}

/** One history message as Gemini parts, with the role they belong to. */
function toParts(
  msg: CompleteMessage,
  calls: ReturnType<typeof createCallIndex>,
): { role: "user" | "model"; parts: Json[] } {
  switch (msg.type) {
    case "text": {
      const role = msg.role === "assistant" ? "model" : "user";
      const hasSig = typeof msg.fidelity?.thought_signature === "string";
      if (msg.text === "" && !hasSig) return { role, parts: [] };
      return { role, parts: [signed({ text: msg.text }, msg.fidelity)] };
    }
    case "thinking": {
      const hasSig = typeof msg.fidelity?.thought_signature === "string";
      if (msg.thinking === "" && !hasSig) return { role: "model", parts: [] };
      return {
        role: "model",
        parts: [signed({ text: msg.thinking, thought: true }, msg.fidelity)],
      };
    }
    case "inline_thinking":
      return { role: "model", parts: [] };
    case "tool_call": {
      calls.call(msg.tool_call_id, msg.name);
      const call: Json = { name: msg.name, args: argumentsObject(msg.arguments) };
      if (msg.tool_call_id !== msg.name) call.id = msg.tool_call_id;
      return { role: "model", parts: [signed({ functionCall: call }, msg.fidelity)] };
    }
    case "tool_call_output": {
      const name = calls.nameFor(msg.tool_call_id);
      const response = msg.stop_reason === "completed"
        ? { output: msg.output }
        : { error: msg.output };
      const fr: Json = { name, response };
      if (msg.tool_call_id !== name) fr.id = msg.tool_call_id;
      const parts: Json[] = [{ functionResponse: fr }];
      for (const url of msg.images ?? []) parts.push(urlPart(url));
      return { role: "user", parts };
    }
    case "image_url":
      return { role: "user", parts: [urlPart(msg.image_url)] };
    case "inline_data": {
      const role = msg.role === "assistant" ? "model" : "user";
      return {
        role,
        parts: [signed({ inlineData: { mimeType: msg.mime_type, data: msg.data } }, msg.fidelity)],
      };
    }
  }
}

/**
 * History → Gemini `contents`: consecutive same-role messages merge into one
 * content; in a user content the `functionResponse` parts come first. When
 * `placeholder` is set, an unsigned first function call of a model content
 * gets {@linkcode GEMINI_SKIP_SIGNATURE}.
 */
export function geminiContents(
  history: CompleteMessage[],
  placeholder = true,
): Record<string, unknown>[] {
  const calls = createCallIndex();
  const out = roleRuns(history, "parts", (msg) => toParts(msg, calls));
  for (const c of out) {
    if (c.role === "user") {
      const responses = c.parts.filter((p) => "functionResponse" in p);
      if (responses.length > 0) {
        c.parts = [...responses, ...c.parts.filter((p) => !("functionResponse" in p))];
      }
    } else if (placeholder) {
      const first = c.parts.find((p) => "functionCall" in p);
      if (first !== undefined && first.thoughtSignature === undefined) {
        first.thoughtSignature = GEMINI_SKIP_SIGNATURE;
      }
    }
  }
  return out;
}

/** Build the streaming `POST {base}/models/{model}:streamGenerateContent?alt=sse` request. */
export function buildGeminiRequest(req: WireRequest): HttpRequest {
  const { endpoint } = req;
  const body: Json = {};
  if (req.system_prompt !== "") body.systemInstruction = { parts: [{ text: req.system_prompt }] };
  const contents = geminiContents(req.history, !NO_SIGNATURE_MODEL.test(endpoint.model_id));
  body.contents = contents;
  if (req.tools.length > 0) {
    body.tools = [{ functionDeclarations: req.tools.map(functionDeclaration) }];
  }
  const generationConfig: Json = {};
  if (req.max_tokens !== undefined) generationConfig.maxOutputTokens = req.max_tokens;
  generationConfig.thinkingConfig = geminiThinkingFields(endpoint.model_id, req.thinking_level);
  body.generationConfig = generationConfig;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "accept": "text/event-stream",
  };
  if (endpoint.api_key !== undefined && endpoint.api_key !== "") {
    headers["x-goog-api-key"] = endpoint.api_key;
  }
  // Each content is serialized once per conversation.
  const head = req.history[0];
  const known = head && (() => elementBytes(head, "gemini", "contents", contents));
  return jsonRequest(endpointUrl(endpoint.base_url, endpoint.model_id), headers, body, known);
}
