/**
 * A URL's parts judged by their shape ({@linkcode urlSecrets}): the login
 * environment's value rule (lib/sandbox/login_env_values.ts). It is no
 * longer an MCP rule: MCP URLs follow the closed rule of
 * lib/state/mcp_url_secrets.ts, and a stdio server's arguments the closed
 * rule of lib/state/mcp_arg_secrets.ts.
 *
 * @module
 */

import { fewVowels, randomLookingRun, randomLookingWindows } from "../protocol/random_looking.ts";

/** One credential found in a URL or an argument list. */
export interface InlineSecret {
  /** `url.password`, `url.user`, `url.path[1]`, `url.api_key`, `args[3]`… */
  where: string;
  /** The credential itself. */
  value: string;
}

/** A name (option, query parameter, `NAME=`) that holds a credential whatever its value looks like. */
const SECRET_NAME =
  /key|token|secret|pass|auth|credential|session|cookie|jwt|sig(nature)?$|^sig|^code$|dsn|(^|[_-])pat$/i;

/** A number: `3000`, `-1`, `0.5`. */
const NUMBER = /^-?\d+(\.\d+)?$/;

/** Letter/digit alternations in `s`: `node18` has 1, a random `a8f3k2` has 5. */
function alternations(s: string): number {
  let n = 0;
  for (let i = 1; i < s.length; i++) {
    if (/\d/.test(s[i]!) !== /\d/.test(s[i - 1]!)) n++;
  }
  return n;
}

/**
 * One piece of a word (between `-_.:`): letters, digits, or a short mix
 * (`es2020`, `node18`, `v1beta1`: at most 10 characters, 4 digits, 2
 * letter/digit alternations).
 */
function plainPiece(p: string): boolean {
  if (p === "") return true;
  if (!/^[a-z0-9]+$/.test(p) || p.length > 24) return false;
  if (/^[a-z]+$|^\d+$/.test(p)) return true;
  return p.length <= 10 && p.replace(/\D/g, "").length <= 4 && alternations(p) <= 2;
}

/**
 * A short word: at most 24 characters of lowercase letters, digits and
 * `-_.:`, not random-looking (`stdio`, `info`, `localhost:8080`,
 * `server.py`). Also a capitalized word of letters up to 16 characters or
 * an upper-case one up to 12 (`Authorization`, `INFO`).
 */
export function isShortWord(s: string): boolean {
  if (/^([A-Z][a-z]{0,15}|[A-Z]{1,12})$/.test(s)) return true;
  if (s.length > 24 || !/^[a-z0-9][a-z0-9._:-]*$/.test(s)) return false;
  return s.split(/[-_.:]/).every(plainPiece);
}

/** A package name: `name`, `npm:name`, `mcp-server-sequential-thinking`, `@scope/name`, `name@1.2.3`, `@s/n@latest`. */
function isPackageSpec(s: string): boolean {
  const m =
    /^(?:npm:|jsr:)?(?:@([a-z0-9][a-z0-9._-]*)\/)?([a-z0-9][a-z0-9._-]*)(?:@([A-Za-z0-9.^~<>=*+-]+))?$/
      .exec(s);
  if (!m || s.length > 96) return false;
  const words = [m[1] ?? "", m[2]!].flatMap((w) => w.split(/[-_.]/));
  const version = m[3] ?? "";
  return words.every(plainPiece) &&
    (version === "" || /^[a-z]{1,12}$|^[\d^~<>=*.+-]/.test(version));
}

/**
 * A URL path segment or query value that is plain: empty, a short word, a
 * number, a package name; and no letters-only run of 16 or more with few
 * vowels in it ({@linkcode fewVowels}: `bcdfkxqwrtplmnvzhjgsyack`).
 */
function plainUrlPart(s: string): boolean {
  if ((s.match(/[A-Za-z]+/g) ?? []).some(fewVowels)) return false;
  return s === "" || NUMBER.test(s) || isShortWord(s) || isPackageSpec(s);
}

function parseUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/**
 * A host name label that is plain: its pieces between `-` are plain pieces
 * (`mcp`, `api-v2`, `eu-west-1`), and the label judged whole, its dashes
 * removed, is no token: not 16 or more characters mixing letters and digits
 * inside a piece (`k9tq-2lm7-rv4w-p8zn`), not 16 or more digits, not
 * random-looking ({@linkcode randomLookingRun}: `q9-zk-2l-m7-rv`), and no
 * letters-only piece of 16 or more letters with few vowels
 * ({@linkcode fewVowels}: `qzxkvbnmwrtplhjgfdsayc`). `us-east-1-prod-01`,
 * `copilot-proxy`, `githubusercontent` are plain.
 */
function plainHostLabel(label: string): boolean {
  const pieces = label.split("-");
  if (!pieces.every(plainPiece)) return false;
  const run = label.replace(/-/g, "");
  if (run.length >= 16) {
    if (/^\d+$/.test(run)) return false;
    if (pieces.some((p) => /[a-z]/.test(p) && /\d/.test(p))) return false;
  }
  return !randomLookingRun(run) && !(run.match(/[a-z]+/g) ?? []).some(fewVowels);
}

/** The labels of `u`'s host name (none for an IPv6 literal). */
function hostLabels(u: URL): string[] {
  return u.hostname.startsWith("[") ? [] : u.hostname.split(".");
}

/** Second-level names under which a registrable domain has three labels (`example.co.uk`). */
const TWO_LEVEL_SUFFIX = /^(?:co|com|net|org|gov|edu|ac|or|ne|go|gob|nic|ltd|plc|me)\.[a-z]{2}$/;

/**
 * The number of labels of `labels` before the registrable domain: all but
 * the last two, or the last three under a two-level suffix (`co.uk`,
 * `com.au`).
 */
function labelsBeforeDomain(labels: readonly string[]): number {
  const suffix = labels.slice(-2).join(".");
  return Math.max(0, labels.length - (TWO_LEVEL_SUFFIX.test(suffix) ? 3 : 2));
}

/**
 * The indexes of `u`'s secret host name labels: each label that is not
 * plain, and the labels before the registrable domain that are plain one by
 * one but random-looking joined ({@linkcode randomLookingWindows}:
 * `nolchkwnfzck.fdtgdjxwwcbz.mcp.example.com` gives the first two).
 */
function secretLabels(labels: readonly string[]): Set<number> {
  const found = new Set<number>();
  labels.forEach((l, i) => {
    if (!plainHostLabel(l)) found.add(i);
  });
  const before = labels.slice(0, labelsBeforeDomain(labels)).map((l) => l.replace(/-/g, ""));
  for (const i of randomLookingWindows(before, found)) found.add(i);
  return found;
}

/**
 * The indexes of secret path segments (decoded) `segs`: each one that is
 * not plain, and consecutive ones plain alone but random-looking joined
 * (`wr7vwb/ngwgyp/yniwt2`).
 */
function secretSegments(segs: readonly string[]): Set<number> {
  const found = new Set<number>();
  segs.forEach((s, i) => {
    if (!plainUrlPart(s)) found.add(i);
  });
  for (const i of randomLookingWindows(segs, found)) if (segs[i] !== "") found.add(i);
  return found;
}

/**
 * A URL's parts judged by their shape (the login environment's value rule,
 * lib/sandbox/login_env_values.ts; MCP URLs follow the closed rule of
 * lib/state/mcp_url_secrets.ts instead). The credentials of `url`: its
 * userinfo (password, or a lone user name),
 * each host name label, path segment, query value and fragment that is not
 * plain, and the labels and path segments that look random joined (see
 * `secretLabels`, `secretSegments`). A string that is no URL is a secret
 * whole (`url`).
 */
export function urlSecrets(url: string): InlineSecret[] {
  const u = parseUrl(url);
  if (u === undefined) return url === "" ? [] : [{ where: "url", value: url }];
  const out: InlineSecret[] = [];
  const labels = hostLabels(u);
  for (const i of [...secretLabels(labels)].sort((a, b) => a - b)) {
    out.push({ where: `url.host[${i}]`, value: labels[i]! });
  }
  if (u.password !== "") out.push({ where: "url.password", value: decode(u.password) });
  else if (u.username !== "") out.push({ where: "url.user", value: decode(u.username) });
  const segs = u.pathname.split("/").map(decode);
  for (const i of [...secretSegments(segs)].sort((a, b) => a - b)) {
    out.push({ where: `url.path[${i}]`, value: segs[i]! });
  }
  for (const [k, v] of u.searchParams) {
    if (v !== "" && (!plainUrlPart(v) || SECRET_NAME.test(k))) {
      out.push({ where: `url.${k}`, value: v });
    }
  }
  const hash = decode(u.hash.slice(1));
  if (!plainUrlPart(hash)) out.push({ where: "url.hash", value: hash });
  return out;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
