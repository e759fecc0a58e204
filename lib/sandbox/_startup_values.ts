/**
 * The values the user's startup files assign to a few variables, read as text: the XDG base
 * directories and the credential stores' variables (`_xdg_hidden.ts`, `_relocated_stores.ts`)
 * that a shell penguin never runs sets. The shell snapshot (`login_env.ts`) runs `bash -l` only:
 * `XDG_CONFIG_HOME` exported in `~/.zshenv`, or in `~/.bashrc` below Debian's interactive guard,
 * moved the user's `gh` token and keyring where nothing hid them (attack round 30 o03).
 *
 * Read: the login and interactive files of sh, bash, zsh (`$ZDOTDIR` too, where a `.zshenv`
 * sets it), csh, fish (`config.fish`, `conf.d`, the universal `fish_variables`), nushell, xonsh
 * and elvish, `~/.pam_environment`, systemd's `environment.d`, the system's `/etc/environment`,
 * `/etc/profile`, `/etc/zsh/zshenv`, and what they source (`. file`, `source dir/*.sh`), two
 * levels deep (attack round 32 u05, u14). An assignment counts wherever
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
  // Round 32 u05, u14: fish's universal variables (`set -Ux`), the files bash's usual `~/.bashrc`
  // sources, csh's, and the other shells' own.
  ".config/fish/fish_variables",
  ".bash_aliases",
  ".cshrc",
  ".tcshrc",
  ".login",
  ".config/nushell/env.nu",
  ".config/nushell/config.nu",
  ".xonshrc",
  ".config/xonsh/rc.xsh",
  ".config/elvish/rc.elv",
  ".elvish/rc.elv",
];

/** Directories of the home whose every file of a name ending so is read (fish's `conf.d`). */
const HOME_DIRS: readonly [string, string][] = [
  [".config/fish/conf.d", ".fish"],
  [".config/environment.d", ".conf"],
  [".bashrc.d", ""],
  [".profile.d", ""],
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
/** Files of one directory read at most; files read at most; files kept in the cache at most. */
const MAX_DIR_FILES = 32;
const MAX_FILES = 96;
const MAX_CACHED = 256;

/** One file's assignments (name, raw value), kept with what it was when read. */
const cache = new Map<string, { mtime: number; size: number; found: [string, string][] }>();

const NAME = "[A-Za-z_][A-Za-z0-9_]*";
/** A shell word: quoted parts and bare characters, concatenated (`"/x"/cargo`). */
const WORD = `(?:"[^"]*"|'[^']*'|[^\\s;&|#)\`'"])+`;
/** `NAME=value`, `NAME+=value` (sh, environment.d, pam's short form). */
const SH = new RegExp(
  `(?:^|[\\s;&|(\`])(?:export\\s+(?:--\\s+)?|declare\\s+-x\\s+|typeset\\s+-x\\s+)?(${NAME})\\+?=(${WORD})`,
  "g",
);
/** `${NAME:=value}`. */
const DEFAULT_ASSIGN = new RegExp(`\\$\\{(${NAME}):?=([^}]*)\\}`, "g");
/** fish's `set -gx NAME value`, csh's `setenv NAME value`, elvish's `set-env NAME value`. */
const SET = new RegExp(
  `\\b(?:set\\s+(?:-[-A-Za-z]+\\s+)*|setenv\\s+|set-env\\s+)(${NAME})\\s+(${WORD})`,
  "g",
);
/** pam_env's `NAME DEFAULT=value` / `OVERRIDE=value`. */
const PAM = new RegExp(`^\\s*(${NAME})\\s+(?:DEFAULT|OVERRIDE)=(${WORD})`, "g");
/** fish's universal variables: `SETUVAR --export NAME:value`. */
const FISH_UNIVERSAL = new RegExp(`^SETUVAR\\s+(?:--export\\s+)?(${NAME}):(.*)$`, "g");
/** nushell's `$env.NAME = value`, xonsh's `$NAME = value`, elvish's `set E:NAME = value`. */
const OTHER = new RegExp(
  `(?:\\$env\\.|\\$|\\bset\\s+E:)(${NAME})\\s*=\\s*(?:p|r|f)?(${WORD})`,
  "g",
);

/** A word with its quotes taken off (`"/x"/cargo` is `/x/cargo`). */
function unquote(v: string): string {
  return v.replace(/"([^"]*)"|'([^']*)'/g, (_m, a?: string, b?: string) => a ?? b ?? "");
}

/** The name a sourced file is kept under among the assignments (no variable has it). */
const SOURCED = " sourced";

/** The files a line sources (`. file`, `source file`), as written. */
const SOURCE = /(?:^|[;&|]\s*)(?:\.|source)\s+([^\s;&|]+)/g;

/** The assignments of one file's text, and the files it sources. */
export function assignmentsIn(text: string): [string, string][] {
  const out: [string, string][] = [];
  // A line continued with a backslash is one line (the shell takes both characters out).
  for (const raw of text.replace(/\\\n/g, "").split("\n")) {
    const line = raw.trimStart();
    if (line.startsWith("#")) continue;
    for (const re of [SH, DEFAULT_ASSIGN, SET, PAM, FISH_UNIVERSAL, OTHER]) {
      re.lastIndex = 0;
      for (const m of line.matchAll(re)) {
        if (re === SH && /^(DEFAULT|OVERRIDE)$/.test(m[1]!)) continue; // pam_env's own words
        out.push([m[1]!, re === FISH_UNIVERSAL ? fishUnescape(m[2]!) : unquote(m[2]!)]);
      }
    }
    SOURCE.lastIndex = 0;
    for (const m of line.matchAll(SOURCE)) out.push([SOURCED, unquote(m[1]!)]);
  }
  return out;
}

/** A fish universal value: `\xHH` escapes decoded, the first of a list. */
function fishUnescape(v: string): string {
  return v.replace(/\\x([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
    .split("\x1e")[0]!;
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

/** The files of directory `dir` whose names end with `suffix` (none when it is not one). */
function filesIn(dir: string, suffix: string): string[] {
  if (!statOrNone(dir)?.isDirectory) return [];
  try {
    return listDirNow(dir).filter((e) => e.name.endsWith(suffix) && !e.name.startsWith("."))
      .map((e) => e.name).sort().slice(0, MAX_DIR_FILES).map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/** The files a sourced path (as expanded) names: itself, or what `dir/*<suffix>` matches. */
function sourcedFiles(path: string): string[] {
  const m = /^(.*)\/\*([^/*?[]*)$/.exec(path);
  if (m) return filesIn(m[1]!, m[2]!);
  return /[*?[]/.test(path) ? [] : [path];
}

/** The startup files read first: the system's, the home's, its directories' files. */
function firstFiles(home: string | undefined): string[] {
  const files = [...SYSTEM_FILES];
  if (!home) return files;
  files.push(...HOME_FILES.map((f) => join(home, f)));
  for (const [dir, suffix] of HOME_DIRS) files.push(...filesIn(join(home, dir), suffix));
  return files;
}

/**
 * The assignments of the startup files of `home` and of the system, and of the files they source
 * (`. ~/.bash_aliases`, `source ~/.config/bashrc.d/*.sh`: round 32 u05) and `$ZDOTDIR`'s, two
 * levels deep, {@linkcode MAX_FILES} files at most.
 */
function allAssignments(home: string | undefined): [string, string][] {
  const queue = firstFiles(home).map((path) => ({ path, depth: 0 }));
  const seen = new Set<string>();
  const all: [string, string][] = [];
  while (queue.length > 0 && seen.size < MAX_FILES) {
    const { path, depth } = queue.shift()!;
    if (seen.has(path)) continue;
    seen.add(path);
    for (const [name, raw] of fileAssignments(path)) {
      const more = name === SOURCED || name === "ZDOTDIR";
      if (!more) {
        all.push([name, raw]);
        continue;
      }
      if (name === "ZDOTDIR") all.push([name, raw]);
      if (depth >= 2) continue;
      const to = expandValue(raw, home);
      if (to === undefined) continue;
      const abs = to.startsWith("/") ? to : home ? join(home, to) : undefined;
      if (abs === undefined) continue;
      const next = name === "ZDOTDIR" ? ZDOT_FILES.map((f) => join(abs, f)) : sourcedFiles(abs);
      for (const f of next) queue.push({ path: f, depth: depth + 1 });
    }
  }
  return all;
}

/**
 * The values of `names` the startup files of `home` and of the system assign, each as an
 * environment of one variable (a name may be assigned several values).
 */
export function startupValues(
  home: string | undefined,
  names: readonly string[],
): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  const seen = new Set<string>();
  for (const [name, raw] of allAssignments(home)) {
    if (!names.includes(name)) continue;
    const value = expandValue(raw, home);
    if (value === undefined || seen.has(`${name}=${value}`)) continue;
    seen.add(`${name}=${value}`);
    out.push({ [name]: value });
  }
  return out;
}
