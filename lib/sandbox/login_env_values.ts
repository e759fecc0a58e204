/**
 * The value rule for the shell snapshot's allowlisted variables. Path-like
 * variables keep only absolute or `~` paths of plain components that exist
 * on the host (a search path loses its other entries, not all of them);
 * word variables pass only by a closed grammar (`login_env_words.ts`,
 * `login_env_flags.ts`: compiler flags of a fixed vocabulary, a program on
 * the host's `PATH` with a few flags, a locale, a zoneinfo name, a terminfo
 * entry, the host's own user name…), so no word of free letters passes;
 * proxy variables, the one kind of free word left, are dropped when a word
 * names a credential or is not plain, or when what is left looks random
 * with its separators removed; a URL anywhere must be plain in every part.
 * See docs/security.md ("The command environment carries only
 * configuration").
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
import {
  existsOnHost,
  isPlainComponent,
  isPlainPath,
  type KnownPaths,
  knownPaths,
  NO_KNOWN,
  programOnHost,
} from "./login_env_paths.ts";
import { closedWordValue } from "./login_env_words.ts";

export { isPlainComponent, isPlainPath, type KnownPaths, knownPaths };

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
 * True for a value of words (a proxy variable's: the one kind of word
 * variable without a closed grammar) that is plain: every URL in it plain
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

/** Proxy variables: the only word variables judged by shape rather than a closed grammar. */
const PROXY_NAME = /^(?:HTTPS?|ALL|NO)_PROXY$/i;

/**
 * The value of allowlisted variable `name` that may reach commands, or
 * `undefined` when none: a value holding a URL that is not plain
 * ({@linkcode isPlainUrl}) never passes; a search path keeps its empty
 * entries, the host's own entries and its plain paths
 * ({@linkcode isPlainPath}) that are directories on the host, and loses the
 * rest; a path variable passes whole when its value is a plain path that
 * exists on the host; a proxy variable when its words are plain
 * ({@linkcode isPlainWords}); any other variable only by its closed grammar
 * (`closedWordValue` of `login_env_words.ts`), and not at all without one.
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
  if (PROXY_NAME.test(name)) return isPlainWords(value, known) ? value : undefined;
  return closedWordValue(name, value, known);
}

/**
 * The {@linkcode KnownPaths} a shell snapshot `login` is judged against on
 * host environment `host`: {@linkcode knownPaths}, and the conda environment
 * of the snapshot's `CONDA_PREFIX` when that path passes (the last component
 * names it, for `CONDA_DEFAULT_ENV` and `CONDA_PROMPT_MODIFIER`).
 */
export function loginKnownPaths(
  host: Record<string, string>,
  login: Record<string, string> = {},
): KnownPaths {
  const known = knownPaths(host);
  const prefix = login["CONDA_PREFIX"];
  if (prefix === undefined || plainLoginValue("CONDA_PREFIX", prefix, known) === undefined) {
    return known;
  }
  const env = prefix.replace(/\/+$/, "").split("/").pop() ?? "";
  return env === "" || env === "~" ? known : { ...known, condaEnvs: [env] };
}
