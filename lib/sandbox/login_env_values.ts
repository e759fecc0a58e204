/**
 * The value rule for the shell snapshot's allowlisted variables. Path-like
 * variables keep only absolute or `~` paths of plain components that exist
 * on the host (a search path loses its other entries, not all of them);
 * word variables pass only by a closed grammar (`login_env_words.ts`,
 * `login_env_flags.ts`: compiler flags of a fixed vocabulary, a program on
 * the host's `PATH` with a few flags, a locale, a zoneinfo name, a terminfo
 * entry, the host's own user name…), so no word of free letters passes;
 * proxy variables pass only as a plain proxy address or `NO_PROXY` host
 * list (`login_env_proxy.ts`); a URL anywhere must be plain: no user
 * information, no path beyond `/`, no query, no fragment.
 * See docs/security.md ("The command environment carries only
 * configuration").
 *
 * @module
 */

import { isPlainUrl, plainProxyValue } from "./login_env_proxy.ts";
import {
  existsOnHost,
  isPlainComponent,
  isPlainPath,
  type KnownPaths,
  knownPaths,
  NO_KNOWN,
} from "./login_env_paths.ts";
import { closedWordValue } from "./login_env_words.ts";

export { isPlainComponent, isPlainPath, isPlainUrl, type KnownPaths, knownPaths };

/** A URL inside a value. */
const URL_IN_VALUE = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s,;"'`]*/g;

/** Names whose value is a `:`-separated list of paths: `PATH`, `MANPATH`, `PYTHONPATH`, `GOPATH`, `XDG_DATA_DIRS`… */
const LIST_NAME = /PATH$|^XDG_[A-Z_]*_DIRS$/;

/** Names whose value is one path: `*_HOME`, `*_ROOT`, `*_DIR`, `GOROOT`, `GOBIN`, `VIRTUAL_ENV`, `SSL_CERT_FILE`… */
const PATH_NAME =
  /(?:_HOME|ROOT|_DIR|BIN|_INC|_INSTALL|_PREFIX(?:_\d+)?|_EXE|_FILE|_BUNDLE|_CERTS)$|^(?:VIRTUAL_ENV|TMPDIR|HOME|SHELL)$/;

/** Proxy variables: judged by the proxy grammar of `login_env_proxy.ts`. */
const PROXY_NAME = /^(?:HTTPS?|ALL|NO)_PROXY$/i;

/**
 * The value of allowlisted variable `name` that may reach commands, or
 * `undefined` when none: a value holding a URL that is not plain
 * ({@linkcode isPlainUrl}) never passes; a search path keeps its empty
 * entries, the host's own entries and its plain paths
 * ({@linkcode isPlainPath}) that are directories on the host, and loses the
 * rest; a path variable passes whole when its value is a plain path that
 * exists on the host; a proxy variable by the proxy grammar
 * (`plainProxyValue` of `login_env_proxy.ts`); any other variable only by its closed grammar
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
  if (PROXY_NAME.test(name)) return plainProxyValue(name, value);
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
