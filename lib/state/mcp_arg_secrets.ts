/**
 * The closed rule for a stdio MCP server's arguments: an argument is no
 * secret only when it is
 *
 * 1. an option name: `-x`, or `--word[-word]*` without `=value` (for
 *    `--opt=value` the value alone is judged, the `--opt=` is kept);
 * 2. a path that exists on the host, absolute or relative to the server's
 *    working directory (checked with `stat`);
 * 3. empty.
 *
 * Everything else is a secret, whatever it looks like (a word, a number, a
 * package spec, a path that does not exist, a comma list, `host/x`,
 * `//host/x`): each attack pass found another token shape that a judgement
 * by shape let through. A URL (`scheme://…`) follows lib/state/mcp_url_secrets.ts
 * (its userinfo, path, query and fragment are secrets, its origin is not);
 * a header passed as an argument (`Name: value`) keeps its name.
 *
 * A secret is left out of snapshots (lib/state/snapshot_secrets.ts), shown
 * elided (`…`) by `penguin mcp list` ({@linkcode shownArgs}), and masked in
 * text (lib/mcp/secrets.ts) when {@linkcode MASKED_URL_PART} characters or
 * more, or when it follows an option named like a credential (`--token <v>`,
 * `-p <v>`): a shorter one (`8931`, `stdio`) would mask common words
 * everywhere. The package a runner starts (`npx -y <pkg>`) and a script's
 * text as a whole are not masked either (see {@linkcode argSecrets}).
 *
 * @module
 */

import { isAbsolute, join } from "node:path";
import {
  MASKED_URL_PART,
  URL_START,
  urlOrigin,
  urlSecretParts,
  urlShown,
} from "./mcp_url_secrets.ts";

/** One secret of an argument list. */
export interface ArgSecret {
  /** `args[3]`, `args[2].path`, `args[5].user`… */
  where: string;
  /** The index of the argument. */
  index: number;
  /** The secret itself. */
  value: string;
  /** Whether it is masked in text (every secret is left out of snapshots and of `mcp list`). */
  mask: boolean;
}

/** An option name: `-x`, `--word`, `--word-word`, `--word_word`. */
const OPTION = /^(-[A-Za-z]|--[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*)$/;

/** `--opt=` (or `-x=`) before a value. */
const OPTION_EQ = /^(-[A-Za-z]=|--[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*=)(.*)$/s;

/** `Name: value` (a header passed as an argument, as to `mcp-remote --header` or curl's `-H`). */
const HEADER_ARG = /^([A-Za-z][A-Za-z0-9-]*):\s*(\S.*)$/s;

/** `<scheme> <credential>` after a header's colon: `Bearer X`, `Basic X`, `token X`. */
const SCHEMED = /^[A-Za-z][A-Za-z0-9_-]*\s+(\S.*)$/s;

/** A name (an option, a header) whose value is masked whatever its length. */
const SECRET_NAME =
  /key|token|secret|pass|auth|credential|session|cookie|jwt|sig(nature)?$|^sig|^code$|dsn|(^|[_-])pat$|^p$/i;

/** The `--opt=` of argument `arg` and its value (all of it when there is no `--opt=`). */
function splitArg(arg: string): { prefix: string; value: string } {
  const m = OPTION_EQ.exec(arg);
  return m ? { prefix: m[1]!, value: m[2]! } : { prefix: "", value: arg };
}

/**
 * True when `value` is a path that exists: absolute, or relative to `cwd`;
 * never a scheme-relative `//host/x` or a scheme-less `host.tld/x`, and
 * never one with a `.`/`..` segment after its start (`/srv/<tok>/..`).
 */
export function existingPath(value: string, cwd: string): boolean {
  if (value.startsWith("//") || /[\0\n]/.test(value)) return false;
  if (/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+(:\d+)?\//.test(value)) return false;
  const rest = value.replace(/^(\.\.?(\/|$))+/, "");
  if (rest.split("/").some((s) => s === "." || s === "..")) return false;
  const path = isAbsolute(value) ? value : join(cwd, value);
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** True when `value` is no secret: empty, an option name, or an existing path. */
function plain(value: string, cwd: string): boolean {
  return value === "" || OPTION.test(value) || existingPath(value, cwd);
}

/** The words of a value with blanks (a script for `sh -c`) long enough to mask. */
function longWords(value: string): string[] {
  const words = value.split(/[\s"'`;&|<>(){}$,=]+/).filter((w) => w.length >= MASKED_URL_PART);
  return [...new Set(words)];
}

/** The secrets of one argument value that is not plain (its option name `name`, when any). */
function valueSecrets(
  value: string,
  name: string,
): { where: string; value: string; mask: boolean }[] {
  const bare = name.replace(/^--?|=$/g, "");
  const named = !bare.startsWith("no-") && SECRET_NAME.test(bare);
  if (URL_START.test(value) && urlOrigin(value) !== "") {
    return urlSecretParts(value).map((s) => ({
      where: s.where.slice(3),
      value: s.value,
      mask: s.mask || named,
    }));
  }
  const h = HEADER_ARG.exec(value);
  if (h) {
    const rest = h[2]!.trim();
    const credential = SCHEMED.exec(rest)?.[1]?.trim() ?? rest;
    const mask = named || SECRET_NAME.test(h[1]!) || rest.length >= MASKED_URL_PART;
    return [
      { where: "", value: rest, mask },
      ...(credential !== rest ? [{ where: "", value: credential, mask }] : []),
    ];
  }
  if (!/\s/.test(value.trim())) {
    return [{ where: "", value, mask: named || value.length >= MASKED_URL_PART }];
  }
  // A script (`sh -c '…'`) is masked by its long words: masking it whole would also mask every
  // piece of it that the script prints.
  return [
    { where: "", value, mask: named },
    ...longWords(value).map((w) => ({ where: "", value: w, mask: true })),
  ];
}

/** Runners whose first argument that is no option (after the subcommand, if any) names a package. */
const RUNNERS: Record<string, string> = {
  npx: "",
  bunx: "",
  uvx: "",
  pnpx: "",
  pnpm: "dlx",
  yarn: "dlx",
  bun: "x",
  pipx: "run",
  uv: "tool",
  deno: "run",
};

/** A package spec: `name`, `@scope/name`, `npm:@scope/name@1.2.3`, `jsr:@s/n`, `name==1.0`. */
const PACKAGE =
  /^(?:npm:|jsr:)?(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*(?:(?:@|==)[^\s/]+)?$/i;

/**
 * The index of the package `command` runs from `args` (`npx -y <pkg>`,
 * `deno run -A <pkg>`, `pnpm dlx <pkg>`), when it is package-shaped; -1
 * otherwise.
 */
function packageIndex(args: readonly string[], command: string): number {
  const runner = RUNNERS[command.split("/").pop()!];
  if (runner === undefined) return -1;
  let sub = runner === "";
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith("-")) continue;
    if (!sub) {
      if (a !== runner) return -1;
      sub = true;
      continue;
    }
    if (runner === "tool" && a === "run") continue;
    return PACKAGE.test(a) ? i : -1;
  }
  return -1;
}

/**
 * The secrets of argument list `args` of a server started as `command` in
 * `cwd`, by index: every value (a whole argument, or what follows `--opt=`)
 * that is not an option name or an existing path; a URL's secret parts; a
 * header's value. The package a runner starts (`npx -y <pkg>`) is a secret
 * too but not masked: masking a package name's pieces (`protocol`,
 * `filesystem`) would mask them in every text, the server's tool names too.
 */
export function argSecrets(
  args: readonly string[],
  cwd = Deno.cwd(),
  command = "",
): ArgSecret[] {
  const out: ArgSecret[] = [];
  const pkg = packageIndex(args, command);
  args.forEach((arg, i) => {
    const { prefix, value } = splitArg(arg);
    if (plain(value, cwd)) return;
    const previous = prefix === "" && i > 0 && OPTION.test(args[i - 1]!) ? args[i - 1]! : "";
    for (const s of valueSecrets(value, prefix || previous)) {
      const mask = s.mask && (i !== pkg || SECRET_NAME.test(previous.replace(/^--?/, "")));
      out.push({ where: `args[${i}]${s.where}`, index: i, value: s.value, mask });
    }
  });
  return out;
}

/**
 * Argument `arg` with its secret left out: `--opt=`, `Name:`, a URL's
 * `scheme://host[:port]`, else "".
 */
function leftOut(arg: string): string {
  const { prefix, value } = splitArg(arg);
  if (URL_START.test(value) && urlOrigin(value) !== "") return prefix + urlOrigin(value);
  const h = HEADER_ARG.exec(value);
  return prefix + (h ? `${h[1]}:` : "");
}

/** The indexes of `args` holding a secret (see {@linkcode argSecrets}). */
export function secretArgIndexes(args: readonly string[], cwd = Deno.cwd()): Set<number> {
  return new Set(argSecrets(args, cwd).map((s) => s.index));
}

/** `args` with each secret left out (`--opt=`, `Name:`, a URL's origin, else ""). */
export function argsWithoutSecrets(args: readonly string[], cwd = Deno.cwd()): string[] {
  const secret = secretArgIndexes(args, cwd);
  return args.map((a, i) => secret.has(i) ? leftOut(a) : a);
}

/** Argument `left` (as {@linkcode argsWithoutSecrets} left it) shown with `…` where its secret was. */
export function elided(left: string): string {
  if (URL_START.test(splitArg(left).value)) return `${left}/…`;
  return left === "" ? "…" : left.endsWith(":") ? `${left} …` : `${left}…`;
}

/**
 * `args` as `penguin mcp list` shows them: each secret elided (`…`,
 * `--opt=…`, `Name: …`, `scheme://host[:port]/…`), the rest as written.
 */
export function shownArgs(args: readonly string[], cwd = Deno.cwd()): string[] {
  const secret = secretArgIndexes(args, cwd);
  return args.map((a, i) => {
    if (!secret.has(i)) return a;
    const { prefix, value } = splitArg(a);
    if (URL_START.test(value) && urlOrigin(value) !== "") return prefix + urlShown(value);
    return elided(leftOut(a));
  });
}
