/**
 * Credentials an MCP server's configuration carries outside its `env` and
 * header values: in a remote server's URL (the userinfo of
 * `https://user:pass@host`, and query parameters named like a credential:
 * `?api_key=…`, `token=`, `key=`, `secret=`, `sig=`…) and in a stdio
 * server's arguments (`--token <v>`, `--api-key=<v>`, `API_KEY=<v>`).
 *
 * They are secrets like env and header values: masked in everything the
 * model's tools print (lib/mcp/secrets.ts) and emptied in a snapshot
 * (lib/state/snapshot_secrets.ts). An argument value that looks like a path
 * (`--key-file /etc/x.pem`) or another option is not one.
 *
 * @module
 */

/** One credential found in a URL or an argument list. */
export interface InlineSecret {
  /** `url.password`, `url.user`, `url.api_key`, `args[3]`… */
  where: string;
  /** The credential itself. */
  value: string;
}

/** A name (query parameter, option, `NAME=`) that holds a credential. */
const SECRET_NAME =
  /key|token|secret|pass|auth|credential|session|cookie|jwt|sig(nature)?$|^sig|^code$|dsn|(^|[_-])pat$/i;

/** True for a query parameter, option or variable name that holds a credential. */
export function isSecretParamName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** The credentials of `url`: the userinfo's password (or a lone user name) and credential query values. */
export function urlSecrets(url: string): InlineSecret[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  const out: InlineSecret[] = [];
  if (u.password !== "") out.push({ where: "url.password", value: u.password });
  else if (u.username !== "") out.push({ where: "url.user", value: u.username });
  for (const [k, v] of u.searchParams) {
    if (v !== "" && isSecretParamName(k)) out.push({ where: `url.${k}`, value: v });
  }
  return out;
}

/** `url` with its userinfo removed and its credential query values emptied (unchanged when it has none). */
export function urlWithoutSecrets(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  if (urlSecrets(url).length === 0) return url;
  u.username = "";
  u.password = "";
  const params = [...u.searchParams].map(([k, v]) => [k, isSecretParamName(k) ? "" : v]);
  u.search = params.length > 0 ? new URLSearchParams(params).toString() : "";
  return u.toString();
}

/** An argument that is a URL. */
const URL_START = /^[a-z][a-z0-9+.-]*:\/\//i;

/** What an argument value must not look like to count as a credential: an option or a path. */
const NOT_A_VALUE = /^(-|\/|\.\.?\/|~\/)/;

/**
 * The credentials of an argument list, by index: the value after
 * `--token`/`--api-key`… (not an option, not a path), the value of
 * `--token=<v>`, and of `API_KEY=<v>`; URLs among the arguments by
 * {@linkcode urlSecrets}. `--no-auth` and the like are flags, not names.
 */
export function argSecrets(args: readonly string[]): (InlineSecret & { index: number })[] {
  const out: (InlineSecret & { index: number })[] = [];
  args.forEach((arg, i) => {
    const opt = /^--?([A-Za-z][A-Za-z0-9_.-]*)(=(.*))?$/s.exec(arg);
    if (opt && !opt[1]!.startsWith("no-") && isSecretParamName(opt[1]!)) {
      if (opt[3] !== undefined) {
        if (opt[3] !== "") out.push({ where: `args[${i}]`, index: i, value: opt[3] });
        return;
      }
      const next = args[i + 1];
      if (next !== undefined && next !== "" && !NOT_A_VALUE.test(next)) {
        out.push({ where: `args[${i + 1}]`, index: i + 1, value: next });
      }
      return;
    }
    const assign = /^([A-Za-z_][A-Za-z0-9_]*)=(.+)$/s.exec(arg);
    if (assign && isSecretParamName(assign[1]!)) {
      out.push({ where: `args[${i}]`, index: i, value: assign[2]! });
      return;
    }
    if (URL_START.test(arg)) {
      for (const s of urlSecrets(arg)) out.push({ ...s, where: `args[${i}]`, index: i });
    }
  });
  return out;
}

/** `args` with each credential emptied (`--token ""`, `--api-key=`, a URL without its secrets). */
export function argsWithoutSecrets(args: readonly string[]): string[] {
  const out = [...args];
  for (const s of argSecrets(args)) {
    const arg = out[s.index]!;
    const eq = arg.indexOf("=");
    if (URL_START.test(arg)) out[s.index] = urlWithoutSecrets(arg);
    else if (eq > 0 && arg.slice(eq + 1) === s.value) out[s.index] = arg.slice(0, eq + 1);
    else out[s.index] = "";
  }
  return out;
}
