/**
 * Outcome classification of model requests (§5.12): maps HTTP error
 * responses, in-stream provider errors and thrown transport errors onto the
 * six StopReasons. Pure functions; the driver decides which one applies.
 *
 * @module
 */
import type { ModelOutcome } from "./outcome.ts";
import type { WireError } from "./wire.ts";

/** Error code wire parsers put on an `error` delta for unparsable or invalid chunks. */
export const MALFORMED_CODE = "penguin_malformed";

const AUTH_CODES = new Set([
  "invalid_api_key",
  "authentication_error",
  "unauthorized",
  "unauthenticated",
  "permission_denied",
  "api_key_invalid",
  "invalid_authentication",
  "permission_error",
]);

const TRANSPORT_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ENOTFOUND",
  "ECONNABORTED",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

const TRANSPORT_WORDS = [
  "timeout",
  "timed out",
  "network",
  "socket hang up",
  "connection reset",
  "connection refused",
  "connection closed",
  "other side closed",
  "fetch failed",
  "error sending request",
  "error reading a body",
  "error decoding response body",
  "broken pipe",
  "unexpected eof",
  "too many requests",
  "rate limit",
  "rate_limit",
  "temporarily unavailable",
  "overloaded",
  "502",
  "503",
  "504",
];

/** Whether a provider error code or type means the credentials were rejected. */
export function isAuthCode(code: string | undefined): boolean {
  return code !== undefined && AUTH_CODES.has(code.toLowerCase());
}

/** Whether an HTTP status is transport-shaped (retryable as `timeout`): 408, 429, 5xx. */
export function isTransportStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

function looksTransient(text: string): boolean {
  const t = text.toLowerCase();
  if (TRANSPORT_WORDS.some((w) => t.includes(w))) return true;
  return t.includes("terminated") && /socket|connection|closed/.test(t);
}

/**
 * Parse a `Retry-After` header (delay seconds or an HTTP date) into ms.
 * Returns undefined when absent or unparsable; never negative.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (v === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Classify an HTTP error response from its status, the parsed provider error and `Retry-After`. */
export function classifyHttpError(
  status: number,
  err: WireError,
  retryAfter?: string | null,
): ModelOutcome {
  const detail = err.message === "" ? "(empty body)" : err.message;
  const error_message = `HTTP ${status}: ${detail}${err.code ? ` (${err.code})` : ""}`;
  const out: ModelOutcome = { status: "failed", error_message, http_status: status };
  const wait = parseRetryAfter(retryAfter);
  if (wait !== undefined) out.retry_after_ms = wait;
  if (status === 401 || status === 403 || isAuthCode(err.code)) out.status = "auth";
  else if (isTransportStatus(status)) out.status = "timeout";
  else if (status >= 400 && status < 500) out.permanent = true;
  return out;
}

/** Classify an error the provider reported inside a 200 stream or body. */
export function classifyStreamError(
  err: { message: string; code?: string; status?: number },
): ModelOutcome {
  const error_message = `${err.message}${err.code ? ` (${err.code})` : ""}`;
  if (err.code === MALFORMED_CODE) return { status: "malformed", error_message: err.message };
  const out: ModelOutcome = { status: "failed", error_message };
  if (err.status !== undefined) out.http_status = err.status;
  if (isAuthCode(err.code) || err.status === 401 || err.status === 403) out.status = "auth";
  else if (
    (err.status !== undefined && isTransportStatus(err.status)) ||
    looksTransient(`${err.code ?? ""} ${err.message}`)
  ) out.status = "timeout";
  return out;
}

function errorCode(e: unknown): string | undefined {
  if (typeof e !== "object" || e === null) return undefined;
  const code = (e as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

/** The cause chain of `err` joined with `: `, codes appended in parentheses (§5.12). */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  const codes: string[] = [];
  let cur: unknown = err;
  for (let depth = 0; cur !== undefined && cur !== null && depth < 8; depth++) {
    const msg = cur instanceof Error ? cur.message : String(cur);
    if (msg !== "" && !parts.includes(msg)) parts.push(msg);
    const code = errorCode(cur);
    if (code !== undefined && !codes.includes(code)) codes.push(code);
    cur = cur instanceof Error ? cur.cause : undefined;
  }
  const text = parts.join(": ") || "unknown error";
  return codes.length > 0 ? `${text} (${codes.join(", ")})` : text;
}

function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  let cur: unknown = err;
  for (let depth = 0; cur !== undefined && cur !== null && depth < 8; depth++) {
    out.push(cur);
    cur = cur instanceof Error ? cur.cause : undefined;
  }
  return out;
}

/**
 * Classify an exception thrown while connecting or reading the body (user
 * aborts and idle timeouts are decided by the driver before this). Parse
 * errors → malformed; auth-shaped → auth; transport-shaped (Deno's network
 * `TypeError`s, errno codes, keywords) → timeout; anything else → failed.
 */
export function classifyException(err: unknown): ModelOutcome {
  const error_message = describeError(err);
  const links = chain(err);
  const names = links.map((e) => (e instanceof Error ? e.name : ""));
  if (
    names.some((n) =>
      n === "SyntaxError" || n === "ToolCallArgumentParseError" || n === "EmptyResponseError"
    ) || /^(Streaming response yielded no events|Last event must carry)/.test(error_message)
  ) return { status: "malformed", error_message };
  if (
    names.includes("AuthenticationError") || links.some((e) => isAuthCode(errorCode(e)))
  ) return { status: "auth", error_message };
  const transport = links.some((e) => {
    const code = errorCode(e);
    return (code !== undefined && TRANSPORT_CODES.has(code)) || e instanceof TypeError ||
      (e instanceof Error && e.name === "ConnectionError");
  }) || looksTransient(error_message);
  return { status: transport ? "timeout" : "failed", error_message };
}
