/**
 * The workspace's git directory as seen by the model: one rule, shared by the
 * command sandbox (`plan.ts` turns it into mounts) and the file tools
 * (`lib/tools/workspace_path.ts` turns it into refusals).
 *
 * The host's `git` reads its configuration, hooks and redirections from the
 * git directory and runs commands named there (`core.fsmonitor`, hooks,
 * `core.sshCommand`…) outside any sandbox. So nothing the model writes may
 * change them:
 *
 * - `read-only` (the default): the whole git directory is read-only.
 * - `writable` (`"git": "writable"` in penguin.jsonc, or `--git-writable`):
 *   the object and ref stores open up so commands can commit (`objects/`,
 *   `refs/`, `HEAD`, `index`, `logs/`, `packed-refs`, `*_HEAD`,
 *   `COMMIT_EDITMSG`…), while every entry that configures or redirects git
 *   ({@linkcode GIT_GUARDED_ENTRIES}) stays read-only, and the missing ones
 *   cannot be created.
 *
 * The workspace's `.git` may be a directory or a `gitdir:` file (a linked
 * worktree or a submodule checkout). The file itself is always protected; the
 * directory it names, and the common directory a `commondir` file names, are
 * git directories under the same rule when they lie in a writable root. A
 * missing `.git` at the workspace root cannot be created at all: a model
 * could otherwise plant a repository whose config runs code on the user's
 * next `git status` there (the user runs `git init` to give the model one).
 *
 * Not covered: `.git` entries below the workspace root (nested repositories,
 * submodule checkouts) — see docs/confinement.md, "Git".
 *
 * @module
 */
import { readRegularTextNow } from "./_look.ts";
import { isAbsolute, join, normalize } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { physicalPath } from "./git_path.ts";
import { isEmptyDir, realDir } from "./_paths.ts";

/** How far the model may change the workspace's git directory. */
export type GitAccess = "read-only" | "writable";

/** Every {@linkcode GitAccess}, for validation and help texts. */
export const GIT_ACCESS_MODES: readonly GitAccess[] = ["read-only", "writable"];

/** How a user opens the git directory (named in refusals). */
export const GIT_WRITABLE_HINT =
  `pass --git-writable or set "git": "writable" in penguin.jsonc to let commands commit`;

/** A guarded entry of a git directory and what stands in for it while it is missing. */
export interface GuardedEntry {
  /** Path relative to the git directory. */
  rel: string;
  /** A directory or a file. */
  kind: "dir" | "file";
  /**
   * For a missing file: the inert content of the read-only placeholder that
   * keeps the name from being created (git must read it as "no setting").
   * Absent: git never reads this name in a main git directory, so no
   * placeholder is needed.
   */
  placeholder?: string;
  /** Why it stays read-only, when not because it configures git (for refusals). */
  why?: string;
}

/** Why a rebase or sequencer state directory stays read-only. */
const TODO_WHY =
  "holds the todo list of a rebase, cherry-pick or revert, whose exec lines the user's next git rebase --continue runs outside the sandbox; it stays read-only even with --git-writable, so commands cannot rebase, or cherry-pick or revert a range, in the sandbox (the user can)";

/**
 * Entries of a git directory that configure git or redirect it elsewhere:
 * read-only in every mode. `commondir` redirects the whole repository,
 * `gitdir` names a worktree, `modules/` and `worktrees/` hold other git
 * directories with their own config and hooks, `info/` holds attributes,
 * excludes and sparse-checkout patterns, `remotes/` and `branches/` are
 * legacy remote definitions, and `objects/info/` holds `alternates` and
 * `http-alternates`, which redirect object reads. `rebase-merge/`,
 * `rebase-apply/` and `sequencer/` hold the state of a rebase, `am`,
 * cherry-pick or revert in progress: a todo list with `exec` lines the
 * user's `git rebase --continue` would run, so commands can neither start
 * nor continue one (the stand-in makes git report one in progress).
 */
export const GIT_GUARDED_ENTRIES: readonly GuardedEntry[] = [
  { rel: "config", kind: "file", placeholder: "" },
  { rel: "config.worktree", kind: "file", placeholder: "" },
  // "." names the git directory itself: the same repository git finds without the file.
  { rel: "commondir", kind: "file", placeholder: "." },
  { rel: "gitdir", kind: "file" },
  { rel: "hooks", kind: "dir" },
  { rel: "info", kind: "dir" },
  { rel: "modules", kind: "dir" },
  { rel: "worktrees", kind: "dir" },
  { rel: "remotes", kind: "dir" },
  { rel: "branches", kind: "dir" },
  { rel: "objects/info", kind: "dir" },
  { rel: "rebase-merge", kind: "dir", why: TODO_WHY },
  { rel: "rebase-apply", kind: "dir", why: TODO_WHY },
  { rel: "sequencer", kind: "dir", why: TODO_WHY },
];

/** Basenames refused anywhere inside a git directory, whatever the mode. */
const GUARDED_BASENAMES = ["config", "config.worktree", "commondir", "gitdir"];

/** The workspace's git layout, resolved against the file system. */
export interface GitLayout {
  /** `<workspace>/.git`. */
  dotGit: string;
  /** What `<workspace>/.git` is (a symlink counts as what it leads to). */
  kind: "dir" | "file" | "missing" | "other";
  /**
   * Real paths of the git directories in force: the one `.git` is or names,
   * then its common directory when a `commondir` file names another one.
   * Only existing directories.
   */
  gitDirs: string[];
  /**
   * The symbolic links the `.git` file's path and the `commondir` path went
   * through (git follows them; the model may re-point one inside a writable root).
   */
  links?: string[];
}

function statOrUndefined(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.statSync(path);
  } catch (err) {
    if (
      err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory ||
      err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied
    ) return undefined;
    throw err;
  }
}

/** git refuses a `.git` file larger than this (4 × PATH_MAX); penguin reads up to it and more. */
const MAX_POINTER_BYTES = 1 << 20;

function readSmall(path: string): Promise<string | undefined> {
  // Opened without blocking: a FIFO named `commondir` hung the walk after a command.
  return Promise.resolve(readRegularTextNow(path, MAX_POINTER_BYTES));
}

/** `text` without its trailing newlines and carriage returns: all git strips from a pointer file. */
function chompPointer(text: string): string {
  let end = text.length;
  while (end > 0 && (text[end - 1] === "\n" || text[end - 1] === "\r")) end--;
  return text.slice(0, end);
}

/**
 * The path a `.git` file names, exactly as git reads it: the text must start
 * with `gitdir: ` and the rest, without trailing newlines, is the path
 * (spaces kept); undefined when git would refuse it.
 */
export function parseGitdirFile(text: string): string | undefined {
  // git strips the newlines from the whole file, then reads it as a C string: a NUL ends it
  // (`gitdir: ../X/evil\0junk` names `../X/evil`; attack round 18 concgit B1).
  const body = cutAtNul(chompPointer(text));
  if (!body.startsWith("gitdir: ")) return undefined;
  const path = body.slice("gitdir: ".length);
  return path === "" ? undefined : path;
}

/** `text` up to its first NUL: what git, reading it as a C string, sees. */
function cutAtNul(text: string): string {
  const at = text.indexOf("\0");
  return at < 0 ? text : text.slice(0, at);
}

/**
 * Why a path a `.git` or `commondir` file names (`named`, as git reads it, from a file in
 * `base`) may lead git elsewhere than penguin: through `/proc` or `/dev` (`/proc/self/cwd`,
 * `/dev/fd/…`), which each process resolves to its own (attack round 18 concgit B2).
 */
export function readerDependentPointer(base: string, named: string): string | undefined {
  const full = isAbsolute(named) ? named : join(base, named);
  const norm = normalize(full);
  for (const top of ["/proc", "/dev"]) {
    if (full === top || full.startsWith(`${top}/`) || norm === top || norm.startsWith(`${top}/`)) {
      return `names ${named}, a path each process resolves to its own (${top})`;
    }
  }
  return undefined;
}

/** The path a pointer file names, as git reads it: the `.git` file's, or a `commondir`'s. */
export async function pointerNamed(
  file: string,
  kind: "gitdir" | "commondir",
): Promise<string | undefined> {
  const text = await readSmall(file);
  if (text === undefined) return undefined;
  if (kind === "gitdir") return parseGitdirFile(text);
  const common = cutAtNul(chompPointer(text));
  return common === "" ? undefined : common;
}

/** {@linkcode pointedDir} for callers outside: the directory `named` leads to from `base`. */
export function pointedDirOf(base: string, named: string): Promise<PointedDir> {
  return pointedDir(base, named);
}

/** A directory a pointer file names, resolved as git resolves it, with the links on the way. */
export interface PointedDir {
  /** Its real path; undefined when it is no existing directory. */
  dir: string | undefined;
  /** The symbolic links the path went through. */
  links: string[];
}

/** The directory `named` (from a `.git` or `commondir` file in `base`), as git opens it. */
async function pointedDir(base: string, named: string): Promise<PointedDir> {
  // Physically, as the kernel: `q/../cm` with `q` a link is not `cm` beside `q`.
  const { path, links } = await physicalPath(base, named);
  return { dir: await realDir(path), links };
}

/** The directory a `commondir` file names (trailing newlines stripped), with the links on the way. */
export async function commondirOf(gitDir: string): Promise<PointedDir | undefined> {
  const text = await readSmall(join(gitDir, "commondir"));
  if (text === undefined) return undefined;
  const common = cutAtNul(chompPointer(text));
  if (common === "") return undefined;
  return await pointedDir(gitDir, common);
}

/** The directory a `commondir` file names, as git reads it (trailing newlines stripped). */
export async function readCommondir(gitDir: string): Promise<string | undefined> {
  return (await commondirOf(gitDir))?.dir;
}

/**
 * Where the git directories of the workspace `workspaceReal` (a real path)
 * are. `placeholders` are paths penguin itself holds as stand-ins for
 * missing entries; they count as missing, except a `.git` stand-in that is
 * no longer an empty directory: commands cannot write into it, so the user
 * filled it (`git init` on the host while the session runs), and it is
 * the repository git uses from then on.
 */
export async function findGitLayout(
  workspaceReal: string,
  placeholders: ReadonlySet<string> = new Set(),
): Promise<GitLayout> {
  const dotGit = join(workspaceReal, ".git");
  const seen = await statOrUndefined(dotGit);
  // A stand-in is an empty directory, missing for git; the check for one is below.
  const info = placeholders.has(dotGit) && !seen?.isDirectory ? undefined : seen;
  if (!info) return { dotGit, kind: "missing", gitDirs: [] };
  let gitDir: string | undefined;
  let kind: GitLayout["kind"] = "other";
  const links: string[] = [];
  if (info.isDirectory) {
    // An empty directory is no repository (git would not take it for one): it is missing, and
    // may be another penguin's stand-in that this one cannot tell from the user's.
    if (await isEmptyDir(dotGit)) return { dotGit, kind: "missing", gitDirs: [] };
    kind = "dir";
    gitDir = await realDir(dotGit);
  } else if (info.isFile) {
    kind = "file";
    const named = parseGitdirFile(await readSmall(dotGit) ?? "");
    if (named !== undefined) {
      const pointed = await pointedDir(workspaceReal, named);
      gitDir = pointed.dir;
      links.push(...pointed.links);
    }
  }
  const gitDirs: string[] = [];
  if (gitDir) {
    gitDirs.push(gitDir);
    const commondirFile = join(gitDir, "commondir");
    if (!placeholders.has(commondirFile)) {
      const common = await commondirOf(gitDir);
      if (common?.dir && !gitDirs.includes(common.dir)) gitDirs.push(common.dir);
      links.push(...common?.links ?? []);
    }
  }
  return { dotGit, kind, gitDirs, ...(links.length ? { links } : {}) };
}

function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith("/") ? root : root + "/");
}

function relGuarded(rel: string): GuardedEntry | undefined {
  for (const e of GIT_GUARDED_ENTRIES) {
    if (inside(rel, e.rel)) return e;
  }
  const base = rel.slice(rel.lastIndexOf("/") + 1);
  return GUARDED_BASENAMES.includes(base) ? { rel: base, kind: "file" } : undefined;
}

/**
 * Why the model may not write `real` (a real path inside the workspace), or
 * undefined when the git rule allows it. Comparisons ignore case, as on a
 * case-insensitive file system.
 */
export function gitWriteRefusal(
  real: string,
  layout: GitLayout,
  access: GitAccess,
): string | undefined {
  const p = real.toLowerCase();
  const dotGit = layout.dotGit.toLowerCase();
  if (layout.kind !== "dir" && inside(p, dotGit)) {
    return layout.kind === "missing"
      ? `.git is missing at the workspace root and commands cannot create it either (a planted repository's config would run code on the user's next git command); ask the user to run "git init"`
      : `.git is a gitdir pointer naming the repository; it is read-only (${GIT_WRITABLE_HINT} — the pointer itself stays read-only)`;
  }
  const dirs = layout.kind === "dir" ? [dotGit, ...layout.gitDirs] : layout.gitDirs;
  for (const d of dirs.map((x) => x.toLowerCase())) {
    if (!inside(p, d)) continue;
    if (access === "read-only") {
      return `the git directory is read-only for the model, as git runs commands named in it outside the sandbox; ${GIT_WRITABLE_HINT}`;
    }
    const rel = p === d ? "" : p.slice(d.length + 1);
    if (rel === "") return "the git directory itself cannot be replaced";
    const hit = relGuarded(rel);
    if (hit?.why) return `.git/${hit.rel} ${hit.why}`;
    if (hit) {
      return `.git/${hit.rel} configures or redirects git, which runs what it names outside the sandbox; it stays read-only even with --git-writable`;
    }
  }
  return undefined;
}

/** Parse a `"git"` / flag value; throws a usage error naming `what` otherwise. */
export function parseGitAccess(value: string, what = "git"): GitAccess {
  if ((GIT_ACCESS_MODES as readonly string[]).includes(value)) return value as GitAccess;
  throw new PenguinError(
    "usage",
    `${what} must be one of ${GIT_ACCESS_MODES.join(", ")}, got ${JSON.stringify(value)}`,
  );
}
