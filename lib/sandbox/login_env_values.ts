/**
 * The value rule for the shell snapshot's allowlisted variables: a value
 * passes only when every part of it is plain. Path-like variables keep
 * only absolute or `~` paths of plain components (a search path loses its
 * other entries, not all of them); every other variable is split into words
 * and dropped when a word names a credential or is not plain; a URL anywhere
 * must be plain in every part. See docs/security.md ("The command
 * environment carries only configuration").
 *
 * @module
 */

import { urlSecrets } from "../state/mcp_inline_secrets.ts";

/** A UUID, anywhere (Heroku-style API keys). */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** Characters of a plain component: letters (any script), digits, space and `._@+~%,-`. */
const COMPONENT_CHARS = /^[\p{L}\p{N} ._@+~%,-]*$/u;

/** Letter/digit alternations in the letters and digits of `s`: `x86_64` has 1, `a1b2c3` has 5. */
function alternations(s: string): number {
  const t = s.replace(/[^A-Za-z0-9]/g, "");
  let n = 0;
  for (let i = 1; i < t.length; i++) {
    if (/\d/.test(t[i]!) !== /\d/.test(t[i - 1]!)) n++;
  }
  return n;
}

/**
 * True for one plain path component or word: at most 64 characters of
 * letters, digits, space and `._@+~%,-`, and no random-looking run in it —
 * no UUID, no 12 or more hex digits in a row (with a digit among them), no
 * run of 16 or more letters and digits mixing both, and fewer than 8
 * letter/digit alternations in all (so a token cut by dots is no plain
 * component). `x86_64-unknown-linux-gnu`, `v20.11.1`, `python@3.12`,
 * `en_US.UTF-8` are plain.
 */
export function isPlainComponent(c: string): boolean {
  if (c.length > 64 || !COMPONENT_CHARS.test(c) || UUID.test(c)) return false;
  if ((c.match(/[0-9a-f]{12,}/gi) ?? []).some((h) => /\d/.test(h))) return false;
  for (const run of c.match(/[A-Za-z0-9]{16,}/g) ?? []) {
    if (/[A-Za-z]/.test(run) && /\d/.test(run)) return false;
  }
  return alternations(c) < 8;
}

/**
 * A Nix store entry's first component: 32 characters of Nix's base-32
 * alphabet (no `e`, `o`, `t`, `u`), then `-` and a name.
 */
const NIX_HASH = /^[0-9abcdfghijklmnpqrsvwxyz]{32}-(.+)$/;

/**
 * What the host environment already tells commands, so no startup file can
 * hide a secret in it: the host's `HOME` and `TMPDIR` (a path under them is
 * checked only past them; macOS's `TMPDIR` and a temporary home are random
 * looking) and the host's own `PATH` entries (kept as they are).
 */
export interface KnownPaths {
  /** Absolute directories whose own components are not checked. */
  prefixes: readonly string[];
  /** Search-path entries that pass unchecked. */
  entries: readonly string[];
}

/** The {@linkcode KnownPaths} of host environment `host`. */
export function knownPaths(host: Record<string, string>): KnownPaths {
  const prefixes = [host["HOME"], host["TMPDIR"]]
    .map((p) => (p ?? "").replace(/\/+$/, ""))
    .filter((p) => p.startsWith("/"));
  return { prefixes, entries: (host["PATH"] ?? "").split(":").filter((p) => p.startsWith("/")) };
}

const NO_KNOWN: KnownPaths = { prefixes: [], entries: [] };

/**
 * True for an absolute or `~` path whose every component is plain
 * ({@linkcode isPlainComponent}), past a known prefix when under one. The
 * component right after `/nix/store/` may start with a Nix store hash: only
 * its name part is checked.
 */
export function isPlainPath(path: string, known: KnownPaths = NO_KNOWN): boolean {
  if (path !== "~" && !path.startsWith("/") && !path.startsWith("~/")) return false;
  const prefix = known.prefixes.find((p) => path === p || path.startsWith(p + "/"));
  if (prefix !== undefined) return path.slice(prefix.length).split("/").every(isPlainComponent);
  const parts = path.split("/").slice(1);
  return parts.every((c, i) => {
    const nix = path.startsWith("/nix/store/") && i === 2 ? NIX_HASH.exec(c) : null;
    return isPlainComponent(nix ? nix[1]! : c);
  });
}

/** True for a URL whose every part is plain: no userinfo, plain host labels, no secret path segment, query value or fragment. */
export function isPlainUrl(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.username !== "" || u.password !== "") return false;
  if (!u.hostname.replace(/^\[.*\]$/, "").split(".").every(isPlainComponent)) return false;
  return urlSecrets(url).length === 0;
}

/**
 * Parts of a word that mark a credential (case-insensitive, the word split
 * at non-alphanumerics and at lower-to-upper case changes): `KEY`, `TOKEN`,
 * `SECRET`, `PASS`, `PWD`, `AUTH`, `CRED`, `SESSION` and their plurals and
 * long forms (`PASSWORD`, `CREDENTIALS`, `APIKEY`, `ACCESSTOKEN`).
 */
const CREDENTIAL_PART =
  /^(?:\w*(?:TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|SESSION)S?\w*|(?:API|ACCESS)?KEYS?|PASS|PWD|AUTH\w*|CREDS?)$/;

/** True when word `w` holds a credential word as one of its parts (`-DAPI_KEY`, `SERVICE_TOKEN`, `myPassword`). */
export function hasCredentialPart(w: string): boolean {
  const parts = w.replace(/([a-z0-9])([A-Z])/g, "$1 $2").split(/[^A-Za-z0-9]+/);
  return parts.some((p) => p !== "" && CREDENTIAL_PART.test(p.toUpperCase()));
}

/** A URL inside a value. */
const URL_IN_VALUE = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s,;"'`]*/g;

/** One word of a value: plain when its `/`-separated components are, after a leading option (`-D`, `-I`, `--`). */
function plainWord(word: string): boolean {
  const w = word.replace(/^-[DUIL]|^-+/, "");
  if (hasCredentialPart(w)) return false;
  return w.split("/").every(isPlainComponent);
}

/**
 * True for a value of words (`CFLAGS`, `CC`, `EDITOR`, `LANG`,
 * `CONDA_CHANNELS`, a proxy…) that is plain: every URL in it plain
 * ({@linkcode isPlainUrl}), and every other word (split at blanks, quotes
 * and `=,;:()`) free of credential parts and made of plain components.
 */
export function isPlainWords(value: string): boolean {
  if (!(value.match(URL_IN_VALUE) ?? []).every(isPlainUrl)) return false;
  return value.replace(URL_IN_VALUE, " ").split(/[\s"'`=,;:()]+/).every(plainWord);
}

/** Names whose value is a `:`-separated list of paths: `PATH`, `MANPATH`, `PYTHONPATH`, `GOPATH`, `XDG_DATA_DIRS`… */
const LIST_NAME = /PATH$|^XDG_[A-Z_]*_DIRS$/;

/** Names whose value is one path: `*_HOME`, `*_ROOT`, `*_DIR`, `GOROOT`, `GOBIN`, `VIRTUAL_ENV`, `SSL_CERT_FILE`… */
const PATH_NAME =
  /(?:_HOME|ROOT|_DIR|BIN|_INC|_INSTALL|_PREFIX(?:_\d+)?|_EXE|_FILE|_BUNDLE|_CERTS)$|^(?:VIRTUAL_ENV|TMPDIR|HOME|SHELL)$/;

/**
 * The value of allowlisted variable `name` that may reach commands, or
 * `undefined` when none: a value holding a URL that is not plain
 * ({@linkcode isPlainUrl}) never passes; a search path keeps its empty
 * entries, the host's own entries and its plain paths
 * ({@linkcode isPlainPath}) and loses the rest;
 * a path variable passes whole when its value is a plain path; any other
 * variable when its words are plain ({@linkcode isPlainWords}).
 */
export function plainLoginValue(
  name: string,
  value: string,
  known: KnownPaths = NO_KNOWN,
): string | undefined {
  if (!(value.match(URL_IN_VALUE) ?? []).every(isPlainUrl)) return;
  if (LIST_NAME.test(name)) {
    const kept = value.split(":").filter((p) =>
      p === "" || known.entries.includes(p) || isPlainPath(p, known)
    );
    return kept.some((p) => p !== "") ? kept.join(":") : undefined;
  }
  if (PATH_NAME.test(name)) return isPlainPath(value, known) ? value : undefined;
  return isPlainWords(value) ? value : undefined;
}
