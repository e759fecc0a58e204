/**
 * The home directory's rule for sandboxed commands and the file tools: which
 * parts of `$HOME` are the user's and stay out of the model's reach.
 *
 * - Outside the workspace, the home directory is hidden (an empty read-only
 *   tmpfs over it) except the toolchain directories of
 *   {@linkcode TOOLCHAIN_PATHS} (language runtimes and package caches),
 *   shown read-only; a workspace policy may name more (`home_readable`).
 *   The shell startup files ({@linkcode SHELL_STARTUP_PATHS}) are shown
 *   only to the login shell of the shell snapshot.
 *   Credentials inside a shown directory (`~/.gem/credentials`) stay hidden.
 * - A workspace (or any writable root) that is, or contains, the user's home
 *   or another user's home directory is refused unless penguin is started
 *   with `--allow-home-workspace` ({@linkcode ALLOW_HOME_WORKSPACE_FLAG}).
 *   With the flag, such a home is "sealed": its top level is read-only (so
 *   no startup file can be changed or created: `.bashrc`, `.profile`,
 *   `.gitconfig`, `.npmrc`…), every top-level dot-entry is hidden (the
 *   user's configuration and credentials) except the toolchain paths, shown
 *   read-only (the startup files, and what they source in the home, only to
 *   the shell snapshot's login shell), its other subdirectories stay writable except
 *   `bin`, `go/bin`, `go/pkg/mod` and the `PATH` directories inside it (a
 *   missing one is held by a stand-in), and the credentials stay hidden.
 * - The account's own home ({@linkcode accountHome}, from `/etc/passwd`) is
 *   hidden and counts as a home like `$HOME` when the two differ.
 * - Wherever a startup file of `$HOME` really lies (a dotfiles repository
 *   the home links to), and what the startup files source
 *   ({@linkcode sourcedPaths}), it is read-only to the model.
 *
 * @module
 */
import { basename, dirname, join, normalize } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { HOME_SECRET_PATTERNS } from "./policy.ts";
import { inside, realOf } from "./_paths.ts";
import {
  MAX_NAMED,
  MAX_NAMED_PER_FILE,
  type StartupTextPaths,
  startupTextPaths,
} from "./_source_lines.ts";
import { lookTime, settledStamp, stampNow } from "./_file_stamps.ts";
import {
  existsNow,
  listDirNow,
  lstatOrNone,
  readRegularNow,
  readTextNow,
  statOrNone,
} from "./_look.ts";
import { walkAsKernel } from "./_link_walk.ts";

/** The flag that lets a workspace be or contain a home directory. */
export const ALLOW_HOME_WORKSPACE_FLAG = "--allow-home-workspace";

/**
 * Toolchain directories under `$HOME`, relative: shown read-only to
 * sandboxed commands although the home directory is hidden. A last segment
 * ending in `*` matches the names that start with what precedes it.
 */
export const TOOLCHAIN_PATHS: readonly string[] = [
  ".cargo/bin",
  ".cargo/env",
  ".cargo/registry",
  ".cargo/git",
  ".rustup",
  ".nvm",
  ".npm",
  ".volta",
  ".fnm",
  ".deno",
  ".cache/deno",
  ".bun/bin",
  ".bun/install/cache",
  ".pyenv",
  ".local/bin",
  ".local/lib/python*",
  ".local/share/uv",
  ".cache/pip",
  ".cache/uv",
  ".cache/pypoetry",
  ".cache/yarn",
  ".cache/go-build",
  "go/bin",
  "go/pkg/mod",
  ".m2/repository",
  ".gradle/caches",
  ".gradle/wrapper",
  ".sdkman/candidates",
  ".sdkman/bin",
  ".gem",
  ".rbenv",
  ".local/share/pnpm",
  ".dotnet",
  ".nuget/packages",
  ".ghcup",
  ".cabal/bin",
  ".cabal/packages",
  ".elan",
  ".opam",
  ".asdf",
  ".local/share/mise",
];

/**
 * Shell startup files under `$HOME`: shown read-only only to the login shell
 * that takes the shell snapshot (`login_env.ts`, which runs them in the
 * sandbox); hidden from commands, since users export tokens there (what the
 * snapshot replays is filtered of credential-like names, see `env.ts`).
 */
export const SHELL_STARTUP_PATHS: readonly string[] = [
  ".profile",
  ".bash_profile",
  ".bash_login",
  ".bashrc",
  ".bash_aliases",
  ".bashrc.d",
  ".profile.d",
  ".zshenv",
  ".zprofile",
  ".zshrc",
  ".zlogin",
];

/**
 * The toolchains and shell startup files: what a sealed home shows read-only,
 * and what the login shell of the shell snapshot sees of a hidden home
 * (commands see only {@linkcode TOOLCHAIN_PATHS} of a hidden home).
 */
export const HOME_READABLE_DEFAULTS: readonly string[] = [
  ...TOOLCHAIN_PATHS,
  ...SHELL_STARTUP_PATHS,
];

/**
 * Names whose presence at the top of a directory marks it as someone's
 * home: shell and git startup files, and `.ssh`.
 */
export const STARTUP_NAMES: readonly string[] = [
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".profile",
  ".zshrc",
  ".zprofile",
  ".zshenv",
  ".zlogin",
  ".cshrc",
  ".tcshrc",
  ".kshrc",
  ".gitconfig",
  ".config/git",
  ".config/fish",
  // What a desktop session and systemd's user manager run at the next login (attack round 28 f07).
  ".config/autostart",
  ".config/systemd/user",
  ".config/environment.d",
  ".ssh",
];

/**
 * Subdirectories of a sealed home that stay read-only (besides the
 * toolchain directories and the `PATH` directories in it): what shells,
 * git, editors and desktop sessions load or run. The dot-entries among them
 * are hidden whole in a sealed home; the list names them for the file
 * tools' refusal.
 */
export const SEALED_DIRS: readonly string[] = [
  ".ssh",
  ".config",
  ".local/bin",
  ".local/share/applications",
  ".local/share/systemd",
  "bin",
  ".oh-my-zsh",
  ".zsh",
  ".bashrc.d",
  ".profile.d",
  ".vim",
  ".emacs.d",
  ".gnupg",
  ".git-templates",
  ".cargo",
  ".npm-global",
];

/**
 * Top-level files of a sealed home shown read-only besides the toolchain and
 * shell startup paths: the other startup files programs read (not secrets).
 * `.gitconfig` is not among them: it is hidden, and commands see a sanitized
 * copy in its place (`git_identity.ts`).
 */
export const SEALED_SHOWN: readonly string[] = [".cshrc", ".tcshrc", ".kshrc"];

/** The text of the file `path`; empty when it cannot be read. */
function readTextOr(path: string): string {
  try {
    return readTextNow(path);
  } catch {
    return "";
  }
}

/**
 * Other files under `$HOME` that shells and desktop sessions run or read on
 * this machine (at logout, in other shells, at a graphical login): never
 * shown, but read like the startup files for what they source and name.
 * A directory stands for the files in it.
 */
export const OTHER_STARTUP_PATHS: readonly string[] = [
  ".bash_logout",
  ".zlogout",
  ".login",
  ".logout",
  ".mkshrc",
  ".yashrc",
  ".xsessionrc",
  ".xsession",
  ".xprofile",
  ".xinitrc",
  ".pam_environment",
  ".config/fish/config.fish",
  ".config/fish/conf.d",
  ".config/environment.d",
  ".config/plasma-workspace/env",
  // readline's: a macro bound to Return adds a command to the user's next interactive line
  // (attack rounds 22 and 23, concgit a10d and c11b).
  ".inputrc",
  // What editors, debuggers, database shells, multiplexers and interpreters run when the user
  // starts them (`:!cmd`, `shell`, `\!`, `run-shell`, code): a dotfiles workspace linking one
  // let the model's text run at the user's next `vim`, `gdb`, `psql`, `tmux` (attack round 24
  // concgit c08a).
  ...[".vimrc", ".gvimrc", ".exrc", ".config/nvim/init.vim", ".config/nvim/init.lua"],
  ...[".emacs", ".emacs.el", ".emacs.d/init.el", ".gdbinit", ".config/gdb/gdbinit"],
  ...[".lldbinit", ".psqlrc", ".sqliterc", ".tmux.conf", ".config/tmux/tmux.conf"],
  ...[".screenrc", ".mailcap", ".Rprofile", ".ghci", ".irbrc", ".pryrc"],
  ...[".julia/config/startup.jl", ".ipython/profile_default/startup", ".curlrc", ".wgetrc"],
  // The other files the same programs read at start: less's `#env` (`LESSOPEN=|cmd`, run by
  // git's pager), emacs's early init, bash's completions, a prompt's commands (starship's
  // `[custom]`), and the directory a `~/.bashrc` loop sources (attack round 25 concgit c11, c25).
  ...[".lesskey", ".config/lesskey", ".emacs.d/early-init.el", ".bash_completion"],
  ...[".config/starship.toml", ".bashrc.d"],
];

/**
 * Directories of startup files, read-only as a whole where they lie in a
 * writable root like the files above, but not read for what they source and
 * name: an editor's plugin tree holds thousands of files. vim's and neovim's
 * (a vimrc there, every plugin run at start), emacs's, bash's completions,
 * fish's functions and tmux's (attack round 25 concgit c11, c25).
 */
export const STARTUP_DIRS: readonly string[] = [
  ...[".vim", ".config/nvim", ".config/emacs", ".local/share/bash-completion"],
  ...[".config/fish/functions", ".config/fish/completions", ".config/tmux"],
  // A desktop session's autostart entries and systemd's user units: each runs a command at the
  // user's next login (attack round 28 f07).
  ...[".config/autostart", ".config/systemd/user"],
];

/**
 * The entries of the startup lists that are directories: a stand-in for a
 * missing one is an empty directory, not an empty file.
 */
export const STARTUP_DIRECTORY_ENTRIES: ReadonlySet<string> = new Set([
  ...STARTUP_DIRS,
  ...[".config/git", ".config/fish", ".config/fish/conf.d", ".config/environment.d"],
  ...[".config/plasma-workspace/env", ".bashrc.d", ".profile.d", ".ssh"],
  ".ipython/profile_default/startup",
]);

/**
 * Every file whose text is read for what it sources and names
 * ({@linkcode startupReferences}): the shell startup files, the other
 * startup files shown in a sealed home, and {@linkcode OTHER_STARTUP_PATHS}.
 */
export const STARTUP_TEXT_PATHS: readonly string[] = [
  ...SHELL_STARTUP_PATHS,
  ...SEALED_SHOWN,
  ...OTHER_STARTUP_PATHS,
];

/**
 * The home directory of the account penguin runs as, from `/etc/passwd`
 * (whatever `$HOME` says), or undefined when it cannot be read or is `/`.
 */
export function accountHome(): Promise<string | undefined> {
  return Promise.resolve(accountHomeNow());
}

function accountHomeNow(): string | undefined {
  let uid: number | null;
  try {
    uid = Deno.uid();
  } catch {
    return undefined;
  }
  if (uid === null) return undefined;
  const text = readTextOr("/etc/passwd");
  for (const line of text.split("\n")) {
    const f = line.split(":");
    if (f.length < 7 || f[2] !== String(uid)) continue;
    const dir = f[5]!;
    return dir.startsWith("/") && dir !== "/" ? dir : undefined;
  }
  return undefined;
}

/** What the startup files of a home pull in: see {@linkcode startupReferences}. */
export interface StartupReferences {
  /** Absolute paths sourced with `.`/`source`, whether or not they exist. */
  sourced: string[];
  /**
   * Existing files strictly under the home (or a directory of `within`) that
   * the files read name anywhere, not sourced.
   */
  named: string[];
  /**
   * Missing paths strictly under the home (or a directory of `within`) that the files read name anywhere
   * (in every spelling a shell could mean), not sourced: a stand-in holds
   * each, so that no file appears where a host shell may later read one.
   */
  missing: string[];
  /** The paths of `missing` that are whole words as bash reads them (not a cut, not as written). */
  exact: string[];
  /** Sourced or named paths spelled with a `..` step, as written (`_source_lines.ts`). */
  dotted: string[];
  /** The file that first sourced or named each path (of every list above). */
  namedBy: Map<string, string>;
  /**
   * Existing files (or directories of them) sourced or named whose text was
   * not read: left when the files read reached the limit, or larger than
   * {@linkcode MAX_STARTUP_FILE}. What they source or name is unknown
   * (`_startup_cap.ts` decides whether that matters).
   */
  unfollowed: Unfollowed[];
}

/** A file {@linkcode startupReferences} did not read, and why. */
export interface Unfollowed {
  /** The path as sourced or named. */
  path: string;
  /** Why its text was not read: past the limit of files read, or too large. */
  why: "limit" | "size";
}

/** The most read of one startup file: a larger one is not read (and counts as unfollowed). */
export const MAX_STARTUP_FILE = 1 << 20;

/** The most files {@linkcode startupReferences} reads for one home. */
export const STARTUP_FILES_READ = 64;

/** The longest name of one path component (`NAME_MAX`): a longer one can be neither made nor opened. */
const NAME_MAX = 255;

/**
 * Whether the missing path `p` could be made: each component at most
 * {@linkcode NAME_MAX} bytes, and its nearest existing ancestor a directory.
 */
function couldBeMade(p: string): boolean {
  const bytes = new TextEncoder();
  if (p.includes("\0") || p.split("/").some((c) => bytes.encode(c).length > NAME_MAX)) return false;
  for (let d = dirname(p);; d = dirname(d)) {
    const info = statOrNone(d);
    if (info !== undefined) return info.isDirectory;
    if (d === "/") return false;
  }
}

/** The refusal when the startup files name more paths than penguin holds. */
function tooManyNames(file: string, limit: number): PenguinError {
  return new PenguinError(
    "runtime",
    `Cannot sandbox: the shell startup files of the home name more than ${limit} paths ` +
      `(reading "${file}"), more than penguin keeps out of the model's reach; a command could ` +
      `create or change a file the host's shell later reads. Shorten the startup files, or use a ` +
      `workspace that holds no home directory`,
  );
}

/**
 * What the startup files of `home` pull in (see `_source_lines.ts`): the
 * paths a `source` or `.` command names (`~/`, `$HOME/` and `${HOME}/`
 * expanded, in quotes too; `\. f`, `builtin source f`, `command . f`,
 * `source -- f`, continued lines, after a redirection), and the paths under
 * the home that any word names anywhere (`. <(cat ~/f)`, `source /dev/stdin
 * < ~/f`, `eval "$(cat ~/f)"`, `X=~/f`, strings run later, comments), in
 * every spelling a shell could mean: the existing files among them, and the
 * missing ones. Followed from file to file, the sourced files first, then
 * the named ones (at most `limit` files read; the existing ones left are
 * `unfollowed`). Paths under the directories of `within` (the writable roots
 * of a sandbox) are named like those under the home. The files read first are
 * those of {@linkcode STARTUP_TEXT_PATHS} (logout, fish, X session files
 * too). A variable the file sets to a path, a glob in a path's last component and a `ZDOTDIR`
 * are followed (`_source_lines.ts`); paths built from other variables are not seen.
 * Throws when a file names more than `MAX_NAMED_PER_FILE` paths, or all
 * together more than {@linkcode MAX_NAMED}.
 */
export function startupReferences(
  home: string,
  limit = STARTUP_FILES_READ,
  within: readonly string[] = [],
): Promise<StartupReferences> {
  return Promise.resolve(startupReferencesNow(home, limit, within));
}

function startupReferencesNow(
  home: string,
  limit: number,
  within: readonly string[],
): StartupReferences {
  const at = lookTime(); // before every file's stat (and the home's listing)
  // Most are missing: the home listed once tells them without a failed look-up each.
  const absent = absentFromHome(home, STARTUP_TEXT_PATHS);
  const queue = STARTUP_TEXT_PATHS.filter((n) => !absent(n)).map((n) => join(home, n));
  const later: string[] = [];
  const seen = new Set<string>();
  const sourced: string[] = [];
  const named = new Set<string>();
  const exact = new Set<string>();
  const dotted = new Set<string>();
  const namedBy = new Map<string, string>();
  const unfollowed: Unfollowed[] = [];
  let read = 0;
  while ((queue.length > 0 || later.length > 0) && read < limit) {
    const isNamed = queue.length === 0;
    const file = isNamed ? later.shift()! : queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const info = statOrNone(file);
    if (info?.isDirectory && !isNamed) {
      // `.bashrc.d`: every file in it is sourced by the usual loop.
      read++;
      for (const e of listDirNow(file)) queue.push(join(file, e.name));
      continue;
    }
    if (!info?.isFile) continue;
    if (info.size > MAX_STARTUP_FILE) {
      unfollowed.push({ path: file, why: "size" });
      continue;
    }
    read++;
    const found = startupTextOf(file, info, at, home, within);
    if (found.overflow) throw tooManyNames(file, MAX_NAMED_PER_FILE);
    for (const p of [...found.sourced, ...found.named, ...found.dotted]) {
      if (!namedBy.has(p)) namedBy.set(p, file);
    }
    for (const p of found.dotted) {
      if (!dotted.has(p) && dotted.size >= MAX_NAMED) throw tooManyNames(file, MAX_NAMED);
      dotted.add(p);
      // The file the kernel reads for it (`a` followed before `..`) is read on as well: read as
      // text, the path would be the joined one.
      const target = walkAsKernel(p).target;
      if (target === undefined || target === normalize(p)) continue;
      (found.sourced.includes(normalize(p)) ? queue : later).push(target);
    }
    for (const p of found.sourced) {
      if (!sourced.includes(p)) sourced.push(p);
      queue.push(p);
    }
    for (const p of found.exact) exact.add(p);
    for (const p of found.named) {
      if (named.has(p)) continue;
      if (named.size >= MAX_NAMED) throw tooManyNames(file, MAX_NAMED);
      named.add(p);
      later.push(p);
    }
  }
  for (const p of new Set([...queue, ...later])) {
    if (!seen.has(p) && statOrNone(p) !== undefined) unfollowed.push({ path: p, why: "limit" });
  }
  const { files, missing } = splitNamed(named, sourced);
  const exactMissing = missing.filter((p) => exact.has(p));
  return {
    sourced,
    named: files,
    missing,
    exact: exactMissing,
    dotted: [...dotted],
    namedBy,
    unfollowed,
  };
}

/** A startup file's paths as last parsed, with the file's settled stamp then (`_file_stamps.ts`). */
const parsedStartup = new Map<string, { stamp: string; found: StartupTextPaths }>();

/** Startup files whose parse is kept at most (a bound on what a process holds). */
const PARSED_KEPT = 256;

/**
 * The paths the startup file `file` (`info`: its `stat`, taken after `at`) sources
 * and names ({@linkcode startupTextPaths}): parsed again only when the file
 * is not the one last parsed for the same `home` and `within`, unchanged
 * since (device, inode, size and times, `_file_stamps.ts`). A plan runs before
 * every command and the startup files rarely change; one that a command can
 * write (a link into a writable root) is stamped and compared all the same.
 */
function startupTextOf(
  file: string,
  info: Deno.FileInfo,
  at: number,
  home: string,
  within: readonly string[],
): StartupTextPaths {
  const key = JSON.stringify([file, home, within]);
  const hit = parsedStartup.get(key);
  if (hit !== undefined && hit.stamp === stampNow(info)) return hit.found;
  // Opened without blocking: a FIFO swapped in for the file must not stop the plan (attack round 22).
  const read = readRegularNow(file, MAX_STARTUP_FILE);
  const bytes = read instanceof Uint8Array ? read : undefined;
  const found = startupTextPaths(new TextDecoder().decode(bytes), home, within);
  // Stamped as it was before the read: a change during or after it shows in the next stamp.
  const stamp = settledStamp(info, at);
  if (stamp === undefined) parsedStartup.delete(key);
  else {
    if (parsedStartup.size >= PARSED_KEPT) parsedStartup.clear();
    parsedStartup.set(key, { stamp, found });
  }
  return found;
}

/** The named paths not sourced: the existing files among them, and the missing ones that could be made. */
function splitNamed(
  named: ReadonlySet<string>,
  sourced: readonly string[],
): { files: string[]; missing: string[] } {
  const files: string[] = [];
  const missing: string[] = [];
  for (const p of named) {
    if (sourced.includes(p)) continue;
    if (lstatOrNone(p) === undefined) {
      if (couldBeMade(p)) missing.push(p);
    } else if (statOrNone(p)?.isFile === true) files.push(p);
  }
  return { files, missing };
}

/**
 * The files that the startup files of `home` pull in with `source` or `.`
 * ({@linkcode startupReferences}): lexical absolute paths, whether or not
 * they exist.
 */
export async function sourcedPaths(home: string, limit = STARTUP_FILES_READ): Promise<string[]> {
  return (await startupReferences(home, limit)).sourced;
}

/** Parents of users' home directories; their entries holding startup files are homes too. */
const HOME_PARENTS: readonly string[] = ["/home", "/Users"];
/** Home directories of system accounts. */
const SYSTEM_HOMES: readonly string[] = ["/root", "/var/root"];

/** The first of {@linkcode STARTUP_NAMES} that `dir` holds, if any. */
export function startupFileIn(dir: string): string | undefined {
  for (const name of STARTUP_NAMES) {
    if (existsNow(join(dir, name))) return name;
  }
  return undefined;
}

/** A home directory a writable root holds, and why it counts as one. */
export interface HomeInRoot {
  /** Real path of the home directory. */
  dir: string;
  /** The root that is or contains it. */
  root: string;
  /** Why it is a home: `your home directory ($HOME)` or `a home directory holding .bashrc`. */
  why: string;
}

/**
 * The home directories that lie in `roots` (real paths): the user's home
 * (`home`, when it is not `/`), and the system's home directories (`/root`,
 * `/home/*`, `/Users/*`) that hold a startup file. Only facts the model
 * cannot change are read: the roots' own contents are not looked at (see
 * {@linkcode startupFileIn} for that).
 */
export async function homesInRoots(
  roots: readonly string[],
  home: string | undefined,
): Promise<HomeInRoot[]> {
  const out: HomeInRoot[] = [];
  const add = (dir: string, why: string) => {
    const root = roots.find((r) => inside(dir, r));
    if (root !== undefined && !out.some((h) => h.dir === dir)) out.push({ dir, root, why });
  };
  const homeReal = home ? await realOf(home) : undefined;
  if (homeReal !== undefined && homeReal !== "/") add(homeReal, "your home directory ($HOME)");
  const account = await accountHome();
  const accountReal = account ? await realOf(account) : undefined;
  if (accountReal !== undefined && accountReal !== "/") {
    add(accountReal, "your account's home directory (/etc/passwd)");
  }
  const candidates: string[] = [];
  for (const dir of SYSTEM_HOMES) if (roots.some((r) => inside(dir, r))) candidates.push(dir);
  for (const parent of HOME_PARENTS) {
    // Only a root that contains the parent can contain its entries.
    if (!roots.some((r) => inside(parent, r))) continue;
    try {
      for (const e of listDirNow(parent)) {
        if (e.isDirectory) candidates.push(join(parent, e.name));
      }
    } catch {
      // no such parent here
    }
  }
  for (const dir of candidates) {
    const real = await realOf(dir);
    if (real === undefined || real === "/") continue;
    const name = await startupFileIn(real);
    if (name !== undefined) add(real, `a home directory holding ${name}`);
  }
  return out;
}

/** The refusal for a home directory in a writable root without the flag. */
export function homeRefusal(h: HomeInRoot, workspace: string): PenguinError {
  const what = h.root === workspace ? "the workspace" : "the writable directory";
  const fact = h.dir === h.root ? `is ${h.why}` : `contains ${h.why} ("${h.dir}")`;
  return new PenguinError(
    "usage",
    `${what} "${h.root}" ${fact}: commands the model runs could rewrite its ` +
      `shell and git startup files, which later run on this machine. Use a project directory ` +
      `as the workspace, or start penguin with ${ALLOW_HOME_WORKSPACE_FLAG} (its startup ` +
      `files, credentials and toolchains then stay read-only or hidden to the model)`,
  );
}

/**
 * The entries of `patterns` (relative to `home`) that exist, as absolute
 * lexical paths; a last segment ending in `*` is matched against the
 * listing of its parent.
 */
export function expandHomePaths(
  home: string,
  patterns: readonly string[],
): string[] {
  const out: string[] = [];
  const absent = absentFromHome(home, patterns);
  for (const rel of patterns) {
    const abs = join(home, rel);
    const last = basename(abs);
    if (!last.endsWith("*")) {
      if (!absent(rel) && existsNow(abs)) out.push(abs);
      continue;
    }
    const prefix = last.slice(0, -1);
    try {
      for (const e of listDirNow(dirname(abs))) {
        if (e.name.startsWith(prefix)) out.push(join(dirname(abs), e.name));
      }
    } catch {
      // missing parent
    }
  }
  return out;
}

/** Printable ASCII: a name no file system folds or normalizes beyond letter case. */
const PLAIN_NAME = /^[\x20-\x7e]+$/;

/**
 * A cheap "certainly missing" test for the relative paths `patterns` under
 * `home` (most of the forty toolchain paths are missing in a given home, and
 * a failed look-up costs three times a found one): `home` is listed once, and
 * a path whose first name is not in the listing (in any letter case) is
 * missing. Answers false (look it up) whenever the listing cannot tell.
 */
export function absentFromHome(
  home: string,
  patterns: readonly string[],
): (rel: string) => boolean {
  if (patterns.length < 4) return () => false;
  let names: Set<string> | undefined;
  try {
    names = new Set(listDirNow(home).map((e) => e.name.toLowerCase()));
  } catch {
    return () => false;
  }
  return (rel) => {
    const first = rel.split("/")[0]!;
    if (first === "" || first === "." || first === ".." || !PLAIN_NAME.test(first)) return false;
    return !names.has(first.toLowerCase());
  };
}

/** Most entries a directory may have to be listed by {@linkcode absentAmong} instead of looked up. */
const ABSENT_LISTING_LIMIT = 4096;

/**
 * The same "certainly missing" test for absolute `paths` (a plan's hide list: a hundred and more
 * names, most missing, in a few directories): each directory holding four or more of them is
 * listed once, and a path whose name is not in its directory's listing (in any letter case) is
 * missing. Answers false (look it up) whenever the listing cannot tell: a directory holding
 * fewer, one that cannot be listed or holds more than {@linkcode ABSENT_LISTING_LIMIT} entries,
 * a name that is not plain ASCII.
 */
export function absentAmong(paths: readonly string[]): (path: string) => boolean {
  const wanted = new Map<string, number>();
  for (const p of paths) wanted.set(dirname(p), (wanted.get(dirname(p)) ?? 0) + 1);
  const listings = new Map<string, Set<string> | undefined>();
  const listing = (dir: string): Set<string> | undefined => {
    if (listings.has(dir)) return listings.get(dir);
    let names: Set<string> | undefined = new Set();
    // A directory its parent's listing lacks (`~/.config` in a home without one) holds nothing:
    // not listed, not even in a failed look-up.
    const up = dirname(dir);
    if (up !== dir && (wanted.get(up) ?? 0) >= 4 && PLAIN_NAME.test(basename(dir))) {
      const above = listing(up);
      if (above !== undefined && !above.has(basename(dir).toLowerCase())) {
        listings.set(dir, names);
        return names;
      }
    }
    try {
      for (const e of Deno.readDirSync(dir)) {
        // A name beyond plain ASCII may fold to a plain one on a case-folding directory (`.ſsh`
        // is `.ssh` there): such a listing tells nothing.
        if (names.size >= ABSENT_LISTING_LIMIT || !PLAIN_NAME.test(e.name)) {
          names = undefined;
          break;
        }
        names.add(e.name.toLowerCase());
      }
    } catch {
      names = undefined;
    }
    listings.set(dir, names);
    return names;
  };
  return (path) => {
    const dir = dirname(path);
    const name = basename(path);
    if ((wanted.get(dir) ?? 0) < 4 || dir === path || !PLAIN_NAME.test(name)) return false;
    if (name === "." || name === "..") return false;
    const names = listing(dir);
    return names !== undefined && !names.has(name.toLowerCase());
  };
}

/** Most entries listed per `*` directory of a secret pattern (a bound on plan time). */
const PATTERN_DIR_LIMIT = 512;

/**
 * The existing paths under `home` that the patterns of
 * {@linkcode HOME_SECRET_PATTERNS} name: each directory a pattern passes
 * through is listed once (at most {@linkcode PATTERN_DIR_LIMIT} entries), so
 * the cost is about one listing per installed version of a toolchain that is
 * there (measured: 0.8 ms for a home with nine pyenv versions, 10 ms for one
 * with a hundred versions across five managers).
 */
export function expandSecretPatterns(
  home: string,
  patterns: readonly string[] = HOME_SECRET_PATTERNS,
): Promise<string[]> {
  // Each directory is listed once (synchronously: a failed stat costs as much as a listing,
  // and a trip to the thread pool more), and only directories a pattern goes through.
  const listings = new Map<string, Map<string, boolean>>();
  /** Name → is a directory (links followed), for the entries of `dir` (at most the limit). */
  const list = (dir: string): Map<string, boolean> => {
    let names = listings.get(dir);
    if (names) return names;
    names = new Map();
    try {
      for (const e of listDirNow(dir)) {
        let isDir = e.isDirectory;
        if (e.isSymlink) {
          try {
            isDir = Deno.statSync(join(dir, e.name)).isDirectory;
          } catch {
            isDir = false;
          }
        }
        names.set(e.name, isDir);
        if (names.size >= PATTERN_DIR_LIMIT) break;
      }
    } catch {
      // not there, or not a directory
    }
    listings.set(dir, names);
    return names;
  };
  const out = new Set<string>();
  /** Add the existing paths `parts` names below `dir`. */
  const walk = (dir: string, parts: readonly string[]): void => {
    const [part, ...rest] = parts;
    const names = list(dir);
    const matches = part === "*" ? [...names.keys()] : names.has(part!) ? [part!] : [];
    for (const name of matches) {
      if (rest.length === 0) out.add(join(dir, name));
      else if (names.get(name)) walk(join(dir, name), rest);
    }
  };
  for (const pattern of patterns) walk(home, pattern.split("/"));
  return Promise.resolve([...out]);
}

/** True when `path` is, or lies below, what `pattern` (of {@linkcode HOME_SECRET_PATTERNS}) names in `home`. */
export function secretPatternCovers(path: string, home: string, pattern: string): boolean {
  if (!inside(path, home) || path === home) return false;
  const rel = path.slice(home.length + (home.endsWith("/") ? 0 : 1)).split("/");
  const parts = pattern.split("/");
  if (rel.length < parts.length) return false;
  return parts.every((p, i) => p === "*" ? rel[i] !== "" && rel[i] !== ".." : p === rel[i]);
}

/**
 * The home directories sealed in a plan over `roots` when the flag allows
 * them: those of {@linkcode homesInRoots}, and the workspace when it holds
 * a startup file itself (a dotfiles repository, a copy of a home). Real paths.
 */
export async function sealedHomes(
  roots: readonly string[],
  workspace: string,
  home: string | undefined,
): Promise<HomeInRoot[]> {
  const out = await homesInRoots(roots, home);
  if (!out.some((h) => h.dir === workspace)) {
    const name = await startupFileIn(workspace);
    if (name !== undefined) {
      out.push({ dir: workspace, root: workspace, why: `a directory holding ${name}` });
    }
  }
  return out;
}
