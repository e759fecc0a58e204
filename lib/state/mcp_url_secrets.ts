/**
 * The closed rule for the URL of an MCP server (and for every URL-shaped
 * argument of a stdio server): its userinfo, path, query and fragment are
 * secrets, always, whatever they look like; its scheme, host and port are
 * not (the host goes in clear in DNS and in TLS SNI). No shape is judged:
 * each attack pass found another token shape a heuristic let through.
 *
 * A secret part is left out of snapshots and of `penguin mcp list`, which
 * show `scheme://host[:port]` (followed by `/…` where something was left
 * out), and masked like a vault value (lib/mcp/secrets.ts). A path, query or
 * fragment shorter than {@linkcode MASKED_URL_PART} characters (`/sse`,
 * `/mcp`, `/v1/mcp`) is not masked in text: it would mask common words
 * everywhere, and a credential that short is no credential.
 *
 * @module
 */

/** One secret part of a URL. */
export interface UrlSecret {
  /** `url.user`, `url.password`, `url.path`, `url.query`, `url.<param>`, `url.hash`, or `url` (not a URL). */
  where: string;
  /** The part as written (a decoded form, when it differs, is listed after it). */
  value: string;
  /** Whether it is masked in text (see {@linkcode MASKED_URL_PART}); every part is left out of snapshots. */
  mask: boolean;
}

/** The shortest path, query or fragment that is masked in text. */
export const MASKED_URL_PART = 12;

/** A URL: a scheme, then `//`. */
export const URL_START = /^[a-z][a-z0-9+.-]*:\/\//i;

/** A query parameter named like a credential: its value is masked whatever its length. */
const SECRET_PARAM =
  /key|token|secret|pass|auth|credential|session|cookie|jwt|sig(nature)?$|^sig|^code$|dsn|(^|[_-])pat$/i;

function parseUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * `value`, and its decoded form when that differs; masked when it is
 * userinfo, {@linkcode MASKED_URL_PART} characters or more, or a query value
 * named like a credential (`?token=…`).
 */
function forms(where: string, value: string): UrlSecret[] {
  const mask = (v: string) =>
    /^url\.(user|password)$/.test(where) || v.length >= MASKED_URL_PART ||
    (!/^url\.(path|query|hash)$/.test(where) && SECRET_PARAM.test(where.slice(4)));
  return [...new Set([value, decode(value)])].map((v) => ({ where, value: v, mask: mask(v) }));
}

/** `scheme://host[:port]` of `u` (for every scheme, not only those with an origin). */
function originOf(u: URL): string {
  return `${u.protocol}//${u.host}`;
}

/** The path of `u` when it is more than `/` (or empty), else "". */
function pathOf(u: URL): string {
  return u.pathname === "/" ? "" : u.pathname;
}

/**
 * Every secret part of `url`: userinfo, path (other than `/`), query and
 * fragment; each query value too (its parameter name as `where`). A string
 * that is no URL is a secret whole. Each says whether it is masked in text.
 */
export function urlSecretParts(url: string): UrlSecret[] {
  const u = parseUrl(url);
  if (u === undefined) return url === "" ? [] : [{ where: "url", value: url, mask: true }];
  const out: UrlSecret[] = [];
  if (u.username !== "") out.push(...forms("url.user", u.username));
  if (u.password !== "") out.push(...forms("url.password", u.password));
  const path = pathOf(u);
  if (path !== "") out.push(...forms("url.path", path));
  const query = u.search.slice(1);
  if (query !== "") {
    out.push(...forms("url.query", query));
    for (const [k, v] of u.searchParams) if (v !== "") out.push(...forms(`url.${k}`, v));
  }
  const hash = u.hash.slice(1);
  if (hash !== "") out.push(...forms("url.hash", hash));
  return out;
}

/** True when `url` parses and has a secret part. */
export function urlHasSecret(url: string): boolean {
  return parseUrl(url) !== undefined && urlSecretParts(url).length > 0;
}

/** `url` as packed in a snapshot: `scheme://host[:port]`, or "" when it is no URL. */
export function urlOrigin(url: string): string {
  const u = parseUrl(url);
  return u === undefined ? "" : originOf(u);
}

/**
 * `url` as shown to the user: `scheme://host[:port]/…` when it has a
 * secret part, else as written; "…" when it is no URL.
 */
export function urlShown(url: string): string {
  const u = parseUrl(url);
  if (u === undefined) return url === "" ? "" : "…";
  return urlSecretParts(url).length > 0 ? `${originOf(u)}/…` : url;
}
