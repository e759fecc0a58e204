/**
 * The contract every wire-protocol module implements.
 *
 * A wire module is pure: it turns a protocol-neutral request into an HTTP
 * request, and turns the provider's parsed SSE events (or a non-streamed JSON
 * body) into protocol-neutral {@linkcode WireDelta}s. Fetching, SSE framing,
 * idle timeouts, aborts, classification and the OmniMessage translation are
 * shared code in `lib/models/`, so each protocol is only its own format.
 *
 * @module
 */
import type { CompleteMessage, Fidelity, ToolSpec } from "../protocol/types.ts";
import type { ClientType } from "../state/project_config_types.ts";

/** The four wire protocols penguin speaks (declared once, as the `client_type` values). */
export type WireProtocol = ClientType;

/** Reasoning effort requested of the model. */
export type ThinkingLevel = "none" | "low" | "medium" | "high" | "xhigh" | "max";

/** Where and as whom one request is sent. Built only from an explicit (provider, model_id) pair. */
export interface ModelEndpoint {
  /** Provider group id, e.g. `deepseek`. */
  provider: string;
  /** Model id, sent upstream verbatim. */
  model_id: string;
  /** Wire protocol. */
  protocol: WireProtocol;
  /** Base URL, e.g. `https://api.deepseek.com/v1` (no trailing slash). */
  base_url: string;
  /** The key for exactly this endpoint; never reused for another. */
  api_key?: string;
}

/** A protocol-neutral request. */
export interface WireRequest {
  /** Target. */
  endpoint: ModelEndpoint;
  /** Assembled system prompt (may be empty). */
  system_prompt: string;
  /** Tools offered; omitted from the wire when empty. */
  tools: ToolSpec[];
  /**
   * The whole model context, oldest first: complete messages only. Tool-call
   * ids carry no `#n` suffix any more (stripped by the caller). `fidelity` of
   * each message must be sent back verbatim in the provider's own field.
   */
  history: CompleteMessage[];
  /** Requested reasoning effort; undefined = the provider default. */
  thinking_level?: ThinkingLevel;
  /** Output cap, already clamped; undefined = send none. */
  max_tokens?: number;
}

/** The HTTP request a wire module builds. Always a POST of a JSON body. */
export interface HttpRequest {
  /** Absolute URL. */
  url: string;
  /** Headers, auth included. */
  headers: Record<string, string>;
  /** JSON body text. */
  body: string;
  /** The body as a value, when built from one: lets the driver stream a very large body. */
  json?: Record<string, unknown>;
  /** The UTF-8 bytes of `body`, when the module built them (what the driver then sends). */
  bytes?: Uint8Array<ArrayBuffer>;
}

/** Why the provider stopped, in neutral terms. */
export type FinishReason = "stop" | "length" | "tool_call" | "content_filter" | "refusal" | "other";

/**
 * One neutral delta from a provider stream. Text and thinking deltas with
 * fidelity are segmented so that replay is byte-exact: a thinking delta whose
 * non-empty fidelity differs from the open block's starts a new block; a text
 * delta with a differing `fidelity.phase` starts a new text segment.
 */
export type WireDelta =
  /** Assistant text increment (fidelity keys accumulate onto the open segment). */
  | { type: "text"; text: string; fidelity?: Fidelity | undefined }
  /** Reasoning increment (fidelity, e.g. a signature, attaches to the open block). */
  | { type: "thinking"; thinking: string; fidelity?: Fidelity }
  /** Close the open text or thinking segment (e.g. an Anthropic content_block_stop). */
  | { type: "segment_end" }
  /**
   * A tool call begins. `key` identifies it for later arg deltas (index or id).
   * `oversize`: the parser already dropped arguments past a limit
   * (../limits.ts); the call ends `failed`.
   */
  | {
    type: "tool_call_start";
    key: string;
    id: string;
    name: string;
    fidelity?: Fidelity;
    oversize?: boolean;
  }
  /** Argument text increment of the tool call `key`. */
  | { type: "tool_call_args"; key: string; args: string }
  /** The tool call `key` is complete (its args can be JSON-checked now). */
  | { type: "tool_call_end"; key: string; fidelity?: Fidelity; oversize?: boolean }
  /**
   * Token usage in penguin's terms: `cache_read` = cached input,
   * `cache_write` = uncached input, `output` = reasoning + response. A later
   * usage delta in the same request replaces an earlier one.
   */
  | { type: "usage"; cache_read: number; cache_write: number; output: number }
  /** The provider's finish reason. */
  | { type: "finish"; reason: FinishReason; raw?: string }
  /** An error reported inside the stream or body. */
  | { type: "error"; message: string; code?: string; status?: number };

/** An SSE event as framed by `eventsource-parser`. */
export interface SseEvent {
  /** The `event:` field, if any. */
  event?: string | undefined;
  /** The `data:` payload. */
  data: string;
}

/** A stateful parser for one response stream. */
export interface WireParser {
  /** Feed one SSE event; returns the deltas it produced. Never throws on bad data: emits `error`. */
  push(event: SseEvent): WireDelta[];
  /** The stream ended; flush anything pending. */
  end(): WireDelta[];
}

/** What a wire module makes of an HTTP error body. */
export interface WireError {
  /** Human-readable message from the provider. */
  message: string;
  /** Provider error code or type, e.g. `invalid_api_key`, `overloaded_error`. */
  code?: string;
}

/** One wire protocol. */
export interface WireModule {
  /** Protocol id. */
  id: WireProtocol;
  /** Build the streaming HTTP request. */
  buildRequest(req: WireRequest): HttpRequest;
  /** A parser for one streamed response. */
  createParser(): WireParser;
  /** Deltas of a complete non-streamed JSON response body. */
  parseBody(body: unknown): WireDelta[];
  /** The provider's message and code from an HTTP error response body. */
  parseError(status: number, bodyText: string): WireError;
}
