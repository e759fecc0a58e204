/**
 * Scripted-server encoder for Gemini `streamGenerateContent?alt=sse`: one
 * chunk per text/thinking piece and per function call, each carrying the
 * usage reported so far (Gemini reports usage cumulatively), the finish
 * reason and final usage on the last chunk, CRLF framing and no `[DONE]`.
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
  type ScriptedUsage,
  sse,
  usageOf,
} from "./script.ts";

type Json = Record<string, unknown>;

const FINISH_REASON: Record<ScriptedFinish, string> = {
  stop: "STOP",
  tool_call: "STOP",
  length: "MAX_TOKENS",
  content_filter: "SAFETY",
  refusal: "PROHIBITED_CONTENT",
};

const RPC_STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

function usageMetadata(u: ScriptedUsage, final: boolean): Json {
  const meta: Json = { promptTokenCount: u.input };
  if ((u.cached_input ?? 0) > 0) meta.cachedContentTokenCount = u.cached_input;
  if (final) meta.candidatesTokenCount = u.output - (u.reasoning ?? 0);
  if ((u.reasoning ?? 0) > 0) meta.thoughtsTokenCount = u.reasoning;
  meta.totalTokenCount = u.input + (final ? u.output : (u.reasoning ?? 0));
  return meta;
}

function argsObject(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The Gemini encoder. */
export const geminiEncoder: Encoder = {
  protocol: "gemini",
  path: (model) => `/v1beta/models/${model}:streamGenerateContent`,
  matches: (pathname) => pathname.endsWith(":streamGenerateContent"),
  encodeTurn(turn: ScriptedTurn, model: string): string[] {
    const size = turn.chunk ?? 8;
    const partsList: Json[][] = [];
    for (const it of turn.items) {
      if (it.kind === "text") {
        for (const text of chunks(it.text, size)) partsList.push([{ text }]);
      } else if (it.kind === "thinking") {
        if (it.signature !== undefined) {
          partsList.push([{ text: it.thinking, thought: true, thoughtSignature: it.signature }]);
        } else {
          for (const text of chunks(it.thinking, size)) partsList.push([{ text, thought: true }]);
        }
      } else {
        const call: Json = { name: it.name, args: argsObject(argumentsText(it)) };
        if (it.id !== undefined) call.id = it.id;
        const part: Json = { functionCall: call };
        if (it.signature !== undefined) part.thoughtSignature = it.signature;
        partsList.push([part]);
      }
    }
    const usage = usageOf(turn);
    const chunkOf = (parts: Json[], final: boolean): Json => {
      const candidate: Json = { content: { parts, role: "model" }, index: 0 };
      if (final) candidate.finishReason = FINISH_REASON[finishOf(turn)];
      const out: Json = { candidates: [candidate] };
      if (usage !== null) out.usageMetadata = usageMetadata(usage, final);
      out.modelVersion = model;
      out.responseId = "scriptedResponse0001";
      return out;
    };
    const crlf = (data: Json) => sse(data, undefined, "\r\n");
    if (turn.stream_error !== undefined) {
      const { message, code, status } = turn.stream_error;
      const events = partsList.map((parts) => crlf(chunkOf(parts, false)));
      events.push(crlf({ error: { code: status ?? 500, message, status: code ?? "INTERNAL" } }));
      return events;
    }
    if (partsList.length === 0) partsList.push([{ text: "" }]);
    return partsList.map((parts, i) => crlf(chunkOf(parts, i === partsList.length - 1)));
  },
  httpErrorBody(status: number, message: string, code?: string): unknown {
    const error: Json = { code: status, message, status: RPC_STATUS[status] ?? "UNKNOWN" };
    if (code !== undefined) {
      error.details = [{
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: code,
        domain: "googleapis.com",
      }];
    }
    return { error };
  },
};
