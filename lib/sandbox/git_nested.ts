/**
 * Repositories below the workspace root (and below every other writable root:
 * `plan.ts` walks each, see `gitWalkRoots`): a `.git` (directory, `gitdir:` file
 * or symlink) at any depth, or a directory git takes for a bare repository
 * (`HEAD`, `objects/` and `refs/`). The host's git reads such a repository's
 * configuration, and runs what it names, whenever the user (or a shell prompt,
 * or an editor scanning for repositories) runs git inside it, and the outer
 * repository's `git status` enters it when the outer index records it as a
 * submodule (a gitlink: only with a writable git directory).
 *
 * bubblewrap cannot keep a name from being created at an arbitrary depth, so
 * penguin works in two steps:
 *
 * - When a sandbox is planned, every repository found ({@linkcode findNestedRepos})
 *   is guarded (`plan.ts`): its git directory read-only whatever the git
 *   access (`--git-writable` opens only the workspace's own), and what its
 *   configuration runs or loads read-only, as for the workspace's own.
 *   A workspace holding more entries than the walk lists
 *   ({@linkcode nestedRepoLimit}) is refused rather than guarded in part.
 * - When a sandbox has ended, every repository that was not there when it was
 *   planned, or is not the same one ({@linkcode repoIdentity}), is checked ({@linkcode armedReason}): one whose configuration,
 *   includes or hooks would make git run something from the workspace is
 *   disarmed ({@linkcode disarmNewRepos}): its `.git` is renamed to
 *   `.git-disarmed-by-penguin` (a bare one's `HEAD` to
 *   `HEAD-disarmed-by-penguin`), so git no longer finds it. A plain
 *   repository (`git init`, `git clone`) is left alone.
 *
 * Not covered: while a command runs, a repository it made is on the disk as
 * it made it; a git command the user runs inside it at that moment reads it.
 *
 * @module
 */
import { join, sep } from "node:path";
import { resolveGitConfig } from "./git_config.ts";
import { execKeyOf, gitExecTargets } from "./git_exec_keys.ts";
import { findGitLayout, GIT_GUARDED_ENTRIES, readCommondir } from "./git_guard.ts";

/** A repository below the workspace root. */
export interface NestedRepo {
  /** The directory git would work in (the one holding `.git`, or the bare directory). */
  workTree: string;
  /** The `.git` entry, or the bare directory itself. */
  entry: string;
  /** `.git` entry, or a bare repository directory. */
  kind: "dotgit" | "bare";
  /** The `.git` entry is a symbolic link. */
  symlink: boolean;
}

/**
 * The most directory entries the walk made when a sandbox is planned lists
 * (about 0.7 s for 300,000 on a warm cache); a workspace holding more is
 * refused (`plan.ts`), since a repository past the limit would go unguarded.
 * `PENGUIN_GIT_SCAN_LIMIT` sets another limit ({@linkcode nestedRepoLimit}).
 */
export const MAX_WALKED_ENTRIES = 300_000;

/** The variable that sets the walk's limit for planning (a positive integer). */
export const SCAN_LIMIT_VAR = "PENGUIN_GIT_SCAN_LIMIT";

/** The walk's limit for planning: `PENGUIN_GIT_SCAN_LIMIT`, else {@linkcode MAX_WALKED_ENTRIES}. */
export function nestedRepoLimit(): number {
  let raw: string | undefined;
  try {
    raw = Deno.env.get(SCAN_LIMIT_VAR);
  } catch {
    raw = undefined;
  }
  const n = raw !== undefined && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : MAX_WALKED_ENTRIES;
}

/** The suffix given to a disarmed `.git` or `HEAD`. */
export const DISARMED_SUFFIX = "-disarmed-by-penguin";

/**
 * Every repository below `workspace` (a real path), outermost first, with
 * whether the walk saw the whole tree. Symbolic links are not followed; the
 * workspace's own `.git` and the inside of every `.git` are skipped (a bare
 * repository's inside is walked: a repository made there is found first),
 * and so are the directories of `skip` (other roots, walked on their own).
 */
export async function findNestedRepos(
  workspace: string,
  maxEntries = MAX_WALKED_ENTRIES,
  skip: readonly string[] = [],
): Promise<{ repos: NestedRepo[]; complete: boolean }> {
  const repos: NestedRepo[] = [];
  let level = [workspace];
  let seen = 0;
  // Level by level, each level's directories listed a few at a time.
  while (level.length > 0) {
    const next: string[] = [];
    for (let i = 0; i < level.length; i += WALK_WIDTH) {
      const listed = await Promise.all(level.slice(i, i + WALK_WIDTH).map(listDir));
      for (const [k, entries] of listed.entries()) {
        const dir = level[i + k]!;
        seen += entries.length;
        if (seen > maxEntries) return { repos, complete: false };
        await visit(dir, entries, workspace, repos, next, skip);
      }
    }
    level = next;
  }
  return { repos, complete: true };
}

/** Directories listed at once by {@linkcode findNestedRepos}. */
const WALK_WIDTH = 16;

async function listDir(dir: string): Promise<Deno.DirEntry[]> {
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const e of Deno.readDir(dir)) entries.push(e);
  } catch {
    // gone or unreadable
  }
  return entries;
}

/** Whether `path`, a regular file, has an execute bit (git's `access(path, X_OK)` passes). */
async function executable(path: string): Promise<boolean> {
  const info = await Deno.stat(path).catch(() => undefined);
  return info !== undefined && (info.isDirectory || ((info.mode ?? 0) & 0o111) !== 0);
}

/**
 * Record the repository `dir` is or holds; queue its subdirectories in `next`
 * (a bare repository's too: git finds a repository made inside one first).
 */
async function visit(
  dir: string,
  entries: Deno.DirEntry[],
  workspace: string,
  repos: NestedRepo[],
  next: string[],
  skip: readonly string[],
): Promise<void> {
  const entry = (name: string) => entries.find((e) => e.name === name);
  // As git's is_git_directory: HEAD, and objects and refs it can search (access X_OK): a
  // directory, a link (git follows it) or an executable regular file. A commondir file
  // naming the directory that has them counts whatever it names.
  const head = entry("HEAD");
  const searchable = async (name: string) => {
    const e = entry(name);
    if (!e) return false;
    if (e.isDirectory || e.isSymlink) return true;
    return e.isFile && await executable(join(dir, name));
  };
  const gitDir = head !== undefined && (head.isFile || head.isSymlink) &&
    ((await searchable("objects") && await searchable("refs")) ||
      entries.some((e) => e.name === "commondir" && (e.isFile || e.isSymlink)));
  if (dir !== workspace && gitDir) {
    repos.push({ workTree: dir, entry: dir, kind: "bare", symlink: false });
  }
  for (const e of entries) {
    if (e.name.toLowerCase() === ".git") {
      if (dir !== workspace) {
        repos.push({
          workTree: dir,
          entry: join(dir, e.name),
          kind: "dotgit",
          symlink: e.isSymlink,
        });
      }
      continue;
    }
    if (!e.isDirectory || e.isSymlink) continue;
    const sub = join(dir, e.name);
    if (!skip.includes(sub)) next.push(sub);
  }
}

function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function ownHome(): string | undefined {
  try {
    return Deno.env.get("HOME") || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why git would run something the model chose in `repo`, or undefined when
 * it is a plain repository: a symlinked `.git`, a hook that is not a
 * `.sample`, a key of `GIT_EXEC_KEYS` or an include in its own configuration,
 * or any key (its own, the user's global or system ones) naming an existing
 * path inside `roots`.
 */
export async function armedReason(
  repo: NestedRepo,
  roots: readonly string[],
  home: string | undefined = ownHome(),
): Promise<string | undefined> {
  if (repo.symlink) return `${repo.entry} is a symbolic link`;
  const gitDirs = await nestedGitDirs(repo);
  // A linked configuration, hooks directory or redirection leads to a file the model can
  // change after any check: armed whatever it holds now.
  for (const dir of gitDirs) {
    for (const path of await symlinkedEntries(dir)) return `${path} is a symbolic link`;
  }
  for (const dir of gitDirs) {
    try {
      for await (const e of Deno.readDir(join(dir, "hooks"))) {
        if (!e.name.endsWith(".sample")) return `it has the hook ${join(dir, "hooks", e.name)}`;
      }
    } catch {
      // no hooks directory
    }
  }
  const config = await resolveGitConfig({
    workTree: repo.workTree,
    gitDirs: [repo.entry, ...gitDirs],
    gitDir: gitDirs[0],
    commonDir: gitDirs[1] ?? gitDirs[0],
    home,
  });
  const own = new Set(
    config.files.filter((f) => f.scope === "repository" || f.scope === "include").map((f) =>
      f.path
    ),
  );
  for (const f of config.files) {
    if (f.state === "unreadable" && own.has(f.path)) return `${f.path} cannot be read`;
  }
  for (const e of config.entries) {
    if (!own.has(e.file)) continue;
    const row = execKeyOf(e.key);
    if (row && (!row.applies || row.applies(e.value))) return `${e.file} sets ${row.key}`;
    if (/^include(?:if\..*)?\.path$/s.test(e.key)) return `${e.file} includes ${e.value}`;
  }
  for (const t of gitExecTargets(config, repo.workTree, home)) {
    if (!roots.some((r) => inside(t.path, r))) continue;
    if (await Deno.lstat(t.path).then(() => true, () => false)) {
      return `${t.key} names ${t.path}`;
    }
  }
  return undefined;
}

/**
 * Real paths of the git directories of `repo`: the one it is or names, then
 * the common directory its `commondir` file names, if another one.
 */
export async function nestedGitDirs(repo: NestedRepo): Promise<string[]> {
  if (repo.kind !== "bare") return (await findGitLayout(repo.workTree)).gitDirs;
  const real = await Deno.realPath(repo.entry).catch(() => undefined);
  if (real === undefined) return [];
  const common = await readCommondir(real);
  return common && common !== real ? [real, common] : [real];
}

/**
 * The entries of the git directory `dir` that configure or redirect git
 * (`GIT_GUARDED_ENTRIES`: `config`, `config.worktree`, `hooks`, `commondir`,
 * `info/`…) and are symbolic links.
 */
export async function symlinkedEntries(dir: string): Promise<string[]> {
  // Listed, not looked up one by one: a plan of a read-only git directory looks at none.
  const links = async (d: string) => {
    const names = new Set<string>();
    try {
      for await (const e of Deno.readDir(d)) if (e.isSymlink) names.add(e.name);
    } catch {
      // gone, or not a directory
    }
    return names;
  };
  const top = await links(dir);
  const out: string[] = [];
  let inObjects: Set<string> | undefined;
  for (const e of GIT_GUARDED_ENTRIES) {
    const [first, rest] = e.rel.split("/") as [string, string | undefined];
    if (rest === undefined) {
      if (top.has(first)) out.push(join(dir, first));
    } else if (top.has(first)) {
      // A linked directory on the way (objects → …/info) leads there as well.
      if (!out.includes(join(dir, first))) out.push(join(dir, first));
    } else {
      inObjects ??= await links(join(dir, first));
      if (inObjects.has(rest)) out.push(join(dir, e.rel));
    }
  }
  return out;
}

/** A repository found when a sandbox was planned: its entry and {@linkcode repoIdentity}. */
export interface NestedRepoMark {
  entry: string;
  id: string;
}

/**
 * What identifies `repo` on the disk: the device and inode of its entry, and
 * of each git directory with its `config`, `config.worktree`, `hooks` and
 * `commondir`, each both as an entry and as what it leads to (a link's
 * target). A command that renames a parent away and makes a new repository
 * at the same path (or replaces the git directory, its configuration, or the
 * file a link of it leads to) changes it.
 */
export async function repoIdentity(repo: NestedRepo): Promise<string> {
  const id = (p: string) => Deno.lstat(p).then((i) => `${i.dev}:${i.ino}`, () => "-");
  const target = (p: string) => Deno.stat(p).then((i) => `${i.dev}:${i.ino}`, () => "-");
  const parts = [await id(repo.entry)];
  for (const dir of await nestedGitDirs(repo).catch(() => [])) {
    parts.push(dir, await id(dir));
    for (const name of ["config", "config.worktree", "hooks", "commondir"]) {
      parts.push(await id(join(dir, name)), await target(join(dir, name)));
    }
  }
  return parts.join(" ");
}

/** Rename `path` to the first free `<path><suffix>[-n]`; the new path. */
async function renameAside(path: string): Promise<string> {
  for (let n = 0;; n++) {
    const to = `${path}${DISARMED_SUFFIX}${n === 0 ? "" : `-${n}`}`;
    if (await Deno.lstat(to).then(() => true, () => false)) continue;
    await Deno.rename(path, to);
    return to;
  }
}

/** A repository penguin disarmed, and why. */
export interface Disarmed {
  /** What was renamed. */
  from: string;
  /** Its new name. */
  to: string;
  why: string;
}

/**
 * Disarm every repository below `workspace` that is not in `before` (the
 * repositories found when the sandbox was planned), or is at the same path
 * with another {@linkcode repoIdentity} (a new one in its place), and would
 * make git run something from `roots` (`skip`: directories below `workspace`
 * not to enter, as for {@linkcode findNestedRepos}). The walk has no limit: whatever the
 * command made is listed (listing an entry costs far less than making it).
 * Never rejects: a repository that cannot be renamed is reported with `to`
 * empty.
 */
export async function disarmNewRepos(
  workspace: string,
  before: readonly NestedRepoMark[],
  roots: readonly string[],
  skip: readonly string[] = [],
): Promise<Disarmed[]> {
  const out: Disarmed[] = [];
  const known = new Map(before.map((b) => [b.entry, b.id]));
  try {
    const { repos } = await findNestedRepos(workspace, Infinity, skip);
    for (const repo of repos) {
      const id = known.get(repo.entry);
      if (id !== undefined && id === await repoIdentity(repo)) continue;
      const why = await armedReason(repo, roots).catch((err) => `it cannot be checked (${err})`);
      if (why === undefined) continue;
      const target = repo.kind === "bare" ? join(repo.entry, "HEAD") : repo.entry;
      const to = await renameAside(target).catch(() => "");
      out.push({ from: target, to, why });
    }
  } catch {
    // The workspace is gone: nothing to disarm.
  }
  return out;
}

/** The names that together make a directory a bare repository to git. */
const BARE_NAMES = ["HEAD", "objects", "refs"];

/**
 * Why the file tools may not write `real` (a real path inside the workspace
 * `workspaceReal`, not in its own `.git`, which `git_guard.ts` rules), or
 * undefined: a path through a `.git` below the root, or a write that would
 * complete a bare repository (`HEAD`, `objects/`, `refs/` in one directory).
 */
export async function nestedRepoRefusal(
  real: string,
  workspaceReal: string,
): Promise<string | undefined> {
  if (!inside(real, workspaceReal) || real === workspaceReal) return undefined;
  const parts = real.slice(workspaceReal.length + 1).split(sep);
  if (parts[0]!.toLowerCase() === ".git") return undefined;
  const at = parts.findIndex((p) => p.toLowerCase() === ".git");
  if (at > 0) {
    return `${
      parts.slice(0, at + 1).join("/")
    } would be a repository below the workspace root, whose configuration the user's git would run; the file tools do not write there`;
  }
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === "HEAD" || parts[i] === "commondir") {
      // HEAD with a commondir naming the rest is a git directory to git as well.
      const dir = join(workspaceReal, ...parts.slice(0, i));
      const other = join(dir, parts[i] === "HEAD" ? "commondir" : "HEAD");
      if (await Deno.lstat(other).then(() => true, () => false)) {
        return `${
          parts.slice(0, i).join("/") || "."
        } would hold HEAD and commondir, which makes it a repository to git; the file tools do not write there`;
      }
    }
    if (!BARE_NAMES.includes(parts[i]!)) continue;
    const dir = join(workspaceReal, ...parts.slice(0, i));
    const others = BARE_NAMES.filter((n) => n !== parts[i]);
    const present = await Promise.all(
      others.map((n) => Deno.lstat(join(dir, n)).then(() => true, () => false)),
    );
    if (present.every(Boolean)) {
      return `${
        parts.slice(0, i).join("/") || "."
      } would hold HEAD, objects and refs, which makes it a repository to git; the file tools do not write there`;
    }
  }
  return undefined;
}
