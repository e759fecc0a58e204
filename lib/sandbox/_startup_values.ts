/**
 * The values the user's startup files assign to a few variables, read as text: the XDG base
 * directories and the credential stores' variables (`_xdg_hidden.ts`, `_relocated_stores.ts`)
 * that a shell penguin never runs sets. The shell snapshot (`login_env.ts`) runs `bash -l` only:
 * `XDG_CONFIG_HOME` exported in `~/.zshenv`, or in `~/.bashrc` below Debian's interactive guard,
 * moved the user's `gh` token and keyring where nothing hid them (attack round 30 o03).
 *
 * Read: the login and interactive files of sh, bash and zsh (`$ZDOTDIR` too, where a `.zshenv`
 * sets it), fish's `config.fish`, `~/.pam_environment`, systemd's `environment.d` and the
 * system's `/etc/environment`, `/etc/profile`, `/etc/zsh/zshenv`. An assignment counts wherever
 * it is (a branch, a function: hiding one too many is the safe side), not in a comment; `$HOME`,
 * `${HOME}`, `@{HOME}` and a leading `~` are expanded, and `${NAME:-default}` gives its default;
 * a value still holding `$` or a backquote is left out. Files of more than 1 MiB, or not regular,
 * are not read. Each file's findings are kept until its size or modification time changes (the
 * plan runs before every command).
 *
 * @module
 */
import { join } from "node:path";
import { listDirNow, readRegularTextNow, statOrNone } from "./_look.ts";

/** Startup files of the home, relative to it. */
const HOME_FILES = [
  ".profile",
  ".bash_profile",
  ".bash_login",
  ".bashrc",
  ".zshenv",
  ".zprofile",
  ".zshrc",
  ".zlogin",
  ".kshrc",
  ".mkshrc",
  ".pam_environment",
  ".xprofile",
  ".xsessionrc",
  ".config/fish/config.fish",
];

/** The system's startup files. */
const SYSTEM_FILES = [
  "/etc/environment",
  "/etc/profile",
  "/etc/bash.bashrc",
  "/etc/zsh/zshenv",
  "/etc/zshenv",
  "/etc/zsh/zprofile",
];

/** zsh's files in `$ZDOTDIR`. */
const ZDOT_FILES = [".zshenv", ".zprofile", ".zshrc", ".zlogin"];

const MAX_BYTES = 1 << 20;
/** Files of systemd's `environment.d` read at most; files kept in the cache at most. */
const MAX_ENV_D = 32;
const MAX_CACHED = 256;

/** One file's assignments (name, raw value), kept with what it was when read. */
const cache = new Map<string, { mtime: number; size: number; found: [string, string][] }>();

const NAME = "[A-Za-z_][A-Za-z0-9_]*";
/** `NAME=value` (sh, environment.d, pam's short form), `${NAME:=value}`. */
const SH = new RegExp(
  `(?:^|[\\s;&|(\`])(?:export\\s+|declare\\s+-x\\s+|typeset\\s+-x\\s+)?(${NAME})=` +
    `("[^"]*"|'[^']*'|[^\\s;&|#)\`]*)`,
  "g",
);
const DEFAULT_ASSIGN = new RegExp(`\\$\\{(${NAME}):?=([^}]*)\\}`, "g");
/** fish's `set -gx NAME value`. */
const FISH = new RegExp(
  `\\bset\\s+(?:-[-A-Za-z]+\\s+)*(${NAME})\\s+("[^"]*"|'[^']*'|[^\\s;]+)`,
  "g",
);
/** pam_env's `NAME DEFAULT=value` / `OVERRIDE=value`. */
const PAM = new RegExp(`^\\s*(${NAME})\\s+(?:DEFAULT|OVERRIDE)=("[^"]*"|\\S+)`, "g");

function unquote(v: string): string {
  return /^(["']).*\1$/s.test(v) ? v.slice(1, -1) : v;
}

/** The assignments of one file's text. */
export function assignmentsIn(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trimStart();
    if (line.startsWith("#")) continue;
    for (const re of [SH, DEFAULT_ASSIGN, FISH, PAM]) {
      re.lastIndex = 0;
      for (const m of line.matchAll(re)) {
        if (re === SH && /^(DEFAULT|OVERRIDE)$/.test(m[1]!)) continue; // pam_env's own words
        out.push([m[1]!, unquote(m[2]!)]);
      }
    }
  }
  return out;
}

/** `value` with the home expanded, or undefined when something else is left to expand. */
export function expandValue(value: string, home: string | undefined): string | undefined {
  let v = value.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}]*)\}/g, "$1");
  if (home !== undefined) {
    v = v.replace(/\$\{HOME\}|\$HOME\b|@\{HOME\}/g, home).replace(/^~(?=\/|$)/, home);
  }
  return /[$`]/.test(v) || v === "" ? undefined : v;
}

function fileAssignments(path: string): [string, string][] {
  const info = statOrNone(path);
  if (!info?.isFile || info.size > MAX_BYTES) {
    cache.delete(path);
    return [];
  }
  const mtime = info.mtime?.getTime() ?? 0;
  const kept = cache.get(path);
  if (kept && kept.mtime === mtime && kept.size === info.size) return kept.found;
  const text = readRegularTextNow(path, MAX_BYTES);
  const found = text === undefined ? [] : assignmentsIn(text);
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(path, { mtime, size: info.size, found });
  return found;
}

/** The `*.conf` files of systemd's `environment.d` directory `dir` (none when it is not one). */
function environmentD(dir: string): string[] {
  if (!statOrNone(dir)?.isDirectory) return [];
  try {
    return listDirNow(dir).filter((e) => e.name.endsWith(".conf")).slice(0, MAX_ENV_D)
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

/**
 * The values of `names` the startup files of `home` and of the system assign, each as an
 * environment of one variable (a name may be assigned several values).
 */
export function startupValues(
  home: string | undefined,
  names: readonly string[],
): Record<string, string>[] {
  const files = [...SYSTEM_FILES, ...(home ? HOME_FILES.map((f) => join(home, f)) : [])];
  if (home) files.push(...environmentD(join(home, ".config", "environment.d")));
  const all = files.flatMap(fileAssignments);
  for (const [, raw] of all.filter(([n]) => n === "ZDOTDIR")) {
    const dir = expandValue(raw, home);
    if (dir?.startsWith("/")) all.push(...ZDOT_FILES.flatMap((f) => fileAssignments(join(dir, f))));
  }
  const out: Record<string, string>[] = [];
  const seen = new Set<string>();
  for (const [name, raw] of all) {
    if (!names.includes(name)) continue;
    const value = expandValue(raw, home);
    if (value === undefined || seen.has(`${name}=${value}`)) continue;
    seen.add(`${name}=${value}`);
    out.push({ [name]: value });
  }
  return out;
}
