/**
 * Outcome classification of model requests: maps HTTP error
 * responses, in-stream provider errors and thrown transport errors onto the
 * six StopReasons. Pure functions; the driver decides which one applies.
 *
 * @module
 */
import { type FailureClass, failureHeadline, hostOf, innermost } from "./failure.ts";
import type { ModelOutcome } from "./outcome.ts";
import { TOO_LARGE_CODE } from "./limits.ts";
import type { WireError } from "./wire.ts";

/** Where a request went: its URL (for the host in messages). */
export interface RequestTarget {
  /** The request URL. */
  url?: string;
}

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
  target: RequestTarget = {},
): ModelOutcome {
  const detail = err.message === "" ? "(empty body)" : err.message;
  const host = target.url !== undefined ? hostOf(target.url) : undefined;
  const head = host === undefined
    ? `HTTP ${status}`
    : failureHeadline("http", { host, http_status: status });
  const error_message = `${head}: ${detail}${err.code ? ` (${err.code})` : ""}`;
  const out: ModelOutcome = {
    status: "failed",
    error_message,
    http_status: status,
    failure: "http",
    ...(host !== undefined ? { host } : {}),
  };
  const wait = parseRetryAfter(retryAfter);
  if (wait !== undefined) out.retry_after_ms = wait;
  if (status === 401 || status === 403 || isAuthCode(err.code)) out.status = "auth";
  else if (isTransportStatus(status)) out.status = "timeout";
  else if (status >= 400 && status < 500) out.permanent = true;
  return out;
}

/** Classify an error the provider reported inside a 200 stream or body. */
export function classifyStreamError(
  err: { message: string; code?: string | undefined; status?: number | undefined },
  target: RequestTarget = {},
): ModelOutcome {
  const host = target.url !== undefined ? hostOf(target.url) : undefined;
  const text = `${err.message}${err.code ? ` (${err.code})` : ""}`;
  if (err.code === MALFORMED_CODE) {
    return { status: "malformed", error_message: err.message, failure: "malformed" };
  }
  if (err.code === TOO_LARGE_CODE) {
    // Past a limit of ./limits.ts. The same request would be answered as
    // largely again: not retried.
    return {
      status: "failed",
      error_message: host === undefined
        ? err.message
        : `${failureHeadline("malformed", { host })}: ${err.message}`,
      failure: "malformed",
      permanent: true,
      ...(host !== undefined ? { host } : {}),
    };
  }
  const error_message = host === undefined
    ? text
    : `${failureHeadline("stream", { host })}: ${text}`;
  const out: ModelOutcome = {
    status: "failed",
    error_message,
    failure: "stream",
    ...(host !== undefined ? { host } : {}),
  };
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

/** The cause chain of `err` joined with `: `, codes appended in parentheses. */
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

interface TransportVerdict {
  cls: FailureClass;
  /** Retrying cannot help. */
  permanent: boolean;
  /** The decisive reason, shown in the headline. */
  reason?: string;
}

/**
 * The transport class of a thrown fetch error, read from Deno's messages and
 * errno codes. Bad URLs and schemes, names that do not exist and TLS
 * failures are permanent; a temporary resolver failure, a refused or reset
 * connection and timeouts are worth retrying.
 */
function transportVerdict(text: string, codes: readonly string[]): TransportVerdict | undefined {
  const has = (...c: string[]) => c.some((x) => codes.includes(x));
  const bad = /Url scheme '[^']*' not supported|Invalid URL[^:]*|Requests to port \d+ are blocked/i
    .exec(text);
  if (bad) return { cls: "bad_url", permanent: true, reason: bad[0] };
  if (
    has("ENOTFOUND", "EAI_AGAIN", "EAI_NONAME") ||
    /dns error|failed to lookup address|name resolution|Name or service not known|nodename nor servname|No address associated with hostname/i
      .test(text)
  ) {
    const temporary = has("EAI_AGAIN") || /temporary failure|try again/i.test(text);
    return {
      cls: "dns",
      permanent: !temporary,
      reason: innermost(text.replace(/ \([A-Z_, ]+\)$/, "")),
    };
  }
  if (has("ECONNREFUSED") || /connection refused/i.test(text)) {
    return { cls: "refused", permanent: false };
  }
  if (
    /InvalidContentType|CorruptMessage|certificate|UnknownIssuer|invalid peer|\btls\b|\bssl\b|handshake/i
      .test(text) && !/\beof\b|reset/i.test(text)
  ) return { cls: "tls", permanent: true, reason: innermost(text) };
  if (
    has(
      "ETIMEDOUT",
      "UND_ERR_CONNECT_TIMEOUT",
      "UND_ERR_HEADERS_TIMEOUT",
      "UND_ERR_BODY_TIMEOUT",
    ) ||
    /timed out|\btimeout\b/i.test(text)
  ) return { cls: "timeout", permanent: false, reason: innermost(text) };
  return undefined;
}

/**
 * Classify an exception thrown while connecting or reading the body (user
 * aborts and idle timeouts are decided by the driver before this). Parse
 * errors → malformed; auth-shaped → auth; a bad URL or scheme, a name that
 * does not exist, a TLS failure → failed and permanent; other
 * transport-shaped errors (refused, reset, temporary DNS failure, Deno's
 * network `TypeError`s, errno codes, keywords) → timeout; anything else →
 * failed. With a target URL the message starts with a headline naming the
 * class and the host (see ./failure.ts).
 */
export function classifyException(err: unknown, target: RequestTarget = {}): ModelOutcome {
  const text = describeError(err);
  const links = chain(err);
  const names = links.map((e) => (e instanceof Error ? e.name : ""));
  const host = target.url !== undefined ? hostOf(target.url) : undefined;
  const at = {
    ...(host !== undefined ? { host } : {}),
    ...(target.url !== undefined ? { url: target.url } : {}),
  };
  const labelled = (cls: FailureClass, reason?: string): string =>
    target.url === undefined
      ? text
      : `${failureHeadline(cls, { ...at, ...(reason !== undefined ? { reason } : {}) })}: ${text}`;
  const withHost = host !== undefined ? { host } : {};
  if (
    names.some((n) =>
      n === "SyntaxError" || n === "ToolCallArgumentParseError" || n === "EmptyResponseError"
    ) || /^(Streaming response yielded no events|Last event must carry)/.test(text)
  ) return { status: "malformed", error_message: text, failure: "malformed", ...withHost };
  if (
    names.includes("AuthenticationError") || links.some((e) => isAuthCode(errorCode(e)))
  ) return { status: "auth", error_message: text, failure: "other", ...withHost };
  const codes = links.map(errorCode).filter((c): c is string => c !== undefined);
  const verdict = transportVerdict(text, codes);
  if (verdict) {
    const out: ModelOutcome = {
      status: verdict.permanent ? "failed" : "timeout",
      error_message: labelled(verdict.cls, verdict.reason),
      failure: verdict.cls,
      ...withHost,
    };
    if (verdict.permanent) out.permanent = true;
    return out;
  }
  const transport = links.some((e) => {
    const code = errorCode(e);
    return (code !== undefined && TRANSPORT_CODES.has(code)) || e instanceof TypeError ||
      (e instanceof Error && e.name === "ConnectionError");
  }) || looksTransient(text);
  if (transport) {
    return {
      status: "timeout",
      error_message: labelled("connection"),
      failure: "connection",
      ...withHost,
    };
  }
  return { status: "failed", error_message: text, failure: "other", ...withHost };
}
