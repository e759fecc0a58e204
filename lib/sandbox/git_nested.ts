/**
 * Repositories below the workspace root (and below every other writable root:
 * `plan.ts` walks each, see `gitWalkRoots`): a `.git` (directory, `gitdir:` file
 * or symlink) at any depth, or a directory git takes for a bare repository
 * (`HEAD`, `objects/` and `refs/`), the root itself included: git asks whether
 * the directory it runs in is one before it walks up, so a root a command made
 * one is disarmed whatever it holds ({@linkcode rootGitDirReason}). The host's git reads such a repository's
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
 * In a session, what counts as the user's is decided once per root and shared
 * by every session there (`_repo_trust.ts`): every walk, before and after a
 * command, checks each repository not in that set, and the last session out
 * walks once more ({@linkcode endNestedRepoWatch}). A subtree a command parks
 * inside a `.git` (never walked) and puts back is checked then.
 *
 * Not covered: while a command runs, a repository it made is on the disk as
 * it made it; a git command the user runs inside it at that moment reads it.
 *
 * @module
 */
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { errorMessage } from "../protocol/errors.ts";
import { findBash } from "./_executables.ts";
import { resolveGitConfig } from "./git_config.ts";
import { execKeyOf, gitExecTargets } from "./git_exec_keys.ts";
import { isInertKey } from "./git_inert_keys.ts";
import {
  commondirOf,
  findGitLayout,
  GIT_GUARDED_ENTRIES,
  pointedDirOf,
  pointerNamed,
  readerDependentPointer,
} from "./git_guard.ts";
import { CONVENTIONAL_HOOK_DIRS } from "./git_hook_scripts.ts";
import { MAX_MODULE_ENTRIES, moduleGitDirs } from "./git_modules.ts";
import { inside, isEmptyDir, ownHome } from "./_paths.ts";
import { otherUserHomes } from "./_user_homes.ts";
import { existsNow, listDirNow, lstatOrNone, readRegularNow, realPathOrNone } from "./_look.ts";
import { type DirStamp, stampDirs } from "./_walk_stamps.ts";
import { leaveRoots, observeRepos, trustedRepos } from "./_repo_trust.ts";
import { noteSessionEnd } from "./session_end_report.ts";
import { indexesProblem } from "./git_index.ts";
import { withPlanScope } from "./_standin_registry.ts";
import { gitDirTrap } from "./_git_dir_traps.ts";
import { isGitDir } from "./_git_dir_shape.ts";
import { parkedRepoIn } from "./_git_parked.ts";
import { renameInDir } from "./pinned_rename.ts";
import { collectorEvery } from "../state/_gc.ts";

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

/**
 * Repositories below a root that a plan guards at most: each adds read-only
 * binds to the sandbox's arguments and checks to every plan, and 20,000 bare
 * repositories one command made (60,000 directories) took penguin past 450 MB
 * and minutes a command, then past the kernel's argument limit (attack round
 * 21 bounded #4). Past it the plan refuses, saying so.
 */
export const MAX_GUARDED_REPOS = 1000;

/** The suffix given to a disarmed `.git` or `HEAD`. */
export const DISARMED_SUFFIX = "-disarmed-by-penguin";

/**
 * Every repository below `workspace` (a real path), outermost first, with
 * whether the walk saw the whole tree. Symbolic links are not followed; the
 * workspace's own `.git` and the inside of every `.git` are skipped (a bare
 * repository's inside is walked: a repository made there is found first),
 * and so are the directories of `skip` (other roots, walked on their own).
 * A directory whose name is not UTF-8 is renamed first ({@linkcode renameUnaddressable}),
 * as penguin could not look inside it; `renamed` lists those.
 *
 * Another sandbox (a background command, another penguin on the same
 * workspace) may rename directories while the walk runs, which would hide a
 * subtree from it. So every directory is stamped before it is listed
 * (`_walk_stamps.ts`), and after the walk every stamp is taken again: one
 * directory gone or replaced walks the tree anew; one changed is listed again,
 * the subdirectories that appeared in it walked. The result is `consistent`
 * only when a whole round of stamps found nothing changed: then what was
 * listed is what the tree held at one moment. After {@linkcode MAX_WALK_PASSES}
 * passes without that, `consistent` is false and `repos` empty.
 */
export async function findNestedRepos(
  workspace: string,
  maxEntries = MAX_WALKED_ENTRIES,
  skip: readonly string[] = [],
  maxRepos = Infinity,
): Promise<NestedRepoWalk> {
  const renamed: Renamed[] = [];
  if (!lstatOrNone(workspace)?.isDirectory) {
    return { repos: [], complete: true, renamed, consistent: true, tooLong: [] };
  }
  const ctx = { workspace, skip, renamed, max: maxEntries, budget: { left: maxEntries }, maxRepos };
  let walk = await freshWalk(ctx);
  for (let pass = 1;; pass++) {
    const tooLong = walk.tooLong;
    if (walk.repos.length > maxRepos) {
      return { repos: [], complete: false, renamed, consistent: true, tooLong, tooManyRepos: true };
    }
    if (ctx.budget.left < 0) {
      return { repos: walk.repos, complete: false, renamed, consistent: true, tooLong };
    }
    const verdict = walk.gone ? "gone" : await recheck(walk, ctx);
    if (verdict === "same") {
      const repos = walk.repos.sort((a, b) => depth(a.entry) - depth(b.entry));
      return { repos, complete: true, renamed, consistent: true, tooLong };
    }
    if (pass >= MAX_WALK_PASSES) {
      return { repos: [], complete: true, renamed, consistent: false, tooLong };
    }
    if (verdict === "gone") walk = await freshWalk(ctx);
    else await walkLevels(verdict, walk, ctx);
  }
}

/** What {@linkcode findNestedRepos} found. */
export interface NestedRepoWalk {
  repos: NestedRepo[];
  /** The walk listed every entry (within its limit). */
  complete: boolean;
  renamed: Renamed[];
  /** What was listed is what the tree held at one moment. */
  consistent: boolean;
  /** The walk stopped past its limit of repositories (`maxRepos`); `repos` is then empty. */
  tooManyRepos?: boolean;
  /**
   * Directories whose path is longer than the system's limit ({@linkcode PATH_MAX_BYTES}):
   * penguin cannot look inside them by path, so a repository there is neither guarded nor
   * checked. Not walked; the rest of the tree is.
   */
  tooLong: string[];
}

/** The longest path (in bytes, its terminating NUL included) the system resolves: Linux's `PATH_MAX`. */
export const PATH_MAX_BYTES = 4096;

/** Whether the system refuses `path` for its length (ENAMETOOLONG). */
function pathTooLong(path: string): boolean {
  // A UTF-16 unit is at most three bytes of UTF-8: most paths need no encoding to tell.
  return path.length * 3 >= PATH_MAX_BYTES &&
    new TextEncoder().encode(path).length >= PATH_MAX_BYTES;
}

/** Walks (a first one, and every re-check after it) before a changing tree counts as inconsistent. */
export const MAX_WALK_PASSES = 4;

/**
 * A test seam: run after each group of directories the walk listed. Tests
 * rename directories there, as a concurrent command would.
 */
export const walkSeam: { afterLevel: (dirs: readonly string[]) => void | Promise<void> } = {
  afterLevel: () => {},
};

/** What one walk of {@linkcode findNestedRepos} shares. */
interface WalkContext {
  workspace: string;
  skip: readonly string[];
  renamed: Renamed[];
  /** Entries one walk may list (its re-checks included). */
  max: number;
  budget: { left: number };
  /** Repositories the walk may find before it stops ({@linkcode NestedRepoWalk.tooManyRepos}). */
  maxRepos: number;
}

/**
 * A directory to list: `name` in the directory of the walk's record `parent`,
 * or (`parent` -1) the whole path `name`. A walk keeps its directories so, not
 * as paths: a command's tree of long names (30,000 directories at 3.5 KB
 * paths) held as paths took penguin past 800 MB (attack round 19, bounded #2).
 */
interface DirRef {
  parent: number;
  name: string;
}

/** A listed directory: its stamp before the listing, and what of the listing a re-check compares. */
interface DirRecord extends DirRef {
  stamp: DirStamp;
  /** Its subdirectories' names (undefined: none). */
  subdirs: readonly string[] | undefined;
  shape: string;
}

/** One walk's findings. */
interface Walk {
  repos: NestedRepo[];
  records: DirRecord[];
  /** Paths of recent records ({@linkcode recordPath}). */
  paths: Map<number, string>;
  /** A directory vanished or was replaced between its parent's listing and its own. */
  gone: boolean;
  /** Directories not walked: their path is too long ({@linkcode NestedRepoWalk.tooLong}). */
  tooLong: string[];
}

function depth(path: string): number {
  return path.split(sep).length;
}

/**
 * `name` (one entry a listing gave: no `/`, never `.` or `..`) in the
 * directory `dir` (a normalized absolute path): `join` without its
 * normalization, which costs a pass over the whole path each time.
 */
function childPath(dir: string, name: string): string {
  return dir.endsWith("/") ? dir + name : `${dir}/${name}`;
}

/** The path of `ref`, built from its parents' records. */
function pathOf(walk: Walk, ref: DirRef): string {
  return ref.parent < 0 ? ref.name : childPath(recordPath(walk, ref.parent), ref.name);
}

/** The path of the walk's record `k` (the recent ones are kept: siblings share a parent). */
function recordPath(walk: Walk, k: number): string {
  const kept = walk.paths.get(k);
  if (kept !== undefined) return kept;
  const path = pathOf(walk, walk.records[k]!);
  if (walk.paths.size >= KEPT_PATHS) walk.paths.clear();
  walk.paths.set(k, path);
  return path;
}

/** Record paths a walk keeps at most ({@linkcode recordPath}). */
const KEPT_PATHS = 256;

/** A new walk of the whole tree, with a fresh budget. */
async function freshWalk(ctx: WalkContext): Promise<Walk> {
  const walk: Walk = { repos: [], records: [], paths: new Map(), gone: false, tooLong: [] };
  ctx.budget.left = ctx.max;
  await walkLevels([{ parent: -1, name: ctx.workspace }], walk, ctx);
  return walk;
}

/** The `.git` entries and bare-repository parts of a listing, as text to compare. */
function shapeOf(listing: Listing): string {
  const kind = (
    e: Deno.DirEntry,
  ) => (e.isSymlink ? "l" : e.isDirectory ? "d" : e.isFile ? "f" : "o");
  return [
    ...listing.dotgits.map((e) => `g${e.name}:${kind(e)}`),
    ...[...listing.repoParts.values()].map((e) => `p${e.name}:${kind(e)}`),
  ].sort().join("/");
}

/** Walk down from `level`, level by level, each level's directories listed a few at a time. */
async function walkLevels(level: DirRef[], walk: Walk, ctx: WalkContext): Promise<void> {
  const collected = collectorEvery(COLLECT_EVERY_DIRS);
  while (level.length > 0) {
    const next: DirRef[] = [];
    // Stamped a chunk at a time (one `stat` run for many), each before it is listed; listed a few
    // at a time.
    for (let c = 0; c < level.length; c += STAMP_WIDTH) {
      const refs: DirRef[] = [];
      const paths: string[] = [];
      for (const ref of level.slice(c, c + STAMP_WIDTH)) {
        const path = pathOf(walk, ref);
        // Neither gone nor walked: a path the system refuses for its length is reported.
        if (pathTooLong(path)) walk.tooLong.push(path);
        else refs.push(ref), paths.push(path);
      }
      const stamps = await stampDirs(paths);
      collected(paths.length);
      for (let i = 0; i < paths.length; i += WALK_WIDTH) {
        const dirs = paths.slice(i, i + WALK_WIDTH);
        const listed = await Promise.all(
          dirs.map((d, k) => stamps[i + k] && listDirRenaming(d, ctx.renamed, ctx.budget)),
        );
        if (ctx.budget.left < 0) return;
        for (const [k, listing] of listed.entries()) {
          if (listing === undefined) {
            walk.gone = true;
            return;
          }
          if (listing.unlisted) walk.tooLong.push(dirs[k]!);
          walk.records.push({
            ...refs[i + k]!,
            stamp: stamps[i + k]!,
            subdirs: listing.subdirs.length > 0 ? listing.subdirs : undefined,
            shape: shapeOf(listing),
          });
          visit(dirs[k]!, walk.records.length - 1, listing, ctx, walk.repos, next);
        }
        if (walk.repos.length > ctx.maxRepos) return;
        await walkSeam.afterLevel(dirs);
      }
    }
    level = next;
  }
}

/**
 * Stamp every listed directory again: `same` when none changed, `gone` when
 * one is gone or replaced, or has lost a subdirectory, a `.git` or a part of a
 * bare repository (the walk starts over); else the subdirectories that
 * appeared in the changed ones (listed again, their records updated), to walk.
 */
async function recheck(walk: Walk, ctx: WalkContext): Promise<"same" | "gone" | DirRef[]> {
  const changed = new Map<number, DirStamp>();
  const collected = collectorEvery(COLLECT_EVERY_DIRS);
  // A chunk of records at a time: only one chunk's paths are built at once.
  for (let from = 0; from < walk.records.length; from += RECHECK_CHUNK) {
    collected(RECHECK_CHUNK);
    const paths: string[] = [];
    for (let k = from; k < Math.min(from + RECHECK_CHUNK, walk.records.length); k++) {
      paths.push(recordPath(walk, k));
    }
    const now = await stampDirs(
      paths,
      (j) => walk.records[from + j]!.stamp.stamp.startsWith("ns:"),
    );
    for (const [j, s] of now.entries()) {
      const was = walk.records[from + j]!.stamp;
      if (s === undefined || s.dev !== was.dev || s.ino !== was.ino) return "gone";
      if (s.stamp !== was.stamp) changed.set(from + j, s);
    }
  }
  if (changed.size === 0) return "same";
  const appeared: DirRef[] = [];
  for (const [k, stamp] of changed) {
    const rec = walk.records[k]!;
    const path = recordPath(walk, k);
    const listing = await listDirRenaming(path, ctx.renamed, ctx.budget);
    if (listing === undefined || shapeOf(listing) !== rec.shape) return "gone";
    const subdirs = new Set(listing.subdirs);
    for (const name of rec.subdirs ?? []) if (!subdirs.has(name)) return "gone";
    const had = new Set(rec.subdirs);
    for (const name of subdirs) {
      if (!had.has(name) && !ctx.skip.includes(childPath(path, name))) {
        appeared.push({ parent: k, name });
      }
    }
    walk.records[k] = {
      ...rec,
      stamp,
      subdirs: listing.subdirs.length > 0 ? listing.subdirs : undefined,
    };
  }
  return appeared;
}

/**
 * A walk or a re-check runs a full garbage collection every this many
 * directories: each makes paths, `lstat` results and listings that die at
 * once, and V8 let such a heap grow far past what the walk keeps.
 */
const COLLECT_EVERY_DIRS = 65_536;

/** Records stamped at once by a re-check. */
const RECHECK_CHUNK = 1024;

/** Directories listed at once by {@linkcode findNestedRepos}. */
const WALK_WIDTH = 16;

/** Directories stamped at once by {@linkcode findNestedRepos}, before they are listed. */
const STAMP_WIDTH = 64;

/** The names of a directory's entries that make it a bare repository to git. */
const REPO_NAMES = new Set(["HEAD", "objects", "refs", "commondir"]);

/**
 * What the walk keeps of a directory: its entries are looked at as they are
 * read and never held all at once, so a directory of any size costs its
 * subdirectories' paths, not its files.
 */
interface Listing {
  /** The entries named as a bare repository's parts. */
  repoParts: Map<string, Deno.DirEntry>;
  /** `.git` entries (any case). */
  dotgits: Deno.DirEntry[];
  /** Subdirectories (not links). */
  subdirs: string[];
  /** A subdirectory's name is not UTF-8 (read with U+FFFD). */
  unaddressable: boolean;
  /** It could not be listed, and a command may have put a repository in it. */
  unlisted?: boolean;
}

/**
 * Read `dir` entry by entry, taking one from `budget.left` for each (stopping
 * below 0); undefined when it is gone or no longer a directory (renamed away
 * since its parent was listed). One that cannot be read otherwise lists empty,
 * marked `unlisted` when a command may have put something in it.
 */
async function listDir(dir: string, budget: { left: number }): Promise<Listing | undefined> {
  const out: Listing = { repoParts: new Map(), dotgits: [], subdirs: [], unaddressable: false };
  try {
    for await (const e of Deno.readDir(dir)) {
      if (--budget.left < 0) break;
      if (REPO_NAMES.has(e.name)) out.repoParts.set(e.name, e);
      if (e.name.toLowerCase() === ".git") out.dotgits.push(e);
      else if (e.isDirectory && !e.isSymlink) {
        out.subdirs.push(e.name);
        if (e.name.includes("\uFFFD")) out.unaddressable = true;
      }
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    // A directory penguin may not list (a command's `chmod 111`) still lets git reach a
    // repository inside by its path (attack round 29 j07). Not made listable: a chmod by name
    // followed a link swapped in after the look, and the user's `~/.bashrc` became world-writable
    // (round 30 n02). The walk is left incomplete instead, which refuses the next command, unless
    // no command could have written there (another user's directory it cannot write).
    if (err instanceof Deno.errors.PermissionDenied && commandsMayWrite(dir)) out.unlisted = true;
  }
  return out;
}

/**
 * Whether penguin's user may write `dir` (or make it writable): its owner, or a write bit for
 * others or (penguin's group) for the group. Supplementary groups are not known here: a
 * directory writable only through one counts as not.
 */
function commandsMayWrite(dir: string): boolean {
  try {
    const info = Deno.lstatSync(dir);
    const mode = info.mode ?? 0o777;
    return info.uid === Deno.uid() || (mode & 0o002) !== 0 ||
      ((mode & 0o020) !== 0 && info.gid === Deno.gid());
  } catch {
    return true;
  }
}

/**
 * `dir`'s listing, after renaming every subdirectory whose name is not valid
 * UTF-8 ({@linkcode renameUnaddressable}): Deno reads such a name lossily
 * (U+FFFD in place of the bytes), so the walk could not open it, and a
 * repository inside would be neither guarded nor checked while the host's git
 * still finds it.
 */
async function listDirRenaming(
  dir: string,
  renamed: Renamed[],
  budget: { left: number },
): Promise<Listing | undefined> {
  const before = budget.left;
  const listing = await listDir(dir, budget);
  if (!listing?.unaddressable || budget.left < 0) return listing;
  renamed.push(...await renameUnaddressable(dir));
  budget.left = before;
  return await listDir(dir, budget);
}

/** A directory {@linkcode renameUnaddressable} renamed (`to` empty when it could not). */
export interface Renamed {
  /** The old name as Deno reads it (U+FFFD for the bytes that are not UTF-8). */
  from: string;
  to: string;
}

/** `bytes` as a name: valid UTF-8 kept, every other byte written `%XX`. */
export function escapeName(bytes: Uint8Array): string {
  const strict = new TextDecoder("utf-8", { fatal: true });
  let out = "";
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i]!;
    const len = b < 0x80
      ? 1
      : b >= 0xc2 && b <= 0xdf
      ? 2
      : b >= 0xe0 && b <= 0xef
      ? 3
      : b >= 0xf0 && b <= 0xf4
      ? 4
      : 0;
    if (len > 0 && i + len <= bytes.length) {
      try {
        out += strict.decode(bytes.subarray(i, i + len));
        i += len;
        continue;
      } catch {
        // not a character: escaped below
      }
    }
    out += `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
    i++;
  }
  return out;
}

/**
 * Runs `script` with bash (the one penguin's `run` permission names) in `dir`,
 * bytes in and out, in the C locale; undefined without bash.
 */
async function rawShell(dir: string, script: string, args: string[], input?: Uint8Array) {
  const bash = await findBash();
  if (bash === undefined) return undefined;
  const child = new Deno.Command(bash, {
    args: ["--noprofile", "--norc", "-c", script, "bash", ...args],
    cwd: dir,
    clearEnv: true,
    env: { LC_ALL: "C", PATH: "/usr/bin:/bin" },
    stdin: input ? "piped" : "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  if (input) {
    const w = child.stdin.getWriter();
    await w.write(input).catch(() => {});
    await w.close().catch(() => {});
  }
  return await child.output();
}

/** Lists `dir`'s subdirectories (not links), each name's raw bytes ended by a NUL. */
const LIST_DIRS = `for n in * .[!.]* ..?*; do
  if [ -d "$n" ] && [ ! -L "$n" ]; then printf '%s\\0' "$n"; fi
done`;

/** Renames the directory whose raw name is on stdin to "$1", never over an existing entry. */
const RENAME_RAW = `old=$(cat; echo x); old=\${old%x}
[ -d "$old" ] && [ ! -L "$old" ] || exit 3
[ -e "$1" ] || [ -L "$1" ] && exit 4
mv -n -- "$old" "$1" && [ -d "$1" ] && [ ! -e "$old" ]`;

/**
 * Rename every subdirectory of `dir` whose name is not valid UTF-8 to one
 * that is: each byte that is not part of a character written `%XX` (`v\xff`
 * becomes `v%FF`, then `v%FF-1`… when that is taken). Deno cannot pass such a
 * name as an argument, so bash in `dir` lists the raw names and gets the old
 * one on its standard input.
 */
export async function renameUnaddressable(dir: string): Promise<Renamed[]> {
  if (Deno.build.os === "windows") return [];
  const out: Renamed[] = [];
  const listed = await rawShell(dir, LIST_DIRS, []).catch(() => undefined);
  if (!listed?.success) return out;
  const strict = new TextDecoder("utf-8", { fatal: true });
  const raw = listed.stdout;
  for (let start = 0; start < raw.length;) {
    let end = raw.indexOf(0, start);
    if (end < 0) end = raw.length;
    const name = raw.subarray(start, end);
    start = end + 1;
    try {
      strict.decode(name);
      continue;
    } catch {
      // not UTF-8: renamed below
    }
    const from = new TextDecoder().decode(name);
    const escaped = escapeName(name);
    let to = "";
    for (let n = 0; n < 100 && to === ""; n++) {
      const candidate = n === 0 ? escaped : `${escaped}-${n}`;
      if (existsNow(join(dir, candidate))) continue;
      const moved = await rawShell(dir, RENAME_RAW, [candidate], name).catch(() => undefined);
      if (moved?.success) to = join(dir, candidate);
      else if (moved?.code !== 4) break;
    }
    out.push({ from: join(dir, from), to });
  }
  return out;
}

/**
 * The repository that the directory `dir` itself is, when git would take it for one (a bare
 * repository, or a git directory that is its own work tree through `core.worktree`), looked at
 * by path; undefined otherwise.
 */
export function gitDirRepoAt(dir: string): NestedRepo | undefined {
  const look = (name: string) => lstatOrNone(join(dir, name));
  return isGitDir(dir, look)
    ? { workTree: dir, entry: dir, kind: "bare", symlink: false }
    : undefined;
}

/**
 * Record the repository `dir` is or holds; queue its subdirectories in `next`
 * (a bare repository's too: git finds a repository made inside one first).
 */
function visit(
  dir: string,
  record: number,
  listing: Listing,
  ctx: { workspace: string; skip: readonly string[] },
  repos: NestedRepo[],
  next: DirRef[],
): void {
  const { workspace, skip } = ctx;
  // The root too: git asks whether the directory it runs in is a git directory before it walks
  // up, so a root a command made one (`HEAD`, `objects/`, `refs/`, `config` with
  // `core.worktree=.`) is the repository of the user's next git command there, and in a package
  // directory of the user's repository it comes before the user's `../.git` (attack round 28 f03,
  // f04). Only the root's own `.git` is the root guard's (`git_guard.ts`).
  if (isGitDir(dir, (name) => listing.repoParts.get(name))) {
    repos.push({ workTree: dir, entry: dir, kind: "bare", symlink: false });
  }
  if (dir !== workspace) {
    for (const e of listing.dotgits) {
      repos.push({ workTree: dir, entry: join(dir, e.name), kind: "dotgit", symlink: e.isSymlink });
    }
  }
  for (const name of listing.subdirs) {
    if (!skip.includes(childPath(dir, name))) next.push({ parent: record, name });
  }
}

/**
 * Why git would run something the model chose in `repo`, or undefined when
 * it is a plain repository: a symlinked `.git`, a hook that is not a
 * `.sample`, a non-empty conventional hooks directory at its top
 * (`git_hook_scripts.ts`), a key of `GIT_EXEC_KEYS` or an include in its own
 * configuration, a key of its own configuration outside `INERT_KEYS`
 * (`git_inert_keys.ts`), or any key (its own, the user's global ones for every
 * home of `_user_homes.ts`, the system ones) naming an existing path inside
 * `roots`. A root that is itself a git directory is armed whatever it holds
 * ({@linkcode rootGitDirReason}).
 */
export async function armedReason(
  repo: NestedRepo,
  roots: readonly string[],
  home: string | undefined = ownHome(),
): Promise<string | undefined> {
  if (repo.symlink) return `${repo.entry} is a symbolic link`;
  if (roots.includes(repo.entry)) return rootGitDirReason(repo.entry);
  const pointer = await pointerProblem(repo);
  if (pointer !== undefined) return pointer;
  const { gitDirs, links } = await nestedLayout(repo);
  // A `.git` file or `commondir` path through a link the model can re-point (git follows it, and
  // `..` after it leaves the link's target) leads wherever the model wants after any check.
  const link = links.find((l) => roots.some((r) => inside(l, r)));
  if (link !== undefined) return `its git directory is named through the symbolic link ${link}`;
  const inDirs = await gitDirsArmed(gitDirs);
  if (inDirs !== undefined) return inDirs;
  const inModules = await modulesArmed(repo, gitDirs, roots, home);
  if (inModules !== undefined) return inModules;
  // A conventional hooks directory runs at the user's commit when their later shell's
  // configuration (another HOME) names it.
  for (const name of CONVENTIONAL_HOOK_DIRS) {
    const dir = join(repo.workTree, name);
    // (An empty one runs nothing, and may be penguin's stand-in.)
    if (existsNow(dir) && !await isEmptyDir(dir)) {
      return `it has ${dir}, which holds git hooks by convention`;
    }
  }
  for (const h of [home, ...otherUserHomes(home)]) {
    const why = await configArmed(repo, gitDirs, roots, h);
    if (why !== undefined) return why;
  }
  return undefined;
}

/**
 * Why a writable root that is itself a git directory, and not the user's as
 * the session found it, is disarmed whatever it holds: git takes it for the
 * repository of the root and of every directory below it without a `.git` of
 * its own, ahead of any repository above it, and what a command made there is
 * the model's repository in the user's place.
 */
export function rootGitDirReason(root: string): string {
  return `the writable root ${root} itself is a git directory (HEAD with objects and refs, or ` +
    `with commondir) that was not there as it is now when the session started; git takes it ` +
    `for the repository of every directory there, ahead of the user's`;
}

/**
 * Why git would run something from one of the git directories `gitDirs`
 * itself: a control file with another name (a hard link, changeable through
 * that name while the git directory is read-only), a linked configuration,
 * hooks directory or redirection (it leads to a file the model can change
 * after any check), or a hook that is not a `.sample`. Armed whatever those
 * hold now.
 */
async function gitDirsArmed(gitDirs: readonly string[]): Promise<string | undefined> {
  const index = indexesProblem(gitDirs); // a checkout writes its paths unverified (git_index.ts)
  if (index !== undefined) return index;
  for (const dir of gitDirs) {
    for (const path of linkedControlFiles(dir)) return `${path} has another name (a hard link)`;
  }
  for (const dir of gitDirs) {
    for (const path of await symlinkedEntries(dir)) return `${path} is a symbolic link`;
  }
  for (const dir of gitDirs) {
    const trap = gitDirTrap(dir);
    if (trap !== undefined) return trap;
  }
  for (const dir of gitDirs) {
    // Remotes of old (`remotes/<name>`, `branches/<name>`): read by git, checked by none of the
    // settings' rules (attack round 30 n07).
    for (const old of ["remotes", "branches"]) {
      if (existsNow(join(dir, old)) && !await isEmptyDir(join(dir, old))) {
        return `it has ${join(dir, old)}, remotes of the old form`;
      }
    }
  }
  for (const dir of gitDirs) {
    try {
      for (const e of listDirNow(join(dir, "hooks"))) {
        if (!e.name.endsWith(".sample")) return `it has the hook ${join(dir, "hooks", e.name)}`;
      }
    } catch (err) {
      // Only a missing one is no hooks directory: one penguin may not list (a command's
      // `chmod 111`) still lets git run a hook by its name (attack round 29 j08).
      if (!(err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory)) {
        return `its hooks directory ${join(dir, "hooks")} cannot be listed (${errorMessage(err)})`;
      }
    }
  }
  // A repository parked anywhere inside (attack rounds 30 n01, 31 q01-q07).
  for (const dir of gitDirs) {
    const parked = parkedRepoIn(dir);
    if (parked !== undefined) return parked;
  }
  return undefined;
}

/** The keys whose value git may take for a repository to fetch from or push to. */
const REMOTE_URL_KEY = /^(?:remote\..*\.(?:url|pushurl)|branch\..*\.(?:remote|pushremote))$/is;

/**
 * The local path a remote URL names (`/p`, `../p`, `file:///p`), resolved against `workTree`;
 * undefined for a URL git reaches over a transport (`scheme://`, `host:path`).
 */
function localUrlPath(url: string, workTree: string): string | undefined {
  if (/^file:\/\//i.test(url)) {
    const rest = url.slice("file://".length);
    return rest.startsWith("/") ? rest : undefined;
  }
  if (url.includes("://")) return undefined;
  const colon = url.indexOf(":");
  const slash = url.indexOf("/");
  if (colon !== -1 && (slash === -1 || colon < slash)) return undefined; // host:path
  return resolve(workTree, url);
}

/**
 * Why a repository a command made would run a writable root's code at the user's `git push`: a
 * remote (`remote.*.url`, `pushurl`, or a path as `branch.*.remote` / `pushRemote`) naming a local
 * repository inside a `.git` directory of a writable root, whose `pre-receive` and other hooks
 * git runs on the host. The walk never enters a `.git` (git does not look for repositories
 * there), and the model hid a bare repository with hooks in one (attack round 30 n01, n03). A
 * local repository elsewhere in a root is walked and checked as any other.
 */
function localRemoteInRoots(
  entries: readonly { key: string; value: string | null }[],
  workTree: string,
  roots: readonly string[],
): string | undefined {
  const remotes = new Set(
    entries.map((e) => /^remote\.(.*)\.[^.]+$/s.exec(e.key)?.[1]).filter((r) => r !== undefined),
  );
  for (const e of entries) {
    if (e.value === null || !REMOTE_URL_KEY.test(e.key)) continue;
    if (/^branch\./i.test(e.key) && remotes.has(e.value)) continue; // a remote's name
    const named = localUrlPath(e.value, workTree);
    if (named === undefined) continue;
    // As git reaches it: a link on the way (`ws/link` to `sub/.git/evil`) followed.
    let path = named;
    try {
      path = Deno.realPathSync(named);
    } catch {
      // Not there (now): as named.
    }
    if (!roots.some((r) => inside(path, r))) continue;
    if (path.split(sep).some((part) => part.toLowerCase() === ".git")) {
      return `${e.key} names the repository ${path}, inside a .git directory penguin does not ` +
        "walk: git runs its hooks at a push";
    }
  }
  return undefined;
}

/**
 * Why git would run something from a submodule git directory of `repo`
 * (`git_modules.ts`: below `modules/` of one of `gitDirs`), which the
 * user's `git submodule update` or `git status` in `repo` enters: one
 * armed as a git directory of its own, a link where one could be, one that
 * cannot be looked at, or more than penguin looks through.
 */
async function modulesArmed(
  repo: NestedRepo,
  gitDirs: readonly string[],
  roots: readonly string[],
  home: string | undefined,
): Promise<string | undefined> {
  for (const gitDir of gitDirs) {
    const scan = moduleGitDirs(gitDir);
    if (scan.overflow) {
      return `${join(gitDir, "modules")} holds more than ${MAX_MODULE_ENTRIES} entries, too ` +
        `many for penguin to check the submodule git directories there`;
    }
    if (scan.links.length > 0) return `${scan.links[0]} is a symbolic link`;
    if (scan.unreadable.length > 0) return `${scan.unreadable[0]} cannot be read`;
    for (const dir of scan.dirs) {
      if (existsNow(join(dir, "commondir"))) {
        return `the submodule git directory ${dir} names another one (commondir)`;
      }
      const module: NestedRepo = { workTree: dir, entry: dir, kind: "bare", symlink: false };
      const why = await gitDirsArmed([dir]) ??
        await configArmed(module, [dir], roots, home, moduleWorkTree(repo, dir));
      if (why !== undefined) return `its submodule git directory ${dir} is armed: ${why}`;
    }
  }
  return undefined;
}

/**
 * The `core.worktree` value git writes into a submodule git directory `dir`
 * of `repo` is allowed when it leads (from `dir`) to a directory inside
 * `repo`'s work tree that is not inside a `.git`: the submodule's own work
 * tree, where git would check it out anyway.
 */
function moduleWorkTree(repo: NestedRepo, dir: string): (value: string) => boolean {
  return (value) => {
    if (isAbsolute(value)) return false;
    const to = resolve(dir, value);
    if (!inside(to, repo.workTree) || to === repo.workTree) return false;
    return !to.slice(repo.workTree.length + 1).split(sep).some((p) => p.toLowerCase() === ".git");
  };
}

/** {@linkcode armedReason}'s look at the configuration git reads with the home `home`. */
async function configArmed(
  repo: NestedRepo,
  gitDirs: string[],
  roots: readonly string[],
  home: string | undefined,
  worktreeAllowed: (value: string) => boolean = () => false,
): Promise<string | undefined> {
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
  // What penguin cannot read as git does may hide a key git runs (attack round 20 concgit R1).
  const unread = config.errors.find((e) => [...own].some((f) => e.startsWith(`${f}:`)));
  if (unread !== undefined) return `its configuration has what penguin cannot read (${unread})`;
  for (const e of config.entries) {
    if (!own.has(e.file)) continue;
    const row = execKeyOf(e.key);
    if (row?.key === "core.worktree" && e.value !== null && worktreeAllowed(e.value)) continue;
    if (row && (!row.applies || row.applies(e.value))) return `${e.file} sets ${row.key}`;
    if (/^include(?:if\..*)?\.path$/s.test(e.key)) return `${e.file} includes ${e.value}`;
  }
  // What no table can list (programs besides git read `.git/config` and run what it names:
  // git-lfs, git-annex; attack round 28 f02): a repository a command made keeps only settings
  // known to run nothing.
  const repoFiles = new Set(
    config.files.filter((f) => f.scope === "repository").map((f) => f.path),
  );
  for (const e of config.entries) {
    if (!repoFiles.has(e.file) || isInertKey(e.key, e.value)) continue;
    if (e.key === "core.worktree" && e.value !== null && worktreeAllowed(e.value)) continue;
    return `${e.file} sets ${e.key}, which is not among the settings penguin knows to run nothing`;
  }
  const local = localRemoteInRoots(
    config.entries.filter((e) => repoFiles.has(e.file)),
    repo.workTree,
    roots,
  );
  if (local !== undefined) return local;
  for (const t of await gitExecTargets(config, repo.workTree, home)) {
    const via = t.links?.find((l) => roots.some((r) => inside(l, r)));
    if (via !== undefined && !t.ifExists) {
      return `${t.key} names ${t.value} through the symbolic link ${via}`;
    }
    if (!roots.some((r) => inside(t.path, r))) continue;
    if (existsNow(t.path)) {
      return `${t.key} names ${t.path}`;
    }
  }
  return undefined;
}

/** The files of a git directory that configure or redirect git, checked for hard links. */
const CONTROL_FILES = ["config", "config.worktree", "commondir", "gitdir"];

/**
 * The control files of the git directory `dir` (`config`, `config.worktree`,
 * `commondir`, `gitdir`, each entry of `hooks/`) that are regular files with
 * more than one name.
 */
export function linkedControlFiles(dir: string): string[] {
  const paths = CONTROL_FILES.map((n) => join(dir, n));
  try {
    for (const e of Deno.readDirSync(join(dir, "hooks"))) paths.push(join(dir, "hooks", e.name));
  } catch {
    // no hooks directory
  }
  const out: string[] = [];
  for (const p of paths) {
    const info = lstatOrNone(p);
    if (info?.isFile && (info.nlink ?? 1) > 1) out.push(p);
  }
  return out;
}

/** A file's bytes, up to 1 MiB more than git reads; undefined when not a regular file. */
function readBytes(path: string): Promise<Uint8Array | undefined> {
  // Opened without blocking: a FIFO put in the file's place cannot stop the walk.
  const r = readRegularNow(path, 1 << 20);
  return Promise.resolve(r instanceof Uint8Array ? r : undefined);
}

/**
 * Why penguin cannot follow `repo` to its git directories as git does: its
 * `.git` file, or a `commondir` file of a git directory, is not UTF-8 (Deno
 * would read the path lossily and miss what git reads), or has another name
 * (a hard link the model can rewrite it through). Undefined when none.
 */
export async function pointerProblem(repo: NestedRepo): Promise<string | undefined> {
  const strict = new TextDecoder("utf-8", { fatal: true });
  const files = [repo.kind === "dotgit" ? repo.entry : join(repo.entry, "commondir")];
  for (const dir of await nestedGitDirs(repo).catch(() => [])) files.push(join(dir, "commondir"));
  for (const f of files) {
    const info = lstatOrNone(f);
    if (!info?.isFile) continue;
    if ((info.nlink ?? 1) > 1) return `${f} has another name (a hard link)`;
    const bytes = await readBytes(f);
    if (bytes === undefined) continue;
    try {
      strict.decode(bytes);
    } catch {
      return `${f} names a path that is not UTF-8, which penguin cannot follow`;
    }
    // Where git and penguin could read the pointer differently, it counts as armed (attack
    // round 18 concgit B1, B2): a NUL (git stops there), a path through /proc or /dev (each
    // process resolves its own), a directory penguin cannot find (git may, another way).
    if (bytes.includes(0)) return `${f} holds a NUL byte`;
    const kind = f === repo.entry && repo.kind === "dotgit" ? "gitdir" : "commondir";
    const named = await pointerNamed(f, kind);
    if (named === undefined) continue;
    const base = dirname(f);
    const odd = readerDependentPointer(base, named);
    if (odd !== undefined) return `${f} ${odd}`;
    const pointed = await pointedDirOf(base, named);
    if (pointed.dir === undefined) {
      return `${f} names ${named}, which is no directory penguin can find`;
    }
    const via = pointed.links.find((l) => readerDependentPointer("/", l) !== undefined);
    if (via !== undefined) return `${f} names its directory through ${via}`;
  }
  return undefined;
}

/**
 * Real paths of the git directories of `repo`: the one it is or names, then
 * the common directory its `commondir` file names, if another one.
 */
export async function nestedGitDirs(repo: NestedRepo): Promise<string[]> {
  return (await nestedLayout(repo)).gitDirs;
}

/**
 * The git directories of `repo` ({@linkcode nestedGitDirs}) and the symbolic
 * links its `.git` file and `commondir` paths go through on the way to them.
 */
async function nestedLayout(repo: NestedRepo): Promise<{ gitDirs: string[]; links: string[] }> {
  if (repo.kind !== "bare") {
    const layout = await findGitLayout(repo.workTree);
    return { gitDirs: layout.gitDirs, links: layout.links ?? [] };
  }
  const real = realPathOrNone(repo.entry);
  if (real === undefined) return { gitDirs: [], links: [] };
  const common = await commondirOf(real);
  const gitDirs = common?.dir && common.dir !== real ? [real, common.dir] : [real];
  return { gitDirs, links: common?.links ?? [] };
}

/**
 * The entries of the git directory `dir` that configure or redirect git
 * (`GIT_GUARDED_ENTRIES`: `config`, `config.worktree`, `hooks`, `commondir`,
 * `info/`…) and are symbolic links.
 */
export async function symlinkedEntries(dir: string): Promise<string[]> {
  // Listed, not looked up one by one: a plan of a read-only git directory looks at none.
  const links = (d: string) => {
    const names = new Set<string>();
    try {
      for (const e of Deno.readDirSync(d)) if (e.isSymlink) names.add(e.name);
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
  const id = (p: string) => Deno.lstat(p).then(fileId, () => "-");
  const target = (p: string) => Deno.stat(p).then(fileId, () => "-");
  const parts = [await id(repo.entry), ...await conventionalState(repo.workTree)];
  const gitDirs = await nestedGitDirs(repo).catch(() => [] as string[]);
  for (const dir of gitDirs) {
    parts.push(dir, await id(dir));
    for (const name of ["config", "config.worktree", "hooks", "commondir", "gitdir"]) {
      parts.push(await id(join(dir, name)), await target(join(dir, name)));
    }
    // Each hook by name and file: a hook added to the user's repository in a sandbox that went
    // without its mount left `hooks`' own inode unchanged, and the repository trusted (attack
    // round 30 m02). The directory's times change with every hook git samples, so not those.
    const hooks = join(dir, "hooks");
    try {
      for (const name of listDirNow(hooks).map((e) => e.name).sort()) {
        parts.push(`hook:${name}`, await id(join(hooks, name)));
      }
    } catch {
      parts.push("hooks:unlisted");
    }
  }
  for (const dir of gitDirs) parts.push(...await modulesIdentity(dir));
  return parts.join(" ");
}

/**
 * What identifies the submodule git directories below `<gitDir>/modules/`
 * (`git_modules.ts`) for {@linkcode repoIdentity}: each one's path and
 * inode, its `config`, `config.worktree`, `hooks` and `commondir`, and each
 * entry of its `hooks`; the links and unreadable directories found, and
 * whether the look went past its limit. A submodule git directory made,
 * replaced or given a hook changes it.
 */
async function modulesIdentity(gitDir: string): Promise<string[]> {
  const id = (p: string) => Deno.lstat(p).then(fileId, () => "-");
  const scan = moduleGitDirs(gitDir);
  const parts = scan.overflow ? ["modules:overflow"] : [];
  for (const l of scan.links) parts.push(`link:${l}`);
  for (const u of scan.unreadable) parts.push(`unreadable:${u}`);
  for (const dir of scan.dirs) {
    parts.push(`module:${dir}`, await id(dir));
    for (const name of ["config", "config.worktree", "hooks", "commondir"]) {
      parts.push(await id(join(dir, name)));
    }
    const hooks = join(dir, "hooks");
    try {
      const names = listDirNow(hooks).map((e) => e.name).sort();
      for (const name of names) parts.push(`hook:${name}`, await id(join(hooks, name)));
    } catch {
      // no hooks directory
    }
  }
  return parts;
}

/**
 * The state of each conventional hook directory at `top` (missing or empty, a
 * link, or holding something), in {@linkcode CONVENTIONAL_HOOK_DIRS} order:
 * a nested repository's missing ones get no stand-in (`plan.ts`), so one a
 * command fills changes the repository's identity, and the repository is
 * checked (and disarmed) after the command like a new one.
 */
async function conventionalState(top: string): Promise<string[]> {
  return await Promise.all(CONVENTIONAL_HOOK_DIRS.map(async (name) => {
    const dir = join(top, name);
    const info = lstatOrNone(dir);
    if (info === undefined) return "-";
    if (!info.isDirectory) return "l";
    // An empty one runs nothing and counts as missing: a penguin's stand-in (a session on the
    // repository holds its missing hook directories) or a command's `mkdir .hooks` made the
    // user's own repository look changed, and it was renamed aside for the user's own hook
    // (attack round 29 i10, round 30 n09, round 28 e31). Filled, it changes the identity.
    return await isEmptyDir(dir) ? "-" : "n";
  }));
}

/**
 * Device and inode; for a regular file also its link count, size, and
 * modification and change times: a file with another name keeps its inode
 * when written through that name. (A directory's times change whenever the
 * user's git writes its index: not compared.)
 */
function fileId(i: Deno.FileInfo): string {
  const base = `${i.dev}:${i.ino}`;
  if (!i.isFile) return base;
  return `${base}:${i.nlink}:${i.size}:${i.mtime?.getTime()}:${i.ctime?.getTime()}`;
}

/**
 * How a disarm renames: `Deno.rename`. Replaced only by tests, to make a
 * rename fail (root, whom tests run as, passes every permission check).
 */
export const disarmRename: { rename: (from: string, to: string) => Promise<void> } = {
  // By name in its directory as penguin checked it: a link swapped in above it is not followed.
  rename: (from, to) => renameInDir(from, to),
};

/** Rename `path` to the first free `<path><suffix>[-n]`; the new path. */
export async function renameAside(path: string): Promise<string> {
  for (let n = 0;; n++) {
    const to = `${path}${DISARMED_SUFFIX}${n === 0 ? "" : `-${n}`}`;
    if (existsNow(to)) continue;
    await disarmRename.rename(path, to);
    return to;
  }
}

/** A repository found armed whose disarm failed (this process), with what it was checked against. */
interface Stuck {
  repo: NestedRepo;
  roots: readonly string[];
  why: string;
  error: string;
}

/** Armed repositories penguin could not disarm, by the path it failed to rename. */
const stuck = new Map<string, Stuck>();

/**
 * Why no command may start: a repository a command armed that penguin could
 * not disarm ({@linkcode disarmNewRepos}) and that is still armed, or an end
 * walk that found the tree changing under it and, walked again now, still
 * does (a settled one disarms what it finds), or undefined. One whose `.git` (or `HEAD`) is gone, or that is no longer armed,
 * is forgotten.
 */
export async function undisarmedRepo(): Promise<string | undefined> {
  for (const [root, u] of unsettled) {
    if ((await disarmWalk(u.workspace, u.before, u.roots, u.skip)).consistent) {
      unsettled.delete(root);
      continue;
    }
    return `another command is changing the directories of "${root}" (a background command, ` +
      `or another penguin working there) while penguin walks them for git repositories a ` +
      `command made, so it could not see the tree settled and a repository made there could ` +
      `go unchecked. No command runs until a walk sees it settled: wait for that command to ` +
      `end (or stop it with kill_command), then try again`;
  }
  for (const [target, s] of stuck) {
    const reason = lstatOrNone(target) === undefined
      ? undefined
      : await armedReason(s.repo, s.roots).catch((err) => `it cannot be checked (${err})`);
    if (reason === undefined) {
      stuck.delete(target);
      continue;
    }
    return `the repository "${s.repo.workTree}" that a command made would make git run ` +
      `something from the workspace (${reason}), and penguin could not disarm it by renaming ` +
      `"${target}" (${s.error}). No command runs until it is gone: remove "${target}" ` +
      `(or rename it), or fix the permissions of "${s.repo.workTree}" so penguin can rename it`;
  }
  return undefined;
}

/** A repository penguin disarmed, and why. */
export interface Disarmed {
  /** What was renamed. */
  from: string;
  /** Its new name. */
  to: string;
  why: string;
  /** Why the rename failed (`to` empty). */
  error?: string;
}

/**
 * Disarm every repository below `workspace` that is not in `before` (the
 * repositories found when the sandbox was planned), or is at the same path
 * with another {@linkcode repoIdentity} (a new one in its place), and would
 * make git run something from `roots` (`skip`: directories below `workspace`
 * not to enter, as for {@linkcode findNestedRepos}). The walk has no limit: whatever the
 * command made is looked at (listing an entry costs far less than making it), and its
 * memory is bounded all the same: a directory's entries are read as they come, and only
 * its subdirectories' paths are kept.
 * Never rejects: a repository that cannot be renamed is reported with `to`
 * empty.
 */
export async function disarmNewRepos(
  workspace: string,
  before: readonly NestedRepoMark[],
  roots: readonly string[],
  skip: readonly string[] = [],
): Promise<Disarmed[]> {
  // A path too long to look into is refused by the next plan's walk, with its cause.
  // One list of run directories for the walk's trust records (`withPlanScope`).
  const { out, consistent } = await withPlanScope(() => disarmWalk(workspace, before, roots, skip));
  if (!consistent) {
    // Walked again by the next plan, which refuses every command until it settles
    // (`undisarmedRepo`). An earlier pending walk keeps its marks: a repository this
    // command's plan took as existing may be one the earlier command made.
    const was = unsettled.get(workspace);
    const marks = was === undefined
      ? before
      : was.before.filter((m) => before.some((b) => b.entry === m.entry && b.id === m.id));
    unsettled.set(workspace, { workspace, before: marks, roots, skip });
  }
  reportDisarmed(out);
  return out;
}

/** An end walk that found the tree changing under it, to be walked again. */
interface Unsettled {
  workspace: string;
  before: readonly NestedRepoMark[];
  roots: readonly string[];
  skip: readonly string[];
}

/** End walks without a consistent view (this process), by root. */
const unsettled = new Map<string, Unsettled>();

/**
 * The repositories a walk of `workspace` takes as the user's unchanged ones
 * (not checked): those of `before` (the plan's findings; none given: no
 * limit) that are also in the root's trusted set (`_repo_trust.ts`), when a
 * session of this process recorded one.
 */
async function knownMarks(
  workspace: string,
  before: readonly NestedRepoMark[] | undefined,
  given?: readonly NestedRepoMark[],
): Promise<Map<string, string>> {
  const trusted = given ?? await trustedRepos(workspace).catch(() => [] as NestedRepoMark[]);
  const marks = trusted === undefined
    ? before ?? []
    : trusted.filter((t) => before === undefined || before.some((b) => sameMark(b, t)));
  return new Map(marks.map((m) => [m.entry, m.id]));
}

function sameMark(a: NestedRepoMark, b: NestedRepoMark): boolean {
  return a.entry === b.entry && a.id === b.id;
}

/** A {@linkcode Disarmed}'s `to` when its target was gone before penguin renamed it. */
export const GONE_BEFORE_RENAME = "(gone before penguin renamed it)";

/**
 * Rename the `.git` (a bare repository's `HEAD`) of the armed `repo` aside; `to` empty when that
 * failed, {@linkcode GONE_BEFORE_RENAME} when it was gone first.
 */
async function disarm(repo: NestedRepo, roots: readonly string[], why: string): Promise<Disarmed> {
  const target = repo.kind === "bare" ? join(repo.entry, "HEAD") : repo.entry;
  let to = "";
  try {
    to = await renameAside(target);
    stuck.delete(target);
  } catch (err) {
    if (lstatOrNone(target) === undefined) {
      // Gone meanwhile (another walk of this root, of this penguin or another, renamed it aside
      // first, or a command moved it): nothing is left to run at this path, and wherever it went
      // the next walk finds it.
      stuck.delete(target);
      return { from: target, to: GONE_BEFORE_RENAME, why };
    }
    // Refused by the next plan while it stays armed (`undisarmedRepo`).
    stuck.set(target, { repo, roots, why, error: String(err) });
    return { from: target, to, why, error: errorMessage(err) };
  }
  return { from: target, to, why };
}

/**
 * {@linkcode disarmNewRepos}'s walk and disarm, whether the walk saw the tree
 * settled, and the directories it could not enter for their path's length.
 * A settled walk drops from the root's trusted set what it did not find as
 * it was (`observeRepos`). `trusted`: the root's trusted set, read already
 * (the last walk of a session, which holds the root's lock).
 */
async function disarmWalk(
  workspace: string,
  before: readonly NestedRepoMark[] | undefined,
  roots: readonly string[],
  skip: readonly string[],
  trusted?: readonly NestedRepoMark[],
): Promise<{ out: Disarmed[]; consistent: boolean; tooLong: string[] }> {
  const out: Disarmed[] = [];
  let consistent = true;
  let tooLong: string[] = [];
  try {
    const known = await knownMarks(workspace, before, trusted);
    const walked = await findNestedRepos(workspace, Infinity, skip);
    const { repos, renamed } = walked;
    consistent = walked.consistent;
    tooLong = walked.tooLong;
    for (const r of renamed) out.push({ ...r, why: UNADDRESSABLE_WHY });
    const seen: NestedRepoMark[] = [];
    for (const repo of repos) {
      const id = known.get(repo.entry);
      const now = id === undefined ? undefined : await repoIdentity(repo);
      if (now !== undefined) seen.push({ entry: repo.entry, id: now });
      // One penguin cannot follow is checked every time: its identity may not cover what git reads.
      if (id !== undefined && id === now && await pointerProblem(repo) === undefined) continue;
      const why = await armedReason(repo, roots).catch((err) => `it cannot be checked (${err})`);
      if (why !== undefined) out.push(await disarm(repo, roots, why));
    }
    if (consistent) {
      await observeRepos(workspace, seen, { roots, skip, inSession: false }).catch(() => {});
    }
  } catch {
    // The workspace is gone: nothing to disarm.
  }
  return { out, consistent, tooLong };
}

/**
 * At a plan: disarm every repository of `repos` (found by a settled walk,
 * `marks` their identities) that is not in the root's trusted set `trusted`
 * and is armed: one a command made and a walk missed (hidden, or left by a
 * session that ended before its walk settled), or the user's own one that a
 * command moved or changed. The ones kept, and those disarmed.
 */
export async function disarmUntrusted(
  repos: readonly NestedRepo[],
  marks: readonly NestedRepoMark[],
  trusted: readonly NestedRepoMark[],
  roots: readonly string[],
): Promise<{ kept: NestedRepo[]; disarmed: Disarmed[] }> {
  const kept: NestedRepo[] = [];
  const disarmed: Disarmed[] = [];
  for (const [i, repo] of repos.entries()) {
    const ok = trusted.some((t) => sameMark(t, marks[i]!)) &&
      await pointerProblem(repo) === undefined;
    const why = ok
      ? undefined
      : await armedReason(repo, roots).catch((err) => `it cannot be checked (${err})`);
    if (why === undefined) kept.push(repo);
    else disarmed.push(await disarm(repo, roots, why));
  }
  return { kept, disarmed };
}

/**
 * At the end of a session, once none of its commands runs: leave every root
 * it used (`_repo_trust.ts`). The last session on a root walks it a last
 * time and disarms what is armed and not the user's unchanged repository;
 * when that walk cannot settle, meets a path too long to look into, or
 * cannot disarm one, the root's record stays (the next penguin there checks
 * it before any command) and `session_end_report.ts` says so.
 */
export async function endNestedRepoWatch(): Promise<void> {
  const fail = (line: string) => noteSessionEnd(line, true);
  await leaveRoots(async (l) => {
    if (!l.last) return;
    const walk = await disarmWalk(l.root, undefined, l.roots, l.skip, l.trusted);
    const { out, consistent, tooLong } = walk;
    reportDisarmed(out);
    if (!consistent) {
      fail(
        `[penguin] the directories of "${l.root}" kept changing during penguin's last walk for ` +
          `git repositories a command made, so one may be left armed there. Do not run git ` +
          `below it until a penguin command there has run (it checks them first)`,
      );
    }
    for (const dir of tooLong) fail(`[penguin] ${tooLongProblem(dir, l.root)}`);
    const clean = consistent && tooLong.length === 0 && out.every((d) => d.to !== "");
    if (clean) unsettled.delete(l.root);
    await l.done(clean);
  }).catch((err) =>
    fail(`[penguin] could not check the workspace for git repositories a command armed: ${err}`)
  );
}

/**
 * Tell the user, in the session's end report, each repository a walk renamed aside, or could not
 * (what the walk after a command renamed was told nowhere: attack round 30 n09).
 */
function reportDisarmed(out: readonly Disarmed[]): void {
  for (const d of out) {
    if (d.to === GONE_BEFORE_RENAME) continue;
    if (d.to !== "") {
      noteSessionEnd(
        `[penguin] renamed "${d.from}" to "${d.to}": ${d.why}, so the host's git would run ` +
          `something a command chose. Look at it before you rename it back`,
        false,
      );
    } else {
      noteSessionEnd(
        `[penguin] "${d.from}" would make git run something a command chose (${d.why}), and ` +
          `penguin could not rename it aside: remove or rename it before you run git there`,
        true,
      );
    }
  }
}

/** Why a directory whose path is too long (`dir`, below `root`) keeps repositories from being checked. */
export function tooLongProblem(dir: string, root: string): string {
  const shown = dir.length > 200 ? `${dir.slice(0, 200)}…` : dir;
  if (!pathTooLong(dir)) {
    return `the directory "${shown}" below "${root}" cannot be listed, so penguin cannot look ` +
      `inside it for git repositories (the host's git would run what their configuration ` +
      `names, reaching them by path). Give it read permission (chmod u+rx), or remove it`;
  }
  return `the directory "${shown}" below "${root}" has a path longer than the system's limit ` +
    `(${PATH_MAX_BYTES} bytes), so penguin cannot look inside it for git repositories (the ` +
    `host's git would run what their configuration names). Move or rename it so its path is ` +
    `shorter (shorten the directory names on the way), or remove it`;
}

/** Why a directory was renamed by the walk. */
export const UNADDRESSABLE_WHY =
  "its name is not UTF-8, so penguin could not look inside it for repositories the host's git would enter";

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
      if (existsNow(other)) {
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
