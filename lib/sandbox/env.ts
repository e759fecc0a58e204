/**
 * The environment of a sandboxed child, built from scratch: an allowlist of
 * host variables, then an allowlist of the login shell's variables, then the
 * vault, then forced values. Provider credentials
 * and penguin's own variables never pass.
 *
 * @module
 */

import { type KnownPaths, loginKnownPaths, plainLoginValue } from "./login_env_values.ts";

/** Host variables passed through by default (plus every `LC_*`). */
export const ENV_ALLOWLIST: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TZ",
];

/** Proxy variables, passed through only when the network is on. */
export const PROXY_VARS: readonly string[] = [
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "all_proxy",
  "no_proxy",
];

/** Values every child gets, last, overriding everything. */
export const FORCED_ENV: Readonly<Record<string, string>> = {
  GIT_EDITOR: "true",
  GIT_TERMINAL_PROMPT: "0",
  TERM: "dumb",
  NO_COLOR: "1",
  PAGER: "cat",
  GIT_PAGER: "cat",
};

/** Prefixes of the model providers' credential variables, and of penguin's own variables. */
const FORBIDDEN_PREFIXES = [
  "PENGUIN_",
  "DEEPSEEK_",
  "ANTHROPIC_",
  "OPENAI_",
  "MINIMAX_",
  "GEMINI_",
  "ZAI_",
  "MOONSHOT_",
];

/** PATH for a child whose host has none. */
export const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * True for names that never pass from the host: API keys (`*_API_KEY`),
 * provider groups (`OPENAI_*`, `ANTHROPIC_*`, …), `PENGUIN_*`, `CLIENT_TYPE`,
 * and the loader variables `LD_*` / `DYLD_*`. Case-insensitive.
 */
export function isForbiddenEnvName(name: string): boolean {
  const n = name.toUpperCase();
  if (n.endsWith("_API_KEY") || n === "CLIENT_TYPE") return true;
  if (n.startsWith("LD_") || n.startsWith("DYLD_")) return true;
  return FORBIDDEN_PREFIXES.some((p) => n.startsWith(p));
}

/**
 * Parts of a name that mark a credential: `TOKEN`, `SECRET`, `PASS` (so
 * `PASSWORD`, `PASSWD`, `MY_PASS`, `DBPASS`), `CREDENTIAL`, `PRIVATE`, `DSN`,
 * `JWT`, `COOKIE`, `SESSION`, `APIKEY`, `ACCESSKEY`, and `AUTH`, `KEY`/`KEYS`
 * and `PAT` as a word of the name (`_AUTH`, `KEY_`, `GH_PAT`). Matched
 * upper-cased; `KEYMAP`, `AUTHOR`, `MONKEY` and `PATH` do not count.
 */
const CREDENTIAL_NAME =
  /TOKEN|SECRET|PASS|CREDENTIAL|PRIVATE|DSN|JWT|COOKIE|SESSION|APIKEY|ACCESSKEY|(^|_)(AUTH|KEYS?|PAT)(_|$)/;

/** `CERT`/`CERTS` as a word of the name: a credential unless its value is a path (`SSL_CERT_FILE`). */
const CERT_NAME = /(^|_)CERTS?(_|$)/;

/**
 * True for a name that looks like it holds a credential (`HF_TOKEN`,
 * `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`, `NPM_AUTH`, `GH_PAT`,
 * `SENTRY_DSN`, `CI_JOB_JWT`, `GOOGLE_APPLICATION_CREDENTIALS`,
 * `SSH_AUTH_SOCK`). Such a variable of the shell snapshot never reaches a
 * command unless the policy passes its name (`env.allow`); a vault entry of
 * that name is the user's own choice and does.
 */
export function isCredentialEnvName(name: string): boolean {
  return CREDENTIAL_NAME.test(name.toUpperCase());
}

/**
 * A URL carrying a password (`scheme://user:pass@host`), anywhere in the
 * value (`GOPROXY=https://u:p@proxy,direct`).
 */
const URL_WITH_PASSWORD = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]*@/;

/**
 * Well-known token formats, at the start of a word: GitHub (`ghp_`, `gho_`,
 * `ghu_`, `ghs_`, `ghr_`, `github_pat_`), GitLab (`glpat-`), Slack
 * (`xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`), OpenAI-style `sk-`,
 * Hugging Face `hf_`, npm `npm_`, AWS access key ids (`AKIA`/`ASIA` and 16
 * more), Google API keys (`AIza`), JSON Web Tokens (`eyJ`…) and PEM private
 * keys (`-----BEGIN … PRIVATE KEY`).
 */
const TOKEN_VALUE = new RegExp(
  "(^|[^A-Za-z0-9])(" + [
    "gh[pousr]_[A-Za-z0-9]{16,}",
    "github_pat_[A-Za-z0-9_]{16,}",
    "glpat-[A-Za-z0-9_-]{16,}",
    "xox[abprs]-[A-Za-z0-9-]{10,}",
    "sk-[A-Za-z0-9_-]{16,}",
    "hf_[A-Za-z0-9]{16,}",
    "npm_[A-Za-z0-9]{16,}",
    "(AKIA|ASIA)[0-9A-Z]{16}",
    "AIza[0-9A-Za-z_-]{30,}",
    "eyJ[A-Za-z0-9_-]{10,}",
  ].join("|") + ")|-----BEGIN [A-Z ]*PRIVATE KEY",
);

/**
 * True for a value that holds a credential whatever its variable's name: a
 * URL with a password in it, or a well-known token format
 * ({@linkcode TOKEN_VALUE}).
 */
export function isCredentialEnvValue(value: string): boolean {
  return URL_WITH_PASSWORD.test(value) || TOKEN_VALUE.test(value);
}

/**
 * True for a variable of the shell snapshot that must not reach a command
 * unless passed by name: a credential-like name
 * ({@linkcode isCredentialEnvName}), a `CERT` name whose value is not a path,
 * or a credential-like value ({@linkcode isCredentialEnvValue}).
 */
export function isCredentialEnv(name: string, value: string): boolean {
  if (isCredentialEnvName(name) || isCredentialEnvValue(value)) return true;
  return CERT_NAME.test(name.toUpperCase()) && !/^[/~]/.test(value);
}

/**
 * Names of the shell snapshot that are configuration, not credentials: the
 * only ones that reach a command without being passed by name. Toolchain
 * roots and search paths, locale, terminal and editor, the user's identity
 * as penguin sets it, and build flags.
 */
export const LOGIN_ENV_ALLOWLIST: readonly string[] = [
  "PATH",
  "MANPATH",
  "INFOPATH",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TERM",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "SHELL",
  "USER",
  "LOGNAME",
  "HOME",
  "TMPDIR",
  "GOROOT",
  "GOPATH",
  "GOBIN",
  "PYENV_ROOT",
  "NVM_DIR",
  "NVM_BIN",
  "NVM_INC",
  "BUN_INSTALL",
  "DENO_INSTALL",
  "DENO_DIR",
  "SDKMAN_DIR",
  "ASDF_DIR",
  "ASDF_DATA_DIR",
  "VIRTUAL_ENV",
  "GEM_PATH",
  "RBENV_ROOT",
  "NODE_PATH",
  "PYTHONPATH",
  "PKG_CONFIG_PATH",
  "CPATH",
  "LIBRARY_PATH",
  "CC",
  "CXX",
  "CFLAGS",
  "CXXFLAGS",
  "CPPFLAGS",
  "LDFLAGS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
];

/** Name families of {@linkcode LOGIN_ENV_ALLOWLIST}: `*_HOME` (`JAVA_HOME`, `CARGO_HOME`…), `LC_*`, `XDG_*`, `CONDA_*`. */
const LOGIN_ENV_FAMILY = /^(?:[A-Z][A-Z0-9_]*_HOME|LC_[A-Z_]+|XDG_[A-Z_]+|CONDA_[A-Z0-9_]+)$/;

/** A URL with userinfo (`scheme://user@`, `scheme://user:pw@`) or a query (`?…`). */
const URL_WITH_USERINFO_OR_QUERY = /[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^\s/@?#]*@|[^\s?#]*\?)/;

/**
 * The value of a variable of the shell snapshot that reaches commands
 * without being passed by name, or `undefined` when none: its name is on
 * {@linkcode LOGIN_ENV_ALLOWLIST} (or one of its families, or a proxy
 * variable when `network` is on), its value is plain by
 * {@linkcode plainLoginValue} (a search path such as `PATH` loses only its
 * entries that are not; `known` names what the host environment already
 * shows, see {@linkcode knownPaths}), and what is left is not credential-like
 * ({@linkcode isCredentialEnv}), holds no URL with userinfo or a query and
 * (for a proxy) no path.
 */
export function loginEnvValue(
  name: string,
  value: string,
  network = false,
  known?: KnownPaths,
): string | undefined {
  const proxy = network && PROXY_VARS.includes(name);
  if (!proxy && !LOGIN_ENV_ALLOWLIST.includes(name) && !LOGIN_ENV_FAMILY.test(name)) return;
  const plain = plainLoginValue(name, value, known);
  if (plain === undefined || isCredentialEnv(name, plain)) return;
  if (URL_WITH_USERINFO_OR_QUERY.test(plain)) return;
  if (proxy && /:\/\/[^/\s]*\/[^\s,]/.test(plain)) return;
  return plain;
}

/** True when {@linkcode loginEnvValue} passes some of the value of `name`. */
export function isLoginEnvAllowed(name: string, value: string, network = false): boolean {
  return loginEnvValue(name, value, network) !== undefined;
}

/** Inputs of {@linkcode buildChildEnv}. */
export interface ChildEnvOptions {
  /** The host environment to draw from. */
  host: Record<string, string>;
  /** Extra host names to pass (still subject to {@linkcode isForbiddenEnvName}). */
  allow?: string[];
  /** Vault values (valid names only; `LD_*`/`DYLD_*` dropped; forced values win). */
  vault?: Record<string, string>;
  /** Whether proxy variables pass through. */
  network?: boolean;
  /**
   * The login shell's exported variables (the shell snapshot): applied after
   * the allowlist and before the vault, forbidden names dropped, and only
   * names and values of {@linkcode loginEnvValue} unless in `allow`.
   */
  login?: Record<string, string>;
}

/**
 * The child environment: allowlisted host variables (never forbidden ones),
 * then the login shell's variables (same filter), then the vault, then
 * {@linkcode FORCED_ENV}. Vault entries are the user's explicit choice and
 * may carry API keys; loader variables are still dropped.
 */
export function buildChildEnv(opts: ChildEnvOptions): Record<string, string> {
  const env: Record<string, string> = {};
  const allow = new Set([
    ...ENV_ALLOWLIST,
    ...(opts.allow ?? []),
    ...(opts.network ? PROXY_VARS : []),
  ]);
  for (const [k, v] of Object.entries(opts.host)) {
    if (!NAME.test(k) || isForbiddenEnvName(k)) continue;
    if (allow.has(k) || k.startsWith("LC_")) env[k] = v;
  }
  const named = new Set(opts.allow ?? []);
  const known = loginKnownPaths(opts.host, opts.login);
  for (const [k, v] of Object.entries(opts.login ?? {})) {
    if (!NAME.test(k) || isForbiddenEnvName(k) || typeof v !== "string") continue;
    // `~/.profile` and the like: configuration only; anything else only when passed by name.
    const value = named.has(k) ? v : loginEnvValue(k, v, opts.network, known);
    if (value !== undefined) env[k] = value;
  }
  env["PATH"] = cleanPath(env["PATH"] ?? "") || DEFAULT_PATH;
  for (const [k, v] of Object.entries(opts.vault ?? {})) {
    if (!NAME.test(k) || typeof v !== "string") continue;
    const n = k.toUpperCase();
    if (n.startsWith("LD_") || n.startsWith("DYLD_")) continue;
    env[k] = v;
  }
  return { ...env, ...FORCED_ENV };
}

/** Drop empty and relative PATH entries (they resolve against whatever the cwd is). */
function cleanPath(path: string): string {
  return path.split(":").filter((p) => p.startsWith("/")).join(":");
}
