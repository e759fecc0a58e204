/**
 * The value rule for the shell snapshot's allowlisted variables: a value
 * passes only when every part of it is plain. Path-like variables keep
 * only absolute or `~` paths of plain components that exist on the host (a
 * search path loses its other entries, not all of them); every other
 * variable is dropped when a word names a credential or is not plain, or
 * when what is left after its verified parts (existing paths, programs on
 * the host's `PATH`) looks random with its separators removed; a URL
 * anywhere must be plain in every part. See docs/security.md ("The command
 * environment carries only configuration").
 *
 * @module
 */

import {
  fewVowels,
  randomLookingJoined,
  randomLookingPieces,
  randomLookingRun,
} from "../protocol/random_looking.ts";
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
  /** The host's home, for `~` paths (else the process's `HOME`). */
  home?: string | undefined;
}

/** The {@linkcode KnownPaths} of host environment `host`. */
export function knownPaths(host: Record<string, string>): KnownPaths {
  const prefixes = [host["HOME"], host["TMPDIR"]]
    .map((p) => (p ?? "").replace(/\/+$/, ""))
    .filter((p) => p.startsWith("/"));
  const entries = (host["PATH"] ?? "").split(":").filter((p) => p.startsWith("/"));
  return { prefixes, entries, home: host["HOME"] };
}

const NO_KNOWN: KnownPaths = { prefixes: [], entries: [] };

/**
 * True when absolute or `~` path `path` exists on the host (a directory
 * when `dir`), following symbolic links; false when it cannot be looked at.
 */
function existsOnHost(path: string, dir: boolean, known: KnownPaths): boolean {
  const home = known.home ?? Deno.env.get("HOME") ?? "";
  const full = path === "~" || path.startsWith("~/") ? home + path.slice(1) : path;
  if (!full.startsWith("/") || /[\n\0]/.test(full)) return false;
  try {
    const st = Deno.statSync(full);
    return dir ? st.isDirectory : true;
  } catch {
    return false;
  }
}

/** True when `name` (no `/`) is an executable file in one of the host's `PATH` entries. */
function programOnHost(name: string, known: KnownPaths): boolean {
  if (!/^[A-Za-z0-9._+-]{1,64}$/.test(name) || name.startsWith(".")) return false;
  return known.entries.some((d) => {
    try {
      const st = Deno.statSync(`${d}/${name}`);
      return st.isFile && ((st.mode ?? 0o111) & 0o111) !== 0;
    } catch {
      return false;
    }
  });
}

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
 * long forms (`PASSWORD`, `CREDENTIALS`), also glued to other letters as a
 * part's start or end (`APIKEY`, `STRIPEKEY`, `LICENSEKEY`, `KEYID`,
 * `DBPASS`, `PASS2`), and `TOKEN`, `SECRET`, `PASSWORD`, `CREDENTIAL`,
 * `SESSION` anywhere in a part.
 */
const CREDENTIAL_PART =
  /^(?:\w*(?:TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|SESSION)S?\w*|[A-Z0-9]*(?:KEY|PASS|PWD|CRED)S?\d*|(?:KEY|PASS|PWD|CRED)[A-Z0-9]*|AUTH\w*)$/;

/** True when word `w` holds a credential word as one of its parts (`-DAPI_KEY`, `SERVICE_TOKEN`, `myPassword`, `-DSTRIPEKEY`). */
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

/** A leading option name: `-D`, `-I`, `-L`, `-U` (glued), `-march=`, `--sysroot=`, or dashes. */
const OPTION_NAME = /^-[DUIL]|^-+[A-Za-z][A-Za-z0-9_-]*=|^-+/;

/** A short flag with nothing to judge in it: `-O2`, `-g`, `-m64`, `-Os`, `-Wall`. */
const SHORT_FLAG = /^-[A-Za-z][A-Za-z0-9]{0,3}$/;

/**
 * What is left to judge of one piece of a value (split at blanks, quotes
 * and `,;()`): nothing for a short flag, an absolute or `~` path that
 * exists on the host and is plain ({@linkcode isPlainPath}), or a program
 * on the host's `PATH` (`gcc`, `ccache`); `undefined` for an existing path
 * that is not plain; else the piece without its option name.
 */
function unverified(piece: string, known: KnownPaths): string | undefined {
  if (SHORT_FLAG.test(piece)) return "";
  const rest = piece.replace(OPTION_NAME, "");
  if (/^(?:\/|~\/|~$)/.test(rest) && existsOnHost(rest, false, known)) {
    return isPlainPath(rest, known) ? "" : undefined;
  }
  return programOnHost(rest, known) ? "" : rest;
}

/**
 * True for a value of words (`CFLAGS`, `CC`, `EDITOR`, `LANG`,
 * `CONDA_CHANNELS`, a proxy…) that is plain: every URL in it plain
 * ({@linkcode isPlainUrl}); no piece (split at blanks, quotes and `,;()`)
 * with a credential part; and what is left after the verified parts
 * (`unverified`: existing paths, programs) plain: its words (split further
 * at `=:`) made of plain components, no random-looking run in a piece with
 * its separators removed ({@linkcode randomLookingRun}, so
 * `RtYuIoPa3sDfGh:JkLz…` and `PlOkIj…+EsWaQz…` are judged whole), no
 * letters-only run with few vowels ({@linkcode fewVowels}), no word of
 * parts cut by `.` or `-` random-looking with the parts joined
 * ({@linkcode randomLookingPieces}: `plltxppssctq.ylzphlnkkzps`), and all of it
 * joined not random-looking ({@linkcode randomLookingJoined}: a token cut
 * into short words).
 */
export function isPlainWords(value: string, known: KnownPaths = NO_KNOWN): boolean {
  if (!(value.match(URL_IN_VALUE) ?? []).every(isPlainUrl)) return false;
  const left: string[] = [];
  for (const piece of value.replace(URL_IN_VALUE, " ").split(/[\s"'`,;()]+/)) {
    if (piece === "") continue;
    if (hasCredentialPart(piece.replace(/^-[DUIL]/, ""))) return false;
    const rest = unverified(piece, known);
    if (rest === undefined) return false;
    if (!rest.split(/[=:]+/).every(plainWord)) return false;
    const run = rest.replace(/[^\p{L}\p{N}]/gu, "");
    if (randomLookingRun(run) || (rest.match(/[A-Za-z]+/g) ?? []).some(fewVowels)) return false;
    if ((rest.match(DOTTED) ?? []).some((w) => randomLookingPieces(w.split(/[.-]/)))) return false;
    left.push(run);
  }
  return !randomLookingJoined(left.join(""));
}

/** A word of letters and digits cut by `.` or `-` into parts: `plltxppssctq.ylzphlnkkzps`, `java-17-openjdk-amd64`. */
const DOTTED = /[A-Za-z0-9]+(?:[.-][A-Za-z0-9]+)+/g;

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
 * ({@linkcode isPlainPath}) that are directories on the host, and loses the
 * rest; a path variable passes whole when its value is a plain path that
 * exists on the host; any other variable when its words are plain
 * ({@linkcode isPlainWords}).
 */
export function plainLoginValue(
  name: string,
  value: string,
  known: KnownPaths = NO_KNOWN,
): string | undefined {
  if (!(value.match(URL_IN_VALUE) ?? []).every(isPlainUrl)) return;
  if (LIST_NAME.test(name)) {
    const kept = value.split(":").filter((p) =>
      p === "" || known.entries.includes(p) ||
      (isPlainPath(p, known) && existsOnHost(p, true, known))
    );
    return kept.some((p) => p !== "") ? kept.join(":") : undefined;
  }
  if (PATH_NAME.test(name)) {
    return isPlainPath(value, known) && existsOnHost(value, false, known) ? value : undefined;
  }
  return isPlainWords(value, known) ? value : undefined;
}
