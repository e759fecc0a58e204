/**
 * Gemini response parsing: `streamGenerateContent?alt=sse` chunks, whole
 * `generateContent` bodies (or a JSON array of chunks) and HTTP error bodies
 * → neutral {@linkcode WireDelta}s.
 *
 * Fidelity key: `thought_signature` (the part's `thoughtSignature`, verbatim)
 * on the text, thinking or tool call it arrived with. A part carrying a
 * signature is its own segment, so replay can put the signature back on
 * exactly that part.
 *
 * @module
 */
import { MALFORMED_CODE } from "../classify.ts";
import { MAX_RESPONSE_TOOL_CALLS } from "../limits.ts";
import type { FinishReason, SseEvent, WireDelta, WireError, WireParser } from "../wire.ts";

import { isRecord, type Json, parseErrorBody, parseEventJson, str } from "./_parse_common.ts";

function count(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0;
}

/** Finish reasons that end a candidate with a malformed or refused tool call. */
const TOOL_FAILURES = new Set([
  "MALFORMED_FUNCTION_CALL",
  "UNEXPECTED_TOOL_CALL",
  "TOO_MANY_TOOL_CALLS",
]);

/** Map a Gemini `finishReason` onto a neutral finish reason. */
export function geminiFinish(raw: string, sawToolCall = false): FinishReason {
  switch (raw) {
    case "STOP":
      return sawToolCall ? "tool_call" : "stop";
    case "MAX_TOKENS":
      return "length";
    case "SAFETY":
    case "RECITATION":
    case "PROHIBITED_CONTENT":
    case "BLOCKLIST":
    case "SPII":
    case "IMAGE_SAFETY":
    case "IMAGE_PROHIBITED_CONTENT":
    case "IMAGE_RECITATION":
      return "content_filter";
    default:
      return "other";
  }
}

/** Parser state shared by the streaming parser and the whole-body parser. */
interface State {
  /** Which unsigned segment kind is open (signed parts close their own segment). */
  open: "text" | "thinking" | undefined;
  calls: number;
  sawToolCall: boolean;
  lastUsage: string;
}

function newState(): State {
  return { open: undefined, calls: 0, sawToolCall: false, lastUsage: "" };
}

/** Deltas of one text or thought part. */
function textPart(state: State, part: Json, kind: "text" | "thinking", out: WireDelta[]): void {
  const text = str(part.text) ?? "";
  const signature = str(part.thoughtSignature);
  if (signature === undefined) {
    if (text === "") return;
    out.push(kind === "text" ? { type: "text", text } : { type: "thinking", thinking: text });
    state.open = kind;
    return;
  }
  if (state.open !== undefined) out.push({ type: "segment_end" });
  const fidelity = { thought_signature: signature };
  out.push(
    kind === "text"
      ? { type: "text", text, fidelity }
      : { type: "thinking", thinking: text, fidelity },
  );
  out.push({ type: "segment_end" });
  state.open = undefined;
}

function functionCallPart(state: State, part: Json, call: Json, out: WireDelta[]): void {
  const name = str(call.name) ?? "";
  const id = str(call.id) || name;
  const key = `call_${state.calls++}`;
  const signature = str(part.thoughtSignature);
  const fidelity = signature === undefined ? undefined : { thought_signature: signature };
  const args = call.args === undefined ? {} : call.args;
  out.push(
    fidelity === undefined
      ? { type: "tool_call_start", key, id, name }
      : { type: "tool_call_start", key, id, name, fidelity },
    { type: "tool_call_args", key, args: JSON.stringify(args) },
    fidelity === undefined
      ? { type: "tool_call_end", key }
      : { type: "tool_call_end", key, fidelity },
  );
  state.open = undefined;
  state.sawToolCall = true;
}

function usageDelta(state: State, meta: Json, out: WireDelta[]): void {
  const fields = [
    "promptTokenCount",
    "cachedContentTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
  ];
  if (!fields.some((f) => typeof meta[f] === "number")) return;
  const cached = count(meta.cachedContentTokenCount);
  const delta: WireDelta = {
    type: "usage",
    cache_read: cached,
    cache_write: Math.max(0, count(meta.promptTokenCount) - cached),
    output: count(meta.candidatesTokenCount) + count(meta.thoughtsTokenCount),
  };
  const sig = JSON.stringify(delta);
  if (sig === state.lastUsage) return;
  state.lastUsage = sig;
  out.push(delta);
}

/** The `error` delta of a Google RPC error object `{code, message, status, details}`. */
function errorDelta(err: Json): WireDelta {
  const { message, code } = describeRpcError(err);
  const delta: WireDelta = { type: "error", message };
  if (code !== undefined) delta.code = code;
  if (typeof err.code === "number") delta.status = err.code;
  return delta;
}

/** Message and code of a Google RPC error: the ErrorInfo `reason` if any, else `status`. */
function describeRpcError(err: Json): WireError {
  const details = Array.isArray(err.details) ? err.details.filter(isRecord) : [];
  const reason = details.map((d) => str(d.reason)).find((r) => r !== undefined && r !== "");
  const code = reason ?? str(err.status);
  const message = str(err.message) ?? (code ? `Gemini reported ${code}` : "Gemini error");
  return code === undefined ? { message } : { message, code };
}

/** Deltas of one response chunk (a whole body is a single chunk). */
function handleChunk(state: State, chunk: Json): WireDelta[] {
  const out: WireDelta[] = [];
  if (isRecord(chunk.error)) return [errorDelta(chunk.error)];
  const candidate = Array.isArray(chunk.candidates) && isRecord(chunk.candidates[0])
    ? chunk.candidates[0]
    : undefined;
  const parts = candidate !== undefined && isRecord(candidate.content) &&
      Array.isArray(candidate.content.parts)
    ? candidate.content.parts.filter(isRecord)
    : [];
  for (const part of parts) {
    if (isRecord(part.functionCall)) {
      // Past the limit the translator has stopped the response: the rest is not made into calls.
      if (state.calls > MAX_RESPONSE_TOOL_CALLS) break;
      functionCallPart(state, part, part.functionCall, out);
    } else if (part.thought === true) textPart(state, part, "thinking", out);
    else if (typeof part.text === "string") textPart(state, part, "text", out);
    // inlineData, executableCode, codeExecutionResult: not surfaced.
  }
  if (isRecord(chunk.usageMetadata)) usageDelta(state, chunk.usageMetadata, out);
  const feedback = isRecord(chunk.promptFeedback) ? chunk.promptFeedback : undefined;
  const blockReason = feedback !== undefined ? str(feedback.blockReason) : undefined;
  if (blockReason !== undefined && candidate === undefined) {
    const detail = str(feedback?.blockReasonMessage);
    out.push({ type: "finish", reason: "content_filter", raw: blockReason });
    out.push({
      type: "error",
      code: blockReason,
      message: `Gemini blocked the prompt${detail ? `: ${detail}` : ""}`,
    });
  }
  const raw = candidate !== undefined ? str(candidate.finishReason) : undefined;
  if (raw !== undefined && raw !== "FINISH_REASON_UNSPECIFIED") {
    out.push({ type: "finish", reason: geminiFinish(raw, state.sawToolCall), raw });
    if (TOOL_FAILURES.has(raw)) {
      const detail = str(candidate?.finishMessage);
      out.push({
        type: "error",
        code: raw,
        message: `Gemini ended the response with ${raw}${detail ? `: ${detail}` : ""}`,
      });
    }
  }
  return out;
}

/** A parser for one Gemini `streamGenerateContent?alt=sse` stream. */
export function createGeminiParser(): WireParser {
  const state = newState();
  return {
    push(event: SseEvent): WireDelta[] {
      const parsed = parseEventJson(event.data, "Gemini stream chunk");
      if (!parsed.ok) return [parsed.delta];
      const obj = parsed.value;
      if (Array.isArray(obj)) return obj.filter(isRecord).flatMap((c) => handleChunk(state, c));
      return isRecord(obj) ? handleChunk(state, obj) : [];
    },
    end(): WireDelta[] {
      return [];
    },
  };
}

/** Deltas of a whole `generateContent` body, or of a JSON array of stream chunks. */
export function parseGeminiBody(body: unknown): WireDelta[] {
  const state = newState();
  if (Array.isArray(body)) return body.filter(isRecord).flatMap((c) => handleChunk(state, c));
  if (isRecord(body)) return handleChunk(state, body);
  return [{
    type: "error",
    code: MALFORMED_CODE,
    message: "Gemini response body is not JSON object",
  }];
}

/** The provider message and code of a Gemini HTTP error body. */
export function parseGeminiError(status: number, bodyText: string): WireError {
  return parseErrorBody(status, bodyText, (obj) => {
    const first = Array.isArray(obj) ? obj[0] : obj;
    return isRecord(first) && isRecord(first.error) ? describeRpcError(first.error) : undefined;
  });
}
