/**
 * Script types of the scripted model server, and the encoder contract each
 * wire protocol implements in `encode_<protocol>.ts`.
 *
 * A {@linkcode ScriptedTurn} is plain data: what one model response should
 * contain (text, thinking, tool calls, usage, finish) and how the transport
 * should misbehave (HTTP error, delay, stall, disconnect, malformed chunk).
 * An {@linkcode Encoder} turns the content part into that protocol's SSE
 * events; the server applies the transport part identically for every
 * protocol. Build turns with {@linkcode turn} and {@linkcode item}.
 *
 * @module
 */
import type { WireProtocol } from "../../../lib/models/wire.ts";

/** Assistant text. */
export interface ScriptedText {
  /** Discriminator. */
  kind: "text";
  /** The whole text; encoders split it into deltas of `chunk` chars. */
  text: string;
  /** Responses-API message `phase` (e.g. `commentary`, `final_answer`); others ignore it. */
  phase?: string;
}

/** A reasoning block. */
export interface ScriptedThinking {
  /** Discriminator. */
  kind: "thinking";
  /** Reasoning text (may be empty when only an encrypted payload exists). */
  thinking: string;
  /** Anthropic `signature` / Gemini `thoughtSignature` / chat `reasoning_details` signature. */
  signature?: string;
  /** Encrypted payload: Responses `encrypted_content`, Anthropic `redacted_thinking.data`, OpenRouter `reasoning.encrypted`. */
  encrypted?: string;
  /** Provider item id (Responses reasoning item id `rs_…`). */
  id?: string;
  /** Chat Completions: which delta field carries it (`reasoning_content` default, `reasoning`, `reasoning_details`). */
  field?: "reasoning_content" | "reasoning" | "reasoning_details";
}

/** A tool call. */
export interface ScriptedToolCall {
  /** Discriminator. */
  kind: "tool_call";
  /** Tool name. */
  name: string;
  /** Arguments: an object (JSON-encoded by the encoder) or raw argument text sent verbatim. */
  arguments: Record<string, unknown> | string;
  /** Call id; default {@linkcode toolCallIdOf}. */
  id?: string;
  /** Gemini `thoughtSignature` on the functionCall part; others ignore it. */
  signature?: string;
}

/** One content item of a turn, in stream order. */
export type ScriptedItem = ScriptedText | ScriptedThinking | ScriptedToolCall;

/** Token usage a turn reports (provider terms: input includes cached input). */
export interface ScriptedUsage {
  /** Total input tokens, cached included. */
  input: number;
  /** Of `input`, tokens served from cache. */
  cached_input?: number;
  /** Output tokens, reasoning included. */
  output: number;
  /** Of `output`, reasoning tokens. */
  reasoning?: number;
}

/** How the scripted response finishes. */
export type ScriptedFinish = "stop" | "tool_call" | "length" | "content_filter" | "refusal";

/** An HTTP error response instead of a stream. */
export interface ScriptedHttpError {
  /** HTTP status. */
  status: number;
  /** Body: a string sent verbatim, an object sent as JSON, or undefined = the encoder's provider-shaped error ({@linkcode Encoder.httpErrorBody}). */
  body?: unknown;
  /** Message for the encoder-built body. */
  message?: string;
  /** Code/type for the encoder-built body, e.g. `invalid_api_key`. */
  code?: string | undefined;
  /** Extra response headers, e.g. `{"retry-after": "2"}`. */
  headers?: Record<string, string> | undefined;
}

/** An error reported inside the stream after the items. */
export interface ScriptedStreamError {
  /** Provider message. */
  message: string;
  /** Provider code/type, e.g. `overloaded_error`, `rate_limit_exceeded`, `server_error`. */
  code?: string | undefined;
  /** Numeric status some providers embed (OpenRouter `error.code: 502`). */
  status?: number;
}

/** One scripted model response. */
export interface ScriptedTurn {
  /** Content, in stream order. */
  items: ScriptedItem[];
  /** Usage; default {@linkcode usageOf}. Set `null` to send no usage at all. */
  usage?: ScriptedUsage | null;
  /** Finish; default {@linkcode finishOf} (`tool_call` when there are tool calls, else `stop`). */
  finish?: ScriptedFinish;
  /** Text/thinking/argument delta size in characters (default 8). */
  chunk?: number;
  /** Emitted after the items instead of a normal finish. */
  stream_error?: ScriptedStreamError;
  /** Answer with an HTTP error instead of a stream (items ignored). */
  http_error?: ScriptedHttpError;
  /** Wait this long before sending response headers. */
  delay_ms?: number | undefined;
  /** Send this many events, then hold the connection open (until the client goes or `max_hold_ms`). */
  stall_after?: number;
  /**
   * Send `events` events, then wait until `until` settles (or the client goes) before the rest:
   * the response has begun, and the test decides when it goes on.
   */
  hold_after?: { events: number; until: Promise<unknown> };
  /** Send this many events, then cut the connection without finishing. */
  disconnect_after?: number;
  /** Replace the event at this 0-based position with a malformed (non-JSON) chunk. */
  malformed_at?: number;
  /** Bypass the encoder: send these raw SSE event strings (each a complete event incl. blank line). */
  raw_events?: string[];
  /**
   * Bypass the encoder: send the raw SSE events this yields, made as they are
   * sent (a stream too long to hold; the transport failure modes do not apply).
   */
  event_source?: () => Iterator<string>;
  /** Bypass everything: send this exact body (e.g. a recorded fixture) with `content_type`. */
  raw_body?: string | Uint8Array;
  /** Content type for `raw_body` (default `text/event-stream`). */
  content_type?: string;
}

/**
 * One protocol's encoder. Files: `encode_<protocol>.ts`, registered in
 * `encoders.ts`. Transport failure modes are applied by the server, not here.
 */
export interface Encoder {
  /** The protocol served. */
  protocol: WireProtocol;
  /** The request path it serves for `model`, e.g. `/v1/chat/completions`. */
  path(model: string): string;
  /** Whether a request path (no query) belongs to this protocol. */
  matches(pathname: string): boolean;
  /**
   * SSE events for the content of `turn`, in order. Each string is one
   * complete event including its terminating blank line (e.g.
   * `"event: x\ndata: {...}\n\n"`). Handles `items`, `usage`, `finish`,
   * `chunk` and `stream_error`.
   */
  encodeTurn(turn: ScriptedTurn, model: string): string[];
  /** The provider-shaped JSON error body for an HTTP error. */
  httpErrorBody(status: number, message: string, code?: string): unknown;
}

/** Default usage of a turn that sets none. */
export const DEFAULT_USAGE: ScriptedUsage = {
  input: 100,
  cached_input: 0,
  output: 20,
  reasoning: 0,
};

/** The usage a turn reports (`null` when it reports none). */
export function usageOf(t: ScriptedTurn): ScriptedUsage | null {
  if (t.usage === null) return null;
  return { ...DEFAULT_USAGE, ...t.usage };
}

/** The finish a turn reports. */
export function finishOf(t: ScriptedTurn): ScriptedFinish {
  return t.finish ?? (t.items.some((i) => i.kind === "tool_call") ? "tool_call" : "stop");
}

/** The argument text of a tool call item. */
export function argumentsText(i: ScriptedToolCall): string {
  return typeof i.arguments === "string" ? i.arguments : JSON.stringify(i.arguments);
}

/** The id of the `index`-th item of a turn when it is a tool call without an explicit id. */
export function toolCallIdOf(i: ScriptedToolCall, index: number, prefix = "call_"): string {
  return i.id ?? `${prefix}${index}`;
}

/** Split `s` into pieces of `n` characters (at least one piece, possibly empty). */
export function chunks(s: string, n = 8): string[] {
  if (s.length === 0) return [""];
  const out: string[] = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
}

/** Frame one SSE event: optional `event:` line, one `data:` line, blank line. */
export function sse(data: unknown, event?: string, eol = "\n"): string {
  const text = typeof data === "string" ? data : JSON.stringify(data);
  return `${event === undefined ? "" : `event: ${event}${eol}`}data: ${text}${eol}${eol}`;
}

/** Item builders. */
export const item = {
  /** Assistant text. */
  text: (text: string, opts: Omit<ScriptedText, "kind" | "text"> = {}): ScriptedText => ({
    kind: "text",
    text,
    ...opts,
  }),
  /** A reasoning block. */
  thinking: (
    thinking: string,
    opts: Omit<ScriptedThinking, "kind" | "thinking"> = {},
  ): ScriptedThinking => ({ kind: "thinking", thinking, ...opts }),
  /** A tool call. */
  toolCall: (
    name: string,
    args: Record<string, unknown> | string = {},
    opts: Omit<ScriptedToolCall, "kind" | "name" | "arguments"> = {},
  ): ScriptedToolCall => ({ kind: "tool_call", name, arguments: args, ...opts }),
};

/** Turn builders. Spread extra fields in: `{...turn.text("hi"), stall_after: 2}`. */
export const turn = {
  /** A turn of the given items. */
  of: (...items: ScriptedItem[]): ScriptedTurn => ({ items }),
  /** A text-only turn. */
  text: (text: string, extra: Partial<ScriptedTurn> = {}): ScriptedTurn => ({
    items: [item.text(text)],
    ...extra,
  }),
  /** A turn that thinks, then optionally answers. */
  thinking: (thinking: string, then?: string, extra: Partial<ScriptedTurn> = {}): ScriptedTurn => ({
    items: then === undefined
      ? [item.thinking(thinking)]
      : [item.thinking(thinking), item.text(then)],
    ...extra,
  }),
  /** A turn that makes one tool call. */
  toolCall: (
    name: string,
    args: Record<string, unknown> | string = {},
    extra: Partial<ScriptedTurn> = {},
  ): ScriptedTurn => ({ items: [item.toolCall(name, args)], ...extra }),
  /** An HTTP error response (body: encoder-built unless given). */
  error: (
    status: number,
    body?: unknown,
    headers?: Record<string, string>,
  ): ScriptedTurn => ({ items: [], http_error: { status, body, headers } }),
  /** An in-stream error after optional text. */
  streamError: (message: string, code?: string, before = ""): ScriptedTurn => ({
    items: before === "" ? [] : [item.text(before)],
    stream_error: { message, code },
  }),
  /** Send a recorded body verbatim. */
  raw: (body: string | Uint8Array, content_type = "text/event-stream"): ScriptedTurn => ({
    items: [],
    raw_body: body,
    content_type,
  }),
};
