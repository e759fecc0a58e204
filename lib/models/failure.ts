/**
 * The failure classes of a model request, shared by every surface that
 * explains one: the retry and abort lines of `run`/`chat`, `models test`,
 * `trace show` and `trace stats`.
 *
 * A failed request is recorded as a `request_end` whose `status` is one of the
 * six StopReasons (completed, failed, aborted,
 * timeout, malformed, auth) and whose `error_message` starts with a headline
 * naming the class and the endpoint host, e.g.
 * `connection refused by 127.0.0.1:4000: fetch failed: …` or
 * `HTTP 503 from api.example.com: Overloaded (overloaded_error)`. The
 * headline never contains `": "`, so everything after the first `": "` is the
 * detail (the provider's own message, or the transport's cause chain).
 * {@linkcode readFailure} recognises these headlines, and falls back to the
 * raw texts of older traces (Deno's fetch errors, errno codes).
 *
 * Pure functions over strings.
 *
 * @module
 */

/** What went wrong with a model request. */
export type FailureClass =
  /** The endpoint URL is invalid, not http(s), or a port fetch refuses. Permanent. */
  | "bad_url"
  /** The host name did not resolve. */
  | "dns"
  /** Nothing listens at the host and port. */
  | "refused"
  /** The TLS handshake failed (certificate, or https against a plain-HTTP port). Permanent. */
  | "tls"
  /** No data within the idle timeout, or a connect timeout. */
  | "timeout"
  /** The connection failed or dropped mid-request. */
  | "connection"
  /** The provider answered with an HTTP error status. */
  | "http"
  /** The provider reported an error inside a 200 stream. */
  | "stream"
  /** The response could not be parsed or was truncated. */
  | "malformed"
  /** The user stopped the request. */
  | "aborted"
  /** Anything else. */
  | "other";

/** A failure read from an outcome or a recorded `request_end`. */
export interface FailureFacts {
  /** The class. */
  class: FailureClass;
  /** The endpoint host (`host[:port]`), when known. */
  host?: string;
  /** The HTTP status, for `http` (and a stream error that embedded one). */
  http_status?: number;
  /** The provider's own message (http, stream) or the decisive transport reason. */
  detail?: string;
  /** The recorded headline, when the text had one. */
  headline?: string;
}

/** The host (`host[:port]`) of `url`, or undefined when it does not parse. */
export function hostOf(url: string): string | undefined {
  try {
    const h = new URL(url).host;
    return h === "" ? undefined : h;
  } catch {
    return undefined;
  }
}

/** `url` without credentials, query or fragment (safe to show and record). */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = "";
    u.hash = "";
    return u.href;
  } catch {
    return url.replace(/[?#].*$/s, "").replace(/\/\/[^/@]*@/, "//");
  }
}

/** A reason safe inside a headline: no `": "`, one line, bounded. */
function tidy(reason: string): string {
  const one = reason.replace(/\s+/g, " ").replaceAll(": ", " - ").trim();
  return one.length > 160 ? `${one.slice(0, 159)}…` : one;
}

/**
 * The headline of a failure: the class in words, the host, and for some
 * classes a short reason in parentheses. Never contains `": "`.
 */
export function failureHeadline(
  cls: FailureClass,
  where: { host?: string; url?: string; http_status?: number; reason?: string },
): string {
  const host = where.host ?? "the provider";
  const why = where.reason ? ` (${tidy(where.reason)})` : "";
  switch (cls) {
    case "bad_url":
      return `bad endpoint URL ${where.url ? tidy(displayUrl(where.url)) : host}${why}`;
    case "dns":
      return `DNS lookup failed for ${host}${why}`;
    case "refused":
      return `connection refused by ${host}`;
    case "tls":
      return `TLS handshake failed with ${host}${why}`;
    case "timeout":
      return `timed out waiting for ${host}${why}`;
    case "connection":
      return `connection to ${host} failed${why}`;
    case "http":
      return `HTTP ${where.http_status ?? "error"} from ${host}`;
    case "stream":
      return `error in the stream from ${host}`;
    case "malformed":
      return `malformed response from ${host}${why}`;
    case "aborted":
      return "request aborted by the user";
    default:
      return `request to ${host} failed${why}`;
  }
}

/** A `host[:port]` as URL.host renders it (IPv6 in brackets), never a trailing colon. */
const HOST = String.raw`(\[[^\]\s]+\](?::\d+)?|[^\s:[\]]+(?::\d+)?)`;

const HEADLINES: [RegExp, FailureClass][] = [
  [/^bad endpoint URL (\S+)/, "bad_url"],
  [new RegExp(`^DNS lookup failed for ${HOST}`), "dns"],
  [new RegExp(`^connection refused by ${HOST}`), "refused"],
  [new RegExp(`^TLS handshake failed with ${HOST}`), "tls"],
  [new RegExp(`^timed out waiting for ${HOST}`), "timeout"],
  [new RegExp(`^connection to ${HOST} failed`), "connection"],
  [new RegExp(`^HTTP (\\d{3}) from ${HOST}`), "http"],
  [new RegExp(`^error in the stream from ${HOST}`), "stream"],
  [new RegExp(`^malformed response from ${HOST}`), "malformed"],
];

/** Prefixes the engine puts before an outcome's text in an abort reason once retries are exhausted or the error is permanent. */
const ABORT_PREFIX =
  /^(?:(?:reconnect failed|llm request failed|malformed response failed) after \d+ retries|llm request error)(?:: |$)/;

/** Legacy / raw texts (Deno fetch errors, errno codes), most specific first. */
const RAW: [RegExp, FailureClass][] = [
  [
    /Url scheme '[^']*' not supported|Invalid URL|Requests to port \d+ are blocked|^Cannot build the /i,
    "bad_url",
  ],
  [
    /dns error|failed to lookup address|ENOTFOUND|EAI_AGAIN|EAI_NONAME|Name or service not known|name resolution|nodename nor servname|No address associated with hostname/i,
    "dns",
  ],
  [/Connection refused|ECONNREFUSED/i, "refused"],
  [
    /\btls\b|certificate|InvalidContentType|handshake|CorruptMessage|UnknownIssuer|\bssl\b/i,
    "tls",
  ],
  [/idle timeout|timed out|ETIMEDOUT|\btimeout\b|UND_ERR_\w*TIMEOUT/i, "timeout"],
  [
    /connection reset|ECONNRESET|connection closed|socket hang up|other side closed|error reading a body|broken pipe|EPIPE|unexpected eof|ECONNABORTED|UND_ERR_SOCKET|fetch failed|error sending request|network/i,
    "connection",
  ],
];

/** The host named by a raw Deno fetch error (`… for url (http://h:p/…)`), if any. */
function rawHost(text: string): string | undefined {
  const m = /\b(?:url \(|for )(https?:\/\/[^\s)]+)/.exec(text);
  return m ? hostOf(m[1]!) : undefined;
}

/** The last `": "`-separated segment: the innermost cause of a joined chain. */
export function innermost(text: string): string {
  const parts = text.split(": ").map((s) => s.trim()).filter((s) => s !== "");
  return parts[parts.length - 1] ?? text;
}

/**
 * Read the failure class of a request from its StopReason `status` and its
 * `error_message` (or an abort reason built from one). Works on the
 * headline format and on older raw texts.
 */
export function readFailure(status: string | undefined, text: string | undefined): FailureFacts {
  const raw = (text ?? "").trim();
  const body = raw.replace(ABORT_PREFIX, "");
  if (status === "aborted") return { class: "aborted" };
  for (const [re, cls] of HEADLINES) {
    const m = re.exec(body);
    if (!m) continue;
    const sep = body.indexOf(": ");
    const detail = sep >= 0 ? body.slice(sep + 2).trim() : undefined;
    const facts: FailureFacts = { class: cls, headline: sep >= 0 ? body.slice(0, sep) : body };
    if (cls === "http") {
      facts.http_status = Number(m[1]);
      if (m[2] !== "the") facts.host = m[2]!;
    } else if (cls !== "bad_url") {
      if (m[1] !== "the") facts.host = m[1]!;
    } else {
      const h = hostOf(m[1]!);
      if (h) facts.host = h;
    }
    if (detail) facts.detail = detail;
    return facts;
  }
  const http = /^HTTP (\d{3})\b(?::\s*(.*))?/s.exec(body);
  if (http) {
    const facts: FailureFacts = { class: "http", http_status: Number(http[1]) };
    if (http[2]) facts.detail = http[2].trim();
    return facts;
  }
  if (status === "malformed") return { class: "malformed", ...(body ? { detail: body } : {}) };
  for (const [re, cls] of RAW) {
    if (!re.test(body)) continue;
    const facts: FailureFacts = { class: cls };
    const host = rawHost(body);
    if (host) facts.host = host;
    if (body) facts.detail = innermost(body);
    return facts;
  }
  return { class: "other", ...(body ? { detail: body } : {}) };
}

/** A short label of the class: `connection refused`, `HTTP 503`, `DNS failure`, … */
export function failureLabel(f: FailureFacts): string {
  switch (f.class) {
    case "bad_url":
      return "bad URL";
    case "dns":
      return "DNS failure";
    case "refused":
      return "connection refused";
    case "tls":
      return "TLS error";
    case "timeout":
      return "timeout";
    case "connection":
      return "connection failed";
    case "http":
      return f.http_status !== undefined ? `HTTP ${f.http_status}` : "HTTP error";
    case "stream":
      return "stream error";
    case "malformed":
      return "malformed response";
    case "aborted":
      return "aborted";
    default:
      return "error";
  }
}

/** `text` on one line, at most `max` characters. */
function clip(text: string, max = 300): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/**
 * The cause in one short phrase: the headline (class, host, decisive
 * reason), plus the provider's own message for http, stream and malformed
 * responses. Texts of an unknown class are returned as they are.
 */
export function failureCause(f: FailureFacts): string {
  const detail = f.detail ? clip(f.detail) : "";
  if (f.class === "aborted") return failureHeadline("aborted", {});
  if (f.class === "other") return detail !== "" ? detail : failureLabel(f);
  const withMessage = f.class === "http" || f.class === "stream" || f.class === "malformed";
  const head = f.headline ??
    (f.class === "malformed" && f.host === undefined ? "malformed response" : failureHeadline(
      f.class,
      {
        ...(f.host !== undefined ? { host: f.host } : {}),
        ...(f.http_status !== undefined ? { http_status: f.http_status } : {}),
        ...(!withMessage && detail !== "" ? { reason: detail } : {}),
      },
    ));
  return withMessage && detail !== "" ? `${head}: ${detail}` : head;
}

/** The prefix of an abort reason for a failed request (`llm request error`, `reconnect failed after 5 retries`). */
export function requestFailurePrefix(reason: string): string | undefined {
  const m = ABORT_PREFIX.exec(reason.trim());
  return m ? m[0].replace(/: $/, "") : undefined;
}

/** One line on what to do about a failure. */
export function failureFix(f: FailureFacts): string {
  const host = f.host ?? "the provider";
  const list = `check the base URL with "penguin config model list"`;
  switch (f.class) {
    case "bad_url":
      return `set an http:// or https:// base URL with "penguin config model add --provider <p> --model-id <m> --base-url <url>"`;
    case "dns":
      return `${host} does not resolve: check the host name ("penguin config model list" shows the base URL), your network and DNS`;
    case "refused":
      return `nothing is listening at ${host}: start the server, or ${list}`;
    case "tls":
      return `${host} did not complete a TLS handshake: use http:// for a plain-HTTP server, or check its certificate and any proxy`;
    case "timeout":
      return `${host} stopped answering: try again later, or raise model.timeoutMs in system_config.yaml for slow models`;
    case "connection":
      return `the connection to ${host} failed: check your network and any proxy (HTTPS_PROXY), then try again`;
    case "http": {
      const s = f.http_status ?? 0;
      if (s === 401 || s === 403) {
        return `${host} rejected the credentials: set the provider's API key (its env var, or "penguin config model add … --api-key <key>")`;
      }
      if (s === 404) return `${host} has no such endpoint or model: ${list} and the model id`;
      if (s === 408 || s === 429) {
        return `${host} is rate limiting: wait a little, then try again (or check your plan's limits)`;
      }
      if (s >= 500) {
        return `${host} is failing or overloaded: try again later, or use another model with --provider/--model-id`;
      }
      return `${host} rejected the request: check the model id and its settings with "penguin config model list"`;
    }
    case "stream":
      if (
        /invalid_api_key|authentication|unauthori[sz]ed|unauthenticated|permission/i.test(
          f.detail ?? "",
        )
      ) {
        return `${host} rejected the credentials: set the provider's API key (its env var, or "penguin config model add … --api-key <key>")`;
      }
      return `${host} reported an error mid-answer: try again later, or use another model with --provider/--model-id`;
    case "malformed":
      return `${host} sent a response penguin cannot read: check that the client type matches the endpoint ("penguin config model list")`;
    case "aborted":
      return "the request was stopped; run it again to continue";
    default:
      return `see the trace for details ("penguin trace show <session-id>")`;
  }
}
