/**
 * The configuration the host's `git` reads in the workspace, resolved the way
 * git resolves it but without running git (a hostile configuration can make
 * git run code): system, global and repository files, then every
 * `include.path` and `includeIf.<condition>.path` they name, recursively.
 *
 * Where git's choice depends on something penguin cannot know for sure (the
 * environment of the user's later shell, a branch the model may check out),
 * the file is read anyway: the result only decides what is protected, and
 * protecting more is safe.
 *
 * - System: `$GIT_CONFIG_SYSTEM`, `/etc/gitconfig`, and `<prefix>/etc/gitconfig`
 *   for every `git` on `PATH` (read even when `GIT_CONFIG_NOSYSTEM` is set).
 * - Global: `$GIT_CONFIG_GLOBAL`, `$XDG_CONFIG_HOME/git/config`,
 *   `~/.config/git/config`, `~/.gitconfig`.
 * - Repository: `<common dir>/config`, and `<git dir>/config.worktree` when
 *   `extensions.worktreeConfig` is set.
 * - Environment: `GIT_CONFIG_COUNT` with `GIT_CONFIG_KEY_<n>` and
 *   `GIT_CONFIG_VALUE_<n>`, and `GIT_CONFIG_PARAMETERS` (what `git -c` passes
 *   on), last as in git; their entries name the variable as their file.
 * - Includes: a relative path is taken from the including file's directory,
 *   `~/` is the home directory, `%(prefix)/` each prefix above; at most ten
 *   levels, as in git. Every `includeIf` counts, whatever its condition:
 *   `onbranch:` and `hasconfig:` may hold after the session (the user switches
 *   branches, adds a remote), and `gitdir:` git also matches against the path
 *   the user's shell names the repository by (`$PWD`, through a link penguin
 *   never sees): a `gitdir:~/work/` include penguin found not to hold set the
 *   `core.hooksPath` the user's commit ran the model's hook from (attack round
 *   31 r02, r03); protecting more is the safe side.
 *
 * @module
 */
import { readRegularNow } from "./_look.ts";
import { accountHome } from "./_user_homes.ts";
import { startupValues } from "./_startup_values.ts";
import { dirname, isAbsolute, join } from "node:path";
import { type ConfigEntry, gitBoolean, parseGitConfig } from "./git_config_parse.ts";
import { physicalPath } from "./git_path.ts";
import { realPathOrNone } from "./_look.ts";

export type { ConfigEntry };

/** Where a configuration file came from. */
export type ConfigScope = "system" | "global" | "repository" | "include";

/** A configuration file git reads (or would read if it existed). */
export interface ConfigFile {
  /** Absolute path. */
  path: string;
  scope: ConfigScope;
  /** For an include: the key that names it (`include.path`, `includeIf.gitdir:~/w/.path`). */
  key?: string;
  /** For an include: the file holding that key. */
  from?: string;
  /** Whether it was read, is missing, or exists but could not be read. */
  state: "read" | "missing" | "unreadable";
  /** For an include: the symbolic links its path went through (`physicalPath`). */
  links?: string[];
  /** For an include: the entries a `..` of its path stepped out of (`physicalPath`). */
  via?: string[];
}

/** The resolved configuration. */
export interface ResolvedGitConfig {
  /** Every assignment of every file read, in git's reading order. */
  entries: ConfigEntry[];
  /** Every file git reads or would read, read or not. */
  files: ConfigFile[];
  /** Syntax errors and includes that could not be followed. */
  errors: string[];
}

/** What to resolve. */
export interface ResolveOptions {
  /** Real path of the work tree (the workspace). */
  workTree: string;
  /** Paths naming the git directory: `<work tree>/.git` and the real git directory. */
  gitDirs: readonly string[];
  /** Real path of the git directory holding `HEAD` (the worktree's own). */
  gitDir?: string | undefined;
  /** Real path of the common directory (holding `config`); defaults to `gitDir`. */
  commonDir?: string | undefined;
  /** The home directory (`~`). */
  home?: string | undefined;
  /** An environment variable, or undefined (default: penguin's own, where permitted). */
  env?: (name: string) => string | undefined;
  /** Read a file: its text, undefined when missing, `"unreadable"` otherwise. */
  read?: (path: string) => Promise<string | undefined | "unreadable">;
}

/** Git's include depth limit. */
const MAX_INCLUDE_DEPTH = 10;
/** A configuration file larger than this is not read (it counts as unreadable). */
const MAX_CONFIG_BYTES = 4 << 20;

/** Penguin's own environment, where its permissions let it look. */
function ownEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

function readConfigFile(path: string): string | undefined | "unreadable" {
  // Opened without blocking and checked as opened: a FIFO swapped in after a look cannot hang penguin.
  const r = readRegularNow(path, MAX_CONFIG_BYTES);
  if (r === "missing" || r === "directory") return undefined;
  return r instanceof Uint8Array ? new TextDecoder().decode(r) : "unreadable";
}

/** {@linkcode gitPrefixes} by `PATH`: the programs on it do not move while penguin runs. */
const prefixCache = new Map<string, string[]>();

/** Install prefixes of the `git` programs on `PATH` (`/usr` for `/usr/bin/git`). */
export function gitPrefixes(path: string | undefined): Promise<string[]> {
  const key = path ?? "";
  let found = prefixCache.get(key);
  if (!found) prefixCache.set(key, found = lookUpPrefixes(key));
  return Promise.resolve(found);
}

function lookUpPrefixes(path: string): string[] {
  const out: string[] = [];
  for (const dir of new Set(path.split(":"))) {
    if (!isAbsolute(dir)) continue;
    const real = realPathOrNone(join(dir, "git"));
    if (real === undefined) continue;
    const prefix = dirname(dirname(real));
    if (!out.includes(prefix)) out.push(prefix);
  }
  return out;
}

/** The system and global files, in git's order. */
function baseFiles(
  opts: ResolveOptions,
  env: (name: string) => string | undefined,
  prefixes: readonly string[],
): { path: string; scope: ConfigScope }[] {
  const files: { path: string; scope: ConfigScope }[] = [];
  const add = (path: string | undefined, scope: ConfigScope) => {
    if (path && isAbsolute(path) && !files.some((f) => f.path === path)) {
      files.push({ path, scope });
    }
  };
  add(env("GIT_CONFIG_SYSTEM"), "system");
  add("/etc/gitconfig", "system");
  for (const prefix of prefixes) {
    add(prefix === "/usr" ? "/etc/gitconfig" : join(prefix, "etc", "gitconfig"), "system");
  }
  add(env("GIT_CONFIG_GLOBAL"), "global");
  const xdg = env("XDG_CONFIG_HOME");
  if (xdg) add(join(xdg, "git", "config"), "global");
  // And what the user's startup files set them to: penguin started without them (cron, an IDE,
  // bash where the user's shell is zsh) read another global configuration than the user's git
  // will, and the `core.hooksPath` there ran the model's hook at the user's commit (attack round
  // 32 w01). Protecting more is the safe side.
  for (const e of startupValues(opts.home, ["GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL"])) {
    add(
      e["GIT_CONFIG_SYSTEM"] ?? e["GIT_CONFIG_GLOBAL"],
      e["GIT_CONFIG_SYSTEM"] ? "system" : "global",
    );
  }
  for (const e of startupValues(opts.home, ["XDG_CONFIG_HOME"])) {
    add(join(e["XDG_CONFIG_HOME"]!, "git", "config"), "global");
  }
  if (opts.home) {
    add(join(opts.home, ".config", "git", "config"), "global");
    add(join(opts.home, ".gitconfig"), "global");
  }
  return files;
}

/** A key as git canonicalizes it: section and name lower-cased, a subsection kept. */
function canonicalKey(key: string): string {
  const first = key.indexOf(".");
  const last = key.lastIndexOf(".");
  if (first < 0) return key.toLowerCase();
  return key.slice(0, first).toLowerCase() + key.slice(first, last) +
    key.slice(last).toLowerCase();
}

/**
 * The words of `GIT_CONFIG_PARAMETERS`: single-quoted strings (`'\\''` is a
 * quote) separated by spaces, where `'key'='value'` (or the older
 * `'key=value'`) is one assignment.
 */
export function parseConfigParameters(text: string): { key: string; value: string | null }[] {
  const out: { key: string; value: string | null }[] = [];
  let i = 0;
  const quoted = (): string | undefined => {
    let s = "";
    let any = false;
    while (text[i] === "'" || text[i] === "\\") {
      any = true;
      if (text[i] === "\\") {
        s += text[i + 1] ?? "";
        i += 2;
        continue;
      }
      const end = text.indexOf("'", i + 1);
      if (end < 0) return undefined;
      s += text.slice(i + 1, end);
      i = end + 1;
    }
    return any ? s : undefined;
  };
  while (i < text.length) {
    if (/\s/.test(text[i]!)) {
      i++;
      continue;
    }
    const key = quoted();
    if (key === undefined) break; // not git's format: stop
    if (text[i] === "=") {
      i++;
      out.push({ key, value: quoted() ?? "" });
    } else {
      const eq = key.indexOf("=");
      out.push(eq < 0 ? { key, value: null } : { key: key.slice(0, eq), value: key.slice(eq + 1) });
    }
  }
  return out;
}

/** The assignments the environment makes for every git command, in git's order. */
export function envConfigEntries(env: (name: string) => string | undefined): ConfigEntry[] {
  const out: ConfigEntry[] = [];
  const count = Number.parseInt(env("GIT_CONFIG_COUNT") ?? "", 10);
  for (let n = 0; Number.isFinite(count) && n < Math.min(count, 10_000); n++) {
    const key = env(`GIT_CONFIG_KEY_${n}`);
    if (!key) continue;
    const value = env(`GIT_CONFIG_VALUE_${n}`) ?? "";
    out.push({ key: canonicalKey(key), value, file: `GIT_CONFIG_KEY_${n}`, line: 0 });
  }
  const params = env("GIT_CONFIG_PARAMETERS");
  if (params) {
    for (const p of parseConfigParameters(params)) {
      out.push({
        key: canonicalKey(p.key),
        value: p.value,
        file: "GIT_CONFIG_PARAMETERS",
        line: 0,
      });
    }
  }
  return out;
}

/** Escape `c` for a regular expression. */
function esc(c: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(c) ? `\\${c}` : c;
}

/**
 * Git's wildmatch with `WM_PATHNAME` as a regular expression: `*` and `?`
 * stop at `/`, `**` crosses it, `[…]` and `[!…]` are classes.
 */
export function wildmatchRegExp(pattern: string, ignoreCase = false): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*") {
      if (pattern[i + 1] === "*") {
        const atStart = i === 0 || pattern[i - 1] === "/";
        i++;
        if (atStart && pattern[i + 1] === "/") {
          re += "(?:.*/)?";
          i++;
        } else re += ".*";
      } else re += "[^/]*";
    } else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const close = pattern.indexOf("]", i + 2);
      if (close < 0) {
        re += "\\[";
        continue;
      }
      let body = pattern.slice(i + 1, close);
      const negate = body.startsWith("!") || body.startsWith("^");
      if (negate) body = body.slice(1);
      re += `[${negate ? "^/" : ""}${body.replace(/[\\\]]/g, "\\$&")}]`;
      i = close;
    } else if (c === "\\" && i + 1 < pattern.length) {
      re += esc(pattern[++i]!);
    } else re += esc(c);
  }
  return new RegExp(`^${re}$`, ignoreCase ? "i" : "");
}

/** Expand a path value as git does (`~/`, `%(prefix)/`); undefined when it cannot. */
function expandPath(value: string, home: string | undefined, prefixes: string[]): string[] {
  if (value === "~" || value.startsWith("~/")) {
    return home ? [home + value.slice(1)] : [];
  }
  if (value.startsWith("~")) {
    // `~user/`: that account's home, as git expands it (attack round 32 u02: an include of
    // `~alice/proj/team.gitconfig` was left writable, and its fsmonitor ran).
    const m = /^~([^/]+)(\/.*)?$/s.exec(value);
    const h = m ? accountHome(m[1]!) : undefined;
    return h !== undefined ? [h + (m![2] ?? "")] : [];
  }
  if (value.startsWith("%(prefix)/")) return prefixes.map((p) => join(p, value.slice(10)));
  return [value];
}

/**
 * Resolve the configuration git reads for the work tree of `opts`: every
 * file (read, missing or unreadable) and every assignment.
 */
export async function resolveGitConfig(opts: ResolveOptions): Promise<ResolvedGitConfig> {
  const env = opts.env ?? ownEnv;
  const read = opts.read ?? readConfigFile;
  const prefixes = await gitPrefixes(env("PATH"));
  const out: ResolvedGitConfig = { entries: [], files: [], errors: [] };

  const load = async (
    file: Omit<ConfigFile, "state">,
    depth: number,
  ): Promise<void> => {
    const text = await read(file.path);
    const state = text === undefined ? "missing" : text === "unreadable" ? "unreadable" : "read";
    out.files.push({ ...file, state });
    if (state !== "read") return;
    const parsed = parseGitConfig(text as string, file.path);
    out.errors.push(...parsed.errors);
    for (const e of parsed.entries) await follow(e, depth);
  };

  /** Record `e`; load the file it includes, if any. */
  const follow = async (e: ConfigEntry, depth: number): Promise<void> => {
    out.entries.push(e);
    const inc = /^include(?:if\.(.*))?\.path$/s.exec(e.key);
    if (!inc || e.value === null || e.value === "") return;
    if (depth >= MAX_INCLUDE_DEPTH) {
      out.errors.push(`${e.file}:${e.line}: includes nested deeper than ${MAX_INCLUDE_DEPTH}`);
      return;
    }
    const paths = expandPath(e.value, opts.home, prefixes);
    if (paths.length === 0) out.errors.push(`${e.file}:${e.line}: cannot expand ${e.value}`);
    for (const p of paths) {
      // git refuses a relative include from the environment: there is no file to start from.
      if (e.line === 0 && !isAbsolute(p)) continue;
      // As the kernel resolves it: `../tools/../x` goes where the link `tools` leads.
      const { path, links, via } = await physicalPath(dirname(e.file), p);
      if (out.files.some((f) => f.path === path && f.from === e.file)) continue;
      await load({ path, scope: "include", key: e.key, from: e.file, links, via }, depth + 1);
    }
  };

  for (const f of baseFiles(opts, env, prefixes)) await load(f, 0);
  const common = opts.commonDir ?? opts.gitDir;
  if (common) {
    const before = out.entries.length;
    await load({ path: join(common, "config"), scope: "repository" }, 0);
    const worktreeConfig = out.entries.slice(before).some((e) =>
      e.key === "extensions.worktreeconfig" && gitBoolean(e.value) !== false
    );
    if (worktreeConfig && opts.gitDir) {
      await load({ path: join(opts.gitDir, "config.worktree"), scope: "repository" }, 0);
    }
  }
  for (const e of envConfigEntries(env)) await follow(e, 0);
  return out;
}
