/**
 * Turn a {@linkcode SandboxPolicy} into a {@linkcode SandboxPlan}: real,
 * existing paths sorted into what is writable, protected and hidden. This is
 * the only part of the argv construction that touches the file system; the
 * bubblewrap and Seatbelt builders are pure functions of the plan.
 *
 * @module
 */
import { basename, dirname, join, relative, sep } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { buildChildEnv } from "./env.ts";
import { type SandboxPolicy, systemSecrets, writableRootPaths } from "./policy.ts";
import { type WorkspaceId, workspaceIdentity } from "./workspace_identity.ts";
import {
  type Placeholder,
  standInGeneration,
  standInPaths,
  standInsKept,
  sweepStandIns,
} from "./_placeholders.ts";
import { privateRunDir, privateRunDirs, withPlanScope } from "./_standin_registry.ts";
import { dataRootsToHide, rememberDataRoot } from "./_data_roots.ts";
import { findGitLayout, GIT_GUARDED_ENTRIES, type GitAccess } from "./git_guard.ts";
import {
  disarmOwnGitLinks,
  type OwnGitLinks,
  ownGitLinks,
  undisarmedOwnLink,
} from "./git_own_links.ts";
import { type HomeMountOptions, homeMounts, type Reveal } from "./_home_plan.ts";
import { type ExecTarget, gitConfigTargets } from "./git_config_guard.ts";
import { CONVENTIONAL_HOOK_DIRS, CONVENTIONAL_KEY } from "./git_hook_scripts.ts";
import {
  type Disarmed,
  disarmUntrusted,
  findNestedRepos,
  gitDirRepoAt,
  GONE_BEFORE_RENAME,
  MAX_GUARDED_REPOS,
  MAX_WALK_PASSES,
  nestedGitDirs,
  type NestedRepo,
  nestedRepoLimit,
  type NestedRepoMark,
  type NestedRepoWalk,
  repoIdentity,
  SCAN_LIMIT_VAR,
  symlinkedEntries,
  tooLongProblem,
  undisarmedRepo,
} from "./git_nested.ts";
import { noteSessionEnd } from "./session_end_report.ts";
import { containingReach, observeRepos } from "./_repo_trust.ts";
import { undisarmedIndex, watchOwnIndexes } from "./git_own_index.ts";
import { existsNow, lstatOrNone, statOrNone } from "./_look.ts";
import { TRUNCATED_OUTPUT_DIR } from "../state/paths.ts";
import { dropHidden, hiddenBindProblem, type HiddenView, isHidden } from "./_hidden_binds.ts";

export type { Placeholder, Reveal };

/** A policy resolved against the file system. All paths are real (symlink-free) and exist. */
export interface SandboxPlan {
  /** True in `workspace-write`: roots are bound writable; else read-only. */
  writableRoots: boolean;
  /**
   * Workspace, scratchpad, revealed writable directories and extra writable
   * directories (extra ones only when writable).
   */
  roots: string[];
  /**
   * Paths inside writable roots re-bound read-only (`penguin.jsonc`, the git
   * directory or its guarded entries). They exist, or are `placeholders`
   * that `spawnSandboxed` creates before the sandbox starts.
   */
  protect: string[];
  /** Missing directories inside writable roots covered by an empty read-only tmpfs. */
  protectMissing: string[];
  /**
   * Writable directories bound onto themselves so they become mount points
   * that cannot be renamed or removed (a writable `.git`: otherwise `mv .git x`
   * and a fresh `.git/hooks` would bypass the read-only hooks). Absent: none.
   */
  pinned?: string[];
  /**
   * Like `pinned`, but bound only if still there when the sandbox starts: the
   * directories on the way to what a repository below a writable root runs
   * (its hooks' files, its configured `core.hooksPath`), which a running
   * command may remove meanwhile. Absent: none.
   */
  pinnedTry?: string[];
  /**
   * Stand-ins for missing protected paths (a missing `.git`, `.git/hooks`,
   * `.git/commondir`…), also listed in `protect`: created with inert content
   * before a bubblewrap sandbox starts and removed after it ends, so the
   * name cannot be created meanwhile and nothing stray is left. Absent: none.
   */
  placeholders?: Placeholder[];
  /**
   * Read-only binds of `source` at `target` inside a hidden directory: the
   * toolchain directories of the hidden home (see `home.ts`). Absent: none.
   */
  reveals?: Reveal[];
  /**
   * Like `protect`, but bound only if still there when the sandbox starts:
   * repositories below the workspace root (and below each other writable
   * root, see {@linkcode gitWalkRoots}), which a running command may
   * remove meanwhile. Absent: none.
   */
  protectTry?: string[];
  /**
   * The repositories below the workspace root and the other writable roots
   * ({@linkcode gitWalkRoots}) when the plan was made
   * (`git_nested.ts`): their git directories are in `protectTry`. Once the sandbox has ended,
   * one that is not listed here was made by the command, and is disarmed if
   * it would make git run something from the workspace, and so is one at a listed
   * path that is not the same repository any more. Absent: not looked for.
   */
  gitRepos?: NestedRepoMark[];
  /**
   * The workspace's own git directories when commands may write them
   * (`--git-writable`), with the links they held: a link a command makes there
   * is renamed aside once it has ended (`git_own_links.ts`).
   */
  ownGit?: OwnGitLinks;
  /**
   * The workspace's own git directories whose index commands may write (`--git-writable`, inside
   * a writable root): read after each command (`git_own_index.ts`). Absent: none.
   */
  gitIndexDirs?: string[];
  /** Directories to hide (an empty tmpfs over them): the data root, the home directory, credentials. */
  hideDirs: string[];
  /**
   * penguin's own state that no command may see, write or lock (the stand-in
   * registry), hidden like `hideDirs` whatever the policy. Absent: none.
   */
  privateDirs?: string[];
  /** Files to hide (`/dev/null` bound over them). */
  hideFiles: string[];
  /** Whether the network is shared with the host. */
  network: boolean;
  /**
   * The workspace directory the session started with (`roots[0]` is its
   * real path): the sandbox binds this directory, opened and checked by
   * inode, not whatever `roots[0]` names when it starts. Absent: bound by path.
   */
  workspaceId?: WorkspaceId;
  /**
   * The identities of `roots[1..]`, in that order (`rootIds[i].path` is
   * `roots[i + 1]`): the directory each root was when the session first saw
   * it, which the sandbox binds opened and checked by inode, like the
   * workspace. Absent: bound by path.
   */
  rootIds?: WorkspaceId[];
  /** Working directory of the child. */
  cwd: string;
  /** The complete child environment. */
  env: Record<string, string>;
}

/** The workspace's confinement policy file (see `workspace_policy.ts`). */
const WORKSPACE_POLICY_FILE = "penguin.jsonc";

/** What the stand-in for a missing `penguin.jsonc` holds: an empty policy, which changes nothing. */
const POLICY_PLACEHOLDER =
  "// penguin: a stand-in that keeps commands from creating this file; removed when they end\n{}\n";

/**
 * Whether `p` has the shape of a stand-in a plan makes: an empty directory
 * (a `.git`, a guarded git directory entry, a hooks directory or a folder on
 * the way to a path git's configuration names), an empty file (a missing
 * configuration file or program git would load or run), a guarded git file
 * with its inert content, or `penguin.jsonc` with the policy stand-in's.
 * Leftovers of a dead penguin are swept only in this shape: a second guard
 * besides the registry itself, which no command can reach.
 */
export function isStandInShape(p: Placeholder): boolean {
  const name = basename(p.path);
  const endsWith = (rel: string) => p.path.endsWith(`${sep}${rel}`);
  if (p.kind === "dir") return true;
  if (name === WORKSPACE_POLICY_FILE) return p.content === POLICY_PLACEHOLDER;
  if (p.content === "") return true;
  return GIT_GUARDED_ENTRIES.some((e) =>
    e.kind === "file" && e.placeholder !== undefined && endsWith(e.rel) &&
    p.content === e.placeholder
  );
}

/** The sweep of dead processes' stand-ins: once per process, before its first writable plan. */
let swept: Promise<void> | undefined;

/**
 * Add to `pinned` every directory strictly between a root of `roots` that
 * holds `path` and `path` itself: bound onto itself, each is a mount point,
 * which no command can rename or remove, so `path` (hidden or protected)
 * cannot be moved aside and replaced by a command's own.
 */
function pinAncestors(
  path: string,
  roots: readonly string[],
  pinned: string[],
  readOnly: readonly string[] = [],
): void {
  // One under a read-only mount (a sealed home's hidden `.cache`, a shown `.cache/pip`) cannot be
  // renamed, and bound writable over it would show what that mount covers again.
  const deepest = (dir: string, list: readonly string[]) =>
    Math.max(-1, ...list.filter((m) => isInside(dir, m)).map((m) => m.length));
  for (const root of roots) {
    if (root === path || !isInside(path, root)) continue;
    for (let dir = dirname(path); dir !== root && isInside(dir, root); dir = dirname(dir)) {
      if (deepest(dir, readOnly) >= deepest(dir, [...roots, ...pinned])) continue;
      if (!pinned.includes(dir)) pinned.push(dir);
    }
  }
}

/** True when `path` is `root` or lies below it. */
export function isInside(path: string, root: string): boolean {
  if (root === "/") return true;
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function real(path: string): { path: string; info: Deno.FileInfo } | undefined {
  try {
    const p = Deno.realPathSync(path);
    return { path: p, info: Deno.statSync(p) };
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw err;
  }
}

/** Like {@linkcode real}, without the `stat`: the real path of `path`, undefined where it is missing. */
function realPathOf(path: string): { path: string } | undefined {
  try {
    return { path: Deno.realPathSync(path) };
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw err;
  }
}

/** Printable ASCII: a name no file system folds or normalizes beyond letter case. */
const PLAIN_NAME = /^[\x20-\x7e]+$/;

/**
 * A cheap "certainly missing" test for many paths at once (the home secrets:
 * about forty names, most of them missing): a directory that holds two or
 * more of `paths` is listed once, and a path whose next name below such a
 * directory is not in its listing is missing without a look-up of its own
 * (`~/.gem/credentials` when `~` has no `.gem`). Answers false (look it up)
 * whenever no listing can tell, so a path that exists is never skipped.
 */
function absenceCheck(paths: readonly string[]): (path: string) => Promise<boolean> {
  const count = new Map<string, number>();
  for (const p of paths) count.set(dirname(p), (count.get(dirname(p)) ?? 0) + 1);
  const listings = new Map<string, Set<string> | "missing" | undefined>();
  const list = (dir: string): Set<string> | "missing" | undefined => {
    try {
      const names = new Set<string>();
      for (const e of Deno.readDirSync(dir)) names.add(e.name.toLowerCase());
      return names;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
        return "missing";
      }
      return undefined; // unreadable: look each path up
    }
  };
  return async (path) => {
    // The listed ancestors of `path`, outermost first: one listing may settle several paths.
    const listed: string[] = [];
    for (let dir = dirname(path), below = path; dir !== below; below = dir, dir = dirname(dir)) {
      if ((count.get(dir) ?? 0) >= 2) listed.unshift(dir);
    }
    for (const dir of listed) {
      let listing = listings.get(dir);
      if (!listing) listings.set(dir, listing = list(dir));
      const names = await listing;
      if (names === "missing") return true;
      const next = path.slice(dir === "/" ? 1 : dir.length + 1).split("/")[0]!;
      // Case-insensitive (macOS, casefolded ext4 directories) and ASCII only (no Unicode
      // normalization to get wrong): a doubtful name is looked up.
      if (!PLAIN_NAME.test(next)) return false;
      if (names !== undefined && !names.has(next.toLowerCase())) return true;
    }
    return false;
  };
}

async function mustBeDir(what: string, path: string): Promise<string> {
  const r = await real(path);
  if (!r) throw new PenguinError("runtime", `Cannot sandbox: the ${what} "${path}" does not exist`);
  if (!r.info.isDirectory) {
    throw new PenguinError("runtime", `Cannot sandbox: the ${what} "${path}" is not a directory`);
  }
  return r.path;
}

/** What {@linkcode protectedPaths} found. */
interface ProtectedPaths {
  protect: string[];
  pinned: string[];
  pinnedTry: string[];
  placeholders: Placeholder[];
  protectTry: string[];
  gitRepos: NestedRepoMark[];
  ownGit?: OwnGitLinks;
}

/**
 * The workspace's protected paths: its confinement policy (read-only to the
 * commands it confines; a missing one gets an inert stand-in, since a policy
 * a command wrote would decide the next session's git access and, with
 * --grant-writable-roots, its writable roots) and its git files, and those
 * of every other writable root.
 */
async function protectedPaths(
  workspace: string,
  roots: string[],
  git: GitAccess,
): Promise<ProtectedPaths> {
  const protect: string[] = [];
  const pinned: string[] = [];
  const pinnedTry: string[] = [];
  const placeholders: Placeholder[] = [];
  // Stand-ins of every penguin process count as missing: they are penguin's, not the user's.
  const standIns = await standInPaths();
  const policyPath = join(workspace, WORKSPACE_POLICY_FILE);
  const held = standIns.has(policyPath);
  // Asynchronous, the one look of a plan that is: a stand-in another penguin creates now shows in
  // the generation read after (see resolvePlan), wherever the look pauses.
  const policyEntry = held ? undefined : await Deno.lstat(policyPath).catch(() => undefined);
  if (policyEntry === undefined) {
    placeholders.push({ path: policyPath, kind: "file", content: POLICY_PLACEHOLDER });
    protect.push(policyPath);
  } else if (policyEntry.isSymlink) {
    // A mount covers the link's target, never the link: a command could replace the link.
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: "${policyPath}" is a symbolic link, and a command could replace it ` +
        `with a policy of its own. Replace the link with a copy of the file it points to, ` +
        `or run with --sandbox read-only`,
    );
  } else {
    const policyFile = await real(policyPath);
    if (policyFile !== undefined && policyFile.path !== policyPath) {
      // The workspace is a real path and the entry no link: a parent was swapped for a link
      // while it was looked at. Kept as missing, so a mount still covers it (or bwrap refuses).
      placeholders.push({ path: policyPath, kind: "file", content: POLICY_PLACEHOLDER });
      protect.push(policyPath);
    } else if (policyFile?.info.isFile && roots.some((r) => isInside(policyFile.path, r))) {
      protect.push(policyFile.path);
    }
  }
  const out: GitGuardOut = { protect, pinned, pinnedTry, placeholders, standIns };
  // Stand-ins of other sessions inside these roots (a session whose workspace lies in this one):
  // read-only here too, so this session's commands cannot remove what the other one mounts.
  for (const p of standIns) {
    if (p === policyPath || !roots.some((r) => isInside(p, r))) continue;
    if (lstatOrNone(p)?.isSymlink === false) protect.push(p);
  }
  // Before any guard looks at them: a root's own `.git` may be disarmed (renamed) here.
  for (const { root } of gitWalkRoots(roots)) await disarmUntrustedOwnGit(root, roots);
  await guardGit(workspace, roots, git, out);
  await guardGitConfig(workspace, roots, git, out);
  const protectTry: string[] = [];
  const gitRepos: NestedRepoMark[] = [];
  for (const [i, { root, skip }] of gitWalkRoots(roots).entries()) {
    // Every other writable root (a trusted `writable_roots` entry, the scratchpad, a revealed
    // directory) gets the workspace's guards too, its own git directory read-only whatever
    // the git access: the user's git runs what a repository there names as well.
    if (i > 0) {
      await guardGit(root, roots, "read-only", out);
      await guardGitConfig(root, roots, "read-only", out);
    }
    const nested = await guardNestedRepos(root, roots, i === 0 ? git : "read-only", out, skip);
    for (const p of nested.protectTry) if (!protectTry.includes(p)) protectTry.push(p);
    gitRepos.push(...nested.gitRepos);
  }
  return {
    protect,
    pinned,
    pinnedTry,
    placeholders,
    protectTry,
    gitRepos,
    ...(out.ownGit ? { ownGit: out.ownGit } : {}),
  };
}

/**
 * The writable roots whose repositories a plan guards and whose new ones are
 * disarmed after each command, each with the other such roots below it (not
 * walked twice): the workspace (`roots[0]`), then every other root that does
 * not lie inside one before it.
 */
export function gitWalkRoots(roots: readonly string[]): { root: string; skip: string[] }[] {
  const chosen: string[] = [];
  for (const r of roots) {
    if (!chosen.some((c) => isInside(r, c))) chosen.push(r);
  }
  return chosen.map((root) => ({
    root,
    skip: chosen.filter((c) => c !== root && isInside(c, root)),
  }));
}

/**
 * The repositories below the workspace root (`git_nested.ts`): each git
 * directory read-only whatever the git access (`--git-writable` opens the
 * workspace's own only), and what each configuration names guarded like the
 * root's. Their mounts go to `protectTry`: a running command may remove a
 * repository before the next sandbox starts, and then there is nothing left
 * to protect (a new one is checked when the sandbox ends). A workspace
 * holding more entries than the walk lists is refused: a repository past the
 * limit would go unguarded.
 */
async function guardNestedRepos(
  workspace: string,
  roots: string[],
  access: GitAccess,
  out: GitGuardOut,
  skip: readonly string[],
): Promise<{ protectTry: string[]; gitRepos: NestedRepoMark[] }> {
  const protectTry: string[] = [];
  const add = (p: string) => {
    if (!roots.some((r) => isInside(p, r)) || protectTry.includes(p)) return;
    if (!out.protect.some((q) => isInside(p, q))) protectTry.push(p);
  };
  const limit = nestedRepoLimit();
  const walk = await findNestedRepos(workspace, limit, skip, MAX_GUARDED_REPOS);
  const { complete, renamed } = walk;
  if (walk.tooManyRepos) throw tooManyReposRefusal(workspace, roots);
  refuseUnsettled(walk, workspace);
  const stuck = renamed.find((r) => r.to === "");
  if (stuck !== undefined) {
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: "${stuck.from}" (U+FFFD stands for bytes that are not UTF-8) is a ` +
        `directory whose name is not UTF-8, which penguin cannot open to look for git ` +
        `repositories inside, and it could not be renamed to a UTF-8 name. Rename it, or run ` +
        `with --sandbox read-only`,
    );
  }
  if (!complete) {
    const what = workspace === roots[0] ? "the workspace" : "the writable root";
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: "${workspace}" holds more than ${limit} files and directories, the most ` +
        `penguin looks through for git repositories below ${what} (the host's git ` +
        `would run what their configuration names); a command would run with the ones past ` +
        `that unguarded. Use a smaller directory as ${what}, move large trees ` +
        `(node_modules, build output) out of it, set ${SCAN_LIMIT_VAR} to a larger number ` +
        `(every command then lists that many entries twice), or run with --sandbox read-only`,
    );
  }
  const repos = await untrustedDisarmed(workspace, walk.repos, roots, skip);
  for (const repo of repos) {
    if (out.protect.some((p) => isInside(repo.entry, p))) continue;
    if (repo.symlink) {
      throw new PenguinError(
        "runtime",
        `Cannot sandbox: "${repo.entry}" is a symbolic link, and a command could point it at a ` +
          `repository of its own. Replace the link with a file holding "gitdir: <its target>" ` +
          `(git follows that the same way), or run with --sandbox read-only`,
      );
    }
    if (repo.entry === workspace) {
      // The root is itself a git directory the user had (`git_nested.ts`): what configures or
      // redirects git there is read-only, not the whole root. The root's configuration guards
      // above cover its work tree.
      for (const e of GIT_GUARDED_ENTRIES) add(join(workspace, e.rel));
      for (const dir of await nestedGitDirs(repo)) {
        if (dir !== workspace) add(dir);
        for (const p of await linkedEntryTargets(dir)) add(p);
      }
      continue;
    }
    const dirs = repo.kind === "bare"
      ? await nestedGitDirs(repo)
      : await findGitLayout(repo.workTree).then((layout) => {
        if (layout.kind === "file") add(layout.dotGit);
        return layout.gitDirs;
      });
    for (const dir of dirs) {
      add(dir);
      for (const p of await linkedEntryTargets(dir)) add(p);
    }
    await guardGitConfig(repo.workTree, roots, access, out, protectTry);
  }
  const gitRepos = await Promise.all(
    repos.map(async (r) => ({ entry: r.entry, id: await repoIdentity(r) })),
  );
  return { protectTry, gitRepos };
}

/** The refusal when the root `workspace` holds more repositories than a plan guards. */
function tooManyReposRefusal(workspace: string, roots: readonly string[]): PenguinError {
  const what = workspace === roots[0] ? "the workspace" : "the writable root";
  return new PenguinError(
    "runtime",
    `Cannot sandbox: "${workspace}" holds more than ${MAX_GUARDED_REPOS} git repositories, the ` +
      `most penguin guards below ${what} (it keeps what each one's configuration names ` +
      `read-only to commands; the host's git would run it). Remove the repositories a command ` +
      `made (\`find "${workspace}" -name .git -o -name HEAD\` lists them), use a smaller ` +
      `directory as ${what}, or run with --sandbox read-only`,
  );
}

/**
 * Throws when the walk of the root `workspace` saw no settled tree, or met a
 * directory whose path is too long to look into: a repository there would go
 * unguarded.
 */
function refuseUnsettled(walk: NestedRepoWalk, workspace: string): void {
  if (!walk.consistent) {
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: the directories of "${workspace}" kept changing while penguin walked ` +
        `them for git repositories to guard (it looked ${MAX_WALK_PASSES} times): another ` +
        `command is renaming or removing directories there (a background command, or another ` +
        `penguin on the same workspace), and a repository it hid would run unguarded. Wait ` +
        `for that command to end (or stop it with kill_command), then try again, or run with ` +
        `--sandbox read-only`,
    );
  }
  if (walk.tooLong.length > 0) {
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: ${tooLongProblem(walk.tooLong[0]!, workspace)}`,
    );
  }
}

/**
 * `repos` (found by a settled, complete walk of the root `workspace`) less
 * those disarmed now: armed ones not in the root's trusted set, the user's
 * repositories as the session's start found them (`_repo_trust.ts`). Throws
 * when one cannot be disarmed. In a session only; outside one, all of them.
 */
async function untrustedDisarmed(
  workspace: string,
  repos: NestedRepo[],
  roots: string[],
  skip: readonly string[],
): Promise<NestedRepo[]> {
  const marks = await Promise.all(
    repos.map(async (r) => ({ entry: r.entry, id: await repoIdentity(r) })),
  );
  const trusted = await observeRepos(workspace, marks, { roots, skip, inSession: standInsKept() });
  if (trusted === undefined) return repos;
  const { kept, disarmed } = await disarmUntrusted(repos, marks, trusted, roots);
  refuseUndisarmed(disarmed);
  return kept;
}

/** Throws when one of `disarmed` could not be renamed aside. */
function refuseUndisarmed(disarmed: readonly Disarmed[]): void {
  const failed = disarmed.find((d) => d.to === "");
  if (failed !== undefined) {
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: "${failed.from}" would make git run something a command chose ` +
        `(${failed.why}), and penguin could not rename it aside${
          failed.error ? ` (${failed.error})` : ""
        }. Remove or rename it, then ` +
        `try again`,
    );
  }
}

/**
 * In a session: disarm the root's own `.git`, and the `.git` of every
 * directory above it up to the root of a record containing it (a penguin
 * that died there without its last walk, `_repo_trust.ts`
 * `containingReach`), when it is armed and that record does not trust it as
 * it is now; a command of that session may have made it. Throws when one
 * cannot be disarmed.
 */
async function disarmUntrustedOwnGit(root: string, roots: readonly string[]): Promise<void> {
  if (!standInsKept()) return;
  const reach = await containingReach(root);
  for (const dir of reach.dirs) {
    const entry = join(dir, ".git");
    const info = lstatOrNone(entry);
    // A directory that is itself a git directory (its own work tree through `core.worktree`,
    // attack round 17 concgit #29, #30) is found by git there and below, as a `.git` is.
    const repos: NestedRepo[] = [
      ...(info === undefined
        ? []
        : [{ workTree: dir, entry, kind: "dotgit", symlink: info.isSymlink } as const]),
      ...[gitDirRepoAt(dir)].filter((r) => r !== undefined),
    ];
    for (const repo of repos) {
      const mark = { entry: repo.entry, id: await repoIdentity(repo) };
      if (reach.trusts(mark)) continue;
      const { disarmed } = await disarmUntrusted([repo], [mark], [], roots);
      refuseUndisarmed(disarmed);
      // Said: a repository renamed aside here may be the user's (attack round 29 i10 found one
      // renamed without a word).
      for (const d of disarmed.filter((d) => d.to !== "" && d.to !== GONE_BEFORE_RENAME)) {
        noteSessionEnd(
          `[penguin] renamed "${d.from}" to "${d.to}": ${d.why}, and it is not as penguin ` +
            `recorded it, so a command may have made or changed it. Look at it before you ` +
            `rename it back`,
          false,
        );
      }
    }
  }
}

/** Workspaces first seen by a plan, for policies made without a `workspaceId` (per process). */
const firstSeen = new Map<string, WorkspaceId>();

/**
 * The identity `policy`'s workspace started with, checked against `workspace`
 * (its real path now). Throws a runtime error when the path now leads
 * elsewhere or to another directory: a process that may rename the workspace
 * or one of its parents (a session whose workspace encloses this one)
 * swapped it, and binding the path would make that other directory writable.
 */
function checkWorkspaceId(policy: SandboxPolicy, workspace: string): WorkspaceId {
  let id = policy.workspaceId ?? firstSeen.get(policy.workspace);
  if (id === undefined) {
    const now = workspaceIdentity(policy.workspace);
    if ("problem" in now) {
      // Never bound by path: a name swapped at this moment would bind another directory.
      throw new PenguinError(
        "runtime",
        `Cannot sandbox: the workspace "${policy.workspace}" cannot be pinned down: ${now.problem}`,
      );
    }
    firstSeen.set(policy.workspace, id = now);
  }
  const info = statOrNone(workspace);
  if (id.path !== workspace || info?.dev !== id.dev || info?.ino !== id.ino) {
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: the workspace "${policy.workspace}" now leads to ` +
        `${id.path === workspace ? "another directory" : `"${workspace}"`}, not to the ` +
        `directory "${id.path}" the session started with (it or one of its parent directories ` +
        `was renamed or replaced by a link). No command runs until it is back; start a new ` +
        `session to work in the directory there now`,
    );
  }
  return id;
}

/** Other writable roots first seen by a plan, for policies made without their identity (per process). */
const rootsFirstSeen = new Map<string, WorkspaceId>();

/**
 * The identity the writable root `given` of `policy` had when the session
 * first saw it, checked against `now` (its real path and status now); like
 * {@linkcode checkWorkspaceId}, a root that now leads elsewhere or to
 * another directory is refused: a session whose workspace holds it (a
 * trusted `writable_roots: ["../shared"]`) swapped it for a link.
 */
function checkRootId(
  policy: SandboxPolicy,
  given: string,
  now: { path: string; info: Deno.FileInfo },
): WorkspaceId {
  let id = policy.rootIds?.[given] ?? rootsFirstSeen.get(given);
  if (id === undefined) {
    const first = workspaceIdentity(given);
    if ("problem" in first) {
      throw new PenguinError(
        "runtime",
        `Cannot sandbox: the writable root "${given}" cannot be pinned down: ${first.problem}`,
      );
    }
    rootsFirstSeen.set(given, id = first);
  }
  if (id.path !== now.path || now.info.dev !== id.dev || now.info.ino !== id.ino) {
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: the writable root "${given}" now leads to ` +
        `${id.path === now.path ? "another directory" : `"${now.path}"`}, not to the ` +
        `directory "${id.path}" the session started with (it or one of its parent directories ` +
        `was renamed or replaced by a link). No command runs until it is back. If you moved it ` +
        `on purpose, start a new session naming the directory by its real path (a writable root ` +
        `reached through a symbolic link is refused)`,
    );
  }
  return id;
}

/**
 * This process's run directory and every other one a penguin of the user
 * keeps, with their real paths; refused when the workspace lies in one.
 * Read once for the plan: the data roots' lists and the hidden directories
 * come from it too.
 */
async function runDirsOutside(
  workspace: string,
): Promise<{ otherRunDirs: string[]; realRunDirs: Map<string, string> }> {
  const otherRunDirs = await privateRunDirs();
  const runDirs = [await privateRunDir().catch(() => undefined), ...otherRunDirs];
  const realRunDirs = new Map<string, string>();
  for (const dir of new Set(runDirs)) {
    // Its real path alone: the list of run directories holds directories only.
    const run = dir === undefined ? undefined : realPathOf(dir);
    if (run && dir !== undefined) realRunDirs.set(dir, run.path);
    if (run && isInside(workspace, run.path)) {
      throw new PenguinError(
        "runtime",
        `Cannot sandbox: the workspace "${workspace}" lies in penguin's private run directory ` +
          `"${run.path}", which no command may reach; choose another workspace`,
      );
    }
  }
  return { otherRunDirs, realRunDirs };
}

/**
 * Resolve `policy` for a child started in `cwd`. Throws a runtime error when
 * the workspace or cwd is missing; silently skips hide entries, scratchpad
 * and extra directories that do not exist. With `opts.check`, a plan only to
 * see whether one can be made (see `HomeMountOptions`): never run a command in it.
 */
export function resolvePlan(
  policy: SandboxPolicy,
  cwd: string,
  opts: HomeMountOptions = {},
): Promise<SandboxPlan> {
  // The run directories are read once for the whole plan (`withPlanScope`).
  return withPlanScope(() => planIn(policy, cwd, opts));
}

async function planIn(
  policy: SandboxPolicy,
  cwd: string,
  opts: HomeMountOptions,
): Promise<SandboxPlan> {
  // Long because: the plan's mounts in the order the sandbox applies them (workspace, revealed
  // and hidden paths, protected files and their stand-ins); each step reads the previous ones.
  const writableRoots = policy.mode === "workspace-write";
  // An armed repository a command left that penguin could not disarm: the user's git would run it.
  const armed = await undisarmedRepo() ?? await undisarmedIndex() ?? await undisarmedOwnLink();
  if (armed !== undefined) throw new PenguinError("runtime", `Cannot sandbox: ${armed}`);
  const workspace = await mustBeDir("workspace", policy.workspace);
  const workspaceId = await checkWorkspaceId(policy, workspace);
  const { otherRunDirs, realRunDirs } = await runDirsOutside(workspace);
  const roots = [workspace];
  const rootIds: WorkspaceId[] = [];
  for (const p of writableRootPaths(policy)) {
    const r = await real(p);
    if (!r?.info.isDirectory || roots.includes(r.path)) continue;
    rootIds.push(checkRootId(policy, p, r));
    roots.push(r.path);
  }

  const protect: string[] = [];
  const protectMissing: string[] = [];
  const pinned: string[] = [];
  const pinnedTry: string[] = [];
  const placeholders: Placeholder[] = [];
  let gitRepos: NestedRepoMark[] | undefined;
  let ownGit: OwnGitLinks | undefined;
  let gitIndexDirs: string[] = [];
  const protectTry: string[] = [];
  // The scratchpad's directory where penguin itself saves a tool's long output: read-only, so
  // no command can swap it for a link and have penguin create files wherever that leads
  // (attack round 26 A16). The session makes it before its first command.
  const archive = policy.scratchpad && join(policy.scratchpad, TRUNCATED_OUTPUT_DIR);
  const archiveInfo = archive ? lstatOrNone(archive) : undefined;
  if (writableRoots && archive && archiveInfo?.isDirectory && !archiveInfo.isSymlink) {
    protect.push(archive);
  }
  if (writableRoots) {
    // Stand-ins a killed penguin left are removed first (the registry still tells them apart).
    await (swept ??= sweepStandIns(isStandInShape));
    // Whether a protected path is a stand-in or the user's file is read from the registry and
    // then from the disk: a stand-in created or removed in between (by any penguin process)
    // would be taken for the other. So the reading is taken again until none came or went.
    for (let attempt = 0;; attempt++) {
      const generation = await standInGeneration();
      const found = await protectedPaths(workspace, roots, policy.git ?? "read-only");
      if (await standInGeneration() === generation || attempt >= 4) {
        protect.push(...found.protect);
        pinned.push(...found.pinned);
        pinnedTry.push(...found.pinnedTry);
        placeholders.push(...found.placeholders);
        gitRepos = found.gitRepos;
        ownGit = found.ownGit;
        protectTry.push(...found.protectTry);
        break;
      }
    }
    gitIndexDirs = await writableGitDirs(workspace, roots, policy.git ?? "read-only");
  }

  // Every data root penguin has used is hidden, not only this session's: another root's vault,
  // traces and logs are no business of this one's commands. One that holds a root of this plan
  // (a workspace chosen inside another data root) cannot be hidden without hiding the root.
  const shown = [...roots, ...(policy.reveal ?? [])];
  const otherRoots = policy.hideOtherDataRoots === false ? [] : await dataRootsToHide(
    policy.dataRoot,
    (p, realPath) =>
      policy.hide.includes(p) ||
      shown.some((root) => isInside(root, p) || isInside(root, realPath)),
    otherRunDirs,
  );
  const others = otherRoots.map((r) => r.noted);
  // Their real paths were just resolved (directories all): not looked up again below.
  const otherReal = new Map(otherRoots.map((r) => [r.noted, r.real]));
  const home = await homeMounts(policy, roots, writableRoots, {
    ...opts,
    hiddenElsewhere: [
      ...realRunDirs.values(),
      ...otherRoots.map((r) => r.real),
      ...policy.dataRoot ? [(await real(policy.dataRoot))?.path ?? policy.dataRoot] : [],
    ],
  });
  for (const p of home.protect) if (!protect.includes(p)) protect.push(p);
  for (const p of home.pinned) if (!pinned.includes(p)) pinned.push(p);
  for (const p of home.placeholders) {
    if (!placeholders.some((q) => q.path === p.path)) placeholders.push(p);
  }
  const hideDirs: string[] = [...home.hidden];
  const hideFiles: string[] = [...home.hiddenFiles];
  if (policy.hideOtherDataRoots === false && policy.dataRoot) {
    await rememberDataRoot(policy.dataRoot);
  }
  // The machine's secrets as they are now: one made during the session is hidden too.
  const hide = [...new Set([...policy.hide, ...systemSecrets(), ...home.hideMore, ...others])];
  const absent = absenceCheck(hide);
  // Inside a hidden home a path needs hiding only where a root or a reveal shows it again
  // (a link there may lead out of it: the real path decides).
  const covered = (p: string) =>
    home.hiddenHomes.some((h) => isInside(p, h)) &&
    !roots.some((root) => isInside(p, root)) &&
    !home.reveals.some((rv) => isInside(p, rv.source) || isInside(p, rv.target));
  for (const p of hide) {
    const known = otherReal.get(p);
    if (known === undefined && await absent(p)) continue;
    const r = known === undefined ? await real(p) : { path: known, info: { isDirectory: true } };
    if (!r || r.path === "/") continue;
    const list = r.info.isDirectory ? hideDirs : hideFiles;
    if (!covered(r.path) && !list.includes(r.path)) list.push(r.path);
    // Shown again through a reveal of a linked directory: hide it at that path too.
    if (r.path !== p && home.reveals.some((rv) => isInside(p, rv.target)) && !list.includes(p)) {
      list.push(p);
    }
  }
  // penguin's run directory (the stand-in registry, which decides what penguin removes from the
  // workspace, and the seccomp filter) is out of every command's reach wherever it lies (a
  // workspace of $HOME or /tmp contains it), and so is the data root: hidden, and the
  // directories above them in a writable root pinned, so that no command can rename its way
  // to a forged one.
  const privateDirs: string[] = [];
  for (const dir of otherRunDirs) {
    const r = realRunDirs.get(dir);
    if (r !== undefined && !privateDirs.includes(r)) privateDirs.push(r);
  }
  // A path the git guard (or the home rule) names inside a hidden one (a hook's word,
  // `core.hooksPath = ../.ssh`) is out of every command's reach already; bound there, it would
  // show the hidden path again (mounts go on by depth). Nothing there needs protecting.
  const view: HiddenView & { shown: string[] } = {
    dirs: [...hideDirs, ...privateDirs],
    files: hideFiles,
    shown: [...roots, ...home.reveals.map((r) => r.target)],
  };
  for (const list of [protect, pinned, protectTry, pinnedTry]) dropHidden(list, view);
  placeholders.splice(
    0,
    placeholders.length,
    ...placeholders.filter((p) => !isHidden(p.path, view)),
  );
  if (writableRoots) {
    const readOnly = [...protect, ...hideDirs, ...(home.reveals.map((r) => r.target))];
    for (const hidden of [...privateDirs, ...hideDirs]) {
      pinAncestors(hidden, roots, pinned, readOnly);
    }
  }
  for (const p of policy.reveal ?? []) {
    const r = await real(p);
    // Inside a root it is visible anyway (and must not turn the root read-only).
    if (!r || r.path === "/" || roots.some((root) => isInside(r.path, root))) continue;
    if (!protect.includes(r.path)) protect.push(r.path);
    // Shown on purpose, where a hidden home holds it.
    view.shown.push(r.path);
  }

  // The last check of the plan: no bind left that would show a hidden path again.
  const shownAgain = hiddenBindProblem([...protect, ...pinned, ...protectTry, ...pinnedTry], view);
  if (shownAgain !== undefined) {
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: "${shownAgain}" would be mounted inside a path the sandbox hides, which ` +
        `would show that path to commands again. Move it out of the hidden directory (or stop ` +
        `hiding that directory), or run with --sandbox read-only`,
    );
  }
  refuseReopened(roots.slice(1), [...protect, ...protectTry]);
  const env = buildChildEnv({
    host: policy.env.host ?? Deno.env.toObject(),
    allow: policy.env.allow,
    vault: policy.env.vault,
    network: policy.network,
    ...(policy.env.login ? { login: policy.env.login } : {}),
  });
  return {
    writableRoots,
    roots,
    protect,
    protectMissing,
    ...(pinned.length > 0 ? { pinned } : {}),
    ...(placeholders.length > 0 ? { placeholders } : {}),
    ...(home.reveals.length > 0 ? { reveals: home.reveals } : {}),
    ...(gitRepos ? { gitRepos } : {}),
    ...(ownGit ? { ownGit } : {}),
    ...(gitIndexDirs.length > 0 ? { gitIndexDirs } : {}),
    ...(protectTry.length > 0 ? { protectTry } : {}),
    ...(pinnedTry.length > 0 ? { pinnedTry } : {}),
    hideDirs,
    ...(privateDirs.length > 0 ? { privateDirs } : {}),
    hideFiles,
    network: policy.network,
    workspaceId,
    rootIds,
    cwd: cwd === policy.workspace ? workspace : await mustBeDir("working directory", cwd),
    env,
  };
}

/**
 * Refuse a writable root of `roots` that is, or lies in, a path of
 * `readOnly`: bound writable over it (mounts go on by depth), it would open
 * it again (a `writable_roots` entry `.git/hooks` let commands write the
 * user's hooks, attack round 19 imports B2).
 */
function refuseReopened(roots: readonly string[], readOnly: readonly string[]): void {
  for (const root of roots) {
    const kept = readOnly.find((p) => isInside(root, p));
    if (kept === undefined) continue;
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: the writable root "${root}" lies in "${kept}", which penguin keeps ` +
        `read-only to commands (git or the user's shell would run what they write there); a ` +
        `writable root there would let them write it. Remove it from writable_roots in ` +
        `${WORKSPACE_POLICY_FILE}, or run with --sandbox read-only`,
    );
  }
}

interface GitGuardOut {
  /** The workspace's own git directories, when commands may write them, and their links. */
  ownGit?: OwnGitLinks;
  protect: string[];
  pinned: string[];
  /** Directories on the way to a nested repository's targets, pinned if still there. */
  pinnedTry: string[];
  placeholders: Placeholder[];
  /** Stand-ins of every penguin process: they count as missing. */
  standIns: ReadonlySet<string>;
}

/**
 * Add the mounts that keep the workspace's git directories (see
 * `git_guard.ts`) from being changed beyond `access`.
 */
async function guardGit(
  workspace: string,
  roots: string[],
  access: GitAccess,
  out: GitGuardOut,
): Promise<void> {
  const { standIns } = out;
  const hold = (p: Placeholder) => {
    out.placeholders.push(p);
    out.protect.push(p.path);
  };
  const layout = await findGitLayout(workspace, standIns);
  const link = lstatOrNone(layout.dotGit);
  if (link?.isSymlink && !standIns.has(layout.dotGit)) {
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: "${layout.dotGit}" is a symbolic link, and a command could replace it ` +
        `with a repository of its own. Replace the link with a file holding ` +
        `"gitdir: <its target>" (git follows that the same way), or run with --sandbox read-only`,
    );
  }
  // The `.git` file's path or `commondir` through a link a command could re-point.
  const via = layout.links?.find((l) => roots.some((r) => isInside(l, r)));
  if (via !== undefined) {
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: "${via}" is a symbolic link on the way to the git directory, and a ` +
        `command could point it elsewhere. Name the git directory by its real path in ` +
        `"${layout.dotGit}" (or its commondir), or run with --sandbox read-only`,
    );
  }
  // Seen through a parent swapped for a link while it was looked at (the workspace is a real
  // path): kept as missing, so a mount still covers it (or bwrap refuses), never left bare.
  const swapped = layout.kind !== "missing" &&
    ((r) => r !== undefined && r.path !== layout.dotGit)(real(layout.dotGit));
  if (layout.kind === "missing" || swapped) {
    hold({ path: layout.dotGit, kind: "dir" });
  } else if (layout.kind !== "dir") {
    // A gitdir pointer: read-only, so it can be neither rewritten nor removed.
    out.protect.push(layout.dotGit);
  }
  await guardGitDirs(layout.gitDirs, roots, access, out);
  if (access === "writable") {
    const writable = layout.gitDirs.filter((d) => roots.some((r) => isInside(d, r)));
    if (writable.length > 0) {
      out.ownGit = ownGitLinks(writable);
      // Links a killed session's command left count too: renamed before this command starts.
      await disarmOwnGitLinks(out.ownGit);
    }
  }
}

/**
 * The real paths the entries of the git directory `dir` that configure or
 * redirect git lead to, where they are symbolic links to something existing:
 * bound read-only like the entry, since git reads through the link.
 */
async function linkedEntryTargets(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const link of await symlinkedEntries(dir)) {
    const r = await real(link);
    if (r && !out.includes(r.path)) out.push(r.path);
  }
  return out;
}

/**
 * The git directories of the workspace whose index commands may write (`access` writable, inside
 * `roots`), watched until the session ends (`git_own_index.ts`).
 */
async function writableGitDirs(
  workspace: string,
  roots: readonly string[],
  access: GitAccess,
): Promise<string[]> {
  if (access !== "writable") return [];
  const dirs = (await findGitLayout(workspace)).gitDirs.filter((d) =>
    roots.some((r) => isInside(d, r))
  );
  watchOwnIndexes(dirs);
  return dirs;
}

/** The mounts that keep the git directories `gitDirs` from being changed beyond `access`. */
async function guardGitDirs(
  gitDirs: readonly string[],
  roots: string[],
  access: GitAccess,
  out: GitGuardOut,
): Promise<void> {
  const inRoots = (p: string) => roots.some((r) => isInside(p, r));
  const { standIns } = out;
  const hold = (p: Placeholder) => {
    out.placeholders.push(p);
    out.protect.push(p.path);
  };
  for (const dir of gitDirs) {
    if (!inRoots(dir)) continue;
    // What a linked config, hooks directory… leads to is as read-only as the entry.
    for (const p of await linkedEntryTargets(dir)) {
      if (inRoots(p) && !out.protect.includes(p)) out.protect.push(p);
    }
    if (access === "read-only") {
      // The whole directory is read-only: its entries need no look-ups.
      if (!out.protect.includes(dir)) out.protect.push(dir);
      continue;
    }
    const entries: { path: string; exists: boolean; parent: boolean }[] = [];
    const parents = new Map<string, boolean>();
    let symlinked = false;
    for (const e of GIT_GUARDED_ENTRIES) {
      const path = join(dir, e.rel);
      const info = standIns.has(path) ? undefined : lstatOrNone(path);
      if (info?.isSymlink) symlinked = true;
      const up = join(path, "..");
      let parent = parents.get(up);
      if (parent === undefined) parents.set(up, parent = !!(await real(up))?.info.isDirectory);
      entries.push({ path, exists: info !== undefined, parent });
    }
    // The directories on the way to a nested entry (`objects` of `objects/info`) are pinned too:
    // renamed aside, `objects/info/alternates` was made anew under a new `objects` and the store
    // moved back (attack round 18 concgit B3). One that is a link is a swappable way there.
    const between = [
      ...new Set(
        GIT_GUARDED_ENTRIES.filter((e) => e.rel.includes("/")).map((e) =>
          join(dir, e.rel.slice(0, e.rel.indexOf("/")))
        ),
      ),
    ].map((path) => ({ path, info: standIns.has(path) ? undefined : lstatOrNone(path) }));
    if (between.some((b) => b.info?.isSymlink)) symlinked = true;
    // A symlinked entry could be swapped for a real one: keep the whole directory read-only.
    if (symlinked) {
      if (!out.protect.includes(dir)) out.protect.push(dir);
      continue;
    }
    if (!roots.includes(dir)) out.pinned.push(dir);
    for (const b of between) {
      if (b.info?.isDirectory && !out.pinned.includes(b.path)) out.pinned.push(b.path);
    }
    GIT_GUARDED_ENTRIES.forEach((e, i) => {
      const { path, exists, parent } = entries[i]!;
      if (exists) out.protect.push(path);
      else if (parent && e.kind === "dir") hold({ path, kind: "dir" });
      else if (parent && e.placeholder !== undefined) {
        hold({ path, kind: "file", content: e.placeholder });
      }
    });
  }
}

/**
 * Add the mounts that keep what git's configuration runs or loads
 * (`git_config_guard.ts`: hooks directories, included configuration files,
 * programs named by `core.fsmonitor`, filters…) read-only: an existing path
 * is bound read-only, the first missing name on the way to a missing one gets
 * a stand-in (an empty directory, or an empty file for a configuration
 * file), and the directories between the root and either are pinned, so a
 * command cannot rename them away and recreate the path unprotected.
 */
async function guardGitConfig(
  workspace: string,
  roots: string[],
  access: GitAccess,
  out: GitGuardOut,
  tryList?: string[],
): Promise<void> {
  const held = out.standIns;
  const layout = await findGitLayout(workspace, held);
  // A nested repository's enclosing ones are the workspace's, guarded on their own.
  const targets = await gitConfigTargets(workspace, layout, access, {
    roots,
    missing: held,
    enclosing: tryList === undefined,
  });
  for (const t of targets) {
    // A nested repository's missing conventional hook directory gets no stand-in (nor pins on
    // the way to one): a plain clone stays removable, and one that a command fills is disarmed
    // after it (`git_nested.ts`: the directories' state is part of the repository's identity).
    if (tryList !== undefined && conventional(t, workspace) && !presentNow(t.path, held)) continue;
    // A link a command could re-point, or an entry a `..` steps out of that it could make one,
    // would send git elsewhere after this plan: refused, and the entries pinned.
    const link = (t.links ?? []).find((l) => roots.some((r) => isInside(l, r)));
    // A bare command word that happens to name a link (git finds programs on PATH) is skipped.
    if (link !== undefined && t.ifExists) continue;
    if (link !== undefined) throw linkOnTheWay(link, t);
    for (const via of t.via ?? []) {
      await guardGitPath(via, "pin", t, roots, out, tryList);
    }
    await guardGitPath(t.path, t.missing, t, roots, out, tryList);
  }
}

/** Whether `t` is one of the conventional hook directories at the top `top` (no setting names it). */
function conventional(t: ExecTarget, top: string): boolean {
  return t.key === CONVENTIONAL_KEY && t.why !== undefined &&
    CONVENTIONAL_HOOK_DIRS.some((n) => t.path === join(top, n));
}

/** Whether `path` exists and is not a stand-in of `held`. */
function presentNow(path: string, held: ReadonlySet<string>): boolean {
  return !held.has(path) && lstatOrNone(path) !== undefined;
}

function linkOnTheWay(link: string, t: ExecTarget): PenguinError {
  return new PenguinError(
    "runtime",
    `Cannot sandbox: "${link}" is a symbolic link on the way to "${t.path}", which git ` +
      `runs or reads (${
        t.why ?? `${t.key} = ${t.value}`
      }), and a command could point it elsewhere. ` +
      `Replace the link with what it points to, or run with --sandbox read-only`,
  );
}

/**
 * Keep `path` (a target of `t`, or with `how` "pin" an entry a `..` of its
 * path steps out of) as it is: an existing one bound read-only (or, to pin,
 * bound to itself), the first missing name on the way held by a stand-in,
 * the directories on the way pinned; a link on the way is refused. A path
 * read-only already (a stand-in this or another session holds, which a
 * plan made after the first finds in the registry) still gets the
 * directories on the way pinned: else `mv scripts s2 && mkdir scripts`
 * would move the stand-in aside and leave its name free.
 */
function guardGitPath(
  path: string,
  how: "dir" | "file" | "pin",
  t: ExecTarget,
  roots: string[],
  out: GitGuardOut,
  tryList?: string[],
): void {
  const held = out.standIns;
  const root = roots.filter((r) => isInside(path, r)).sort((a, b) => b.length - a.length)[0];
  // A nested repository's targets go to `tryList`: a path under one listed there is covered too.
  const cover = [...out.protect, ...(tryList ?? [])].find((p) => isInside(path, p));
  if (cover !== undefined) {
    if (root !== undefined && cover !== root) pinWayTo(cover, root, out, tryList);
    return;
  }
  if (root === undefined) return;
  if (root === path) {
    if (how === "pin") return;
    // A root's top level cannot be bound read-only: the plan went on with it writable, and the
    // model's `pre-commit` in the workspace `~/.githooks` ran at the user's next host `git
    // commit` (attack round 25 concgit c29).
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: ${root === roots[0] ? "the workspace" : "the writable root"} "${root}" ` +
        `is what git ${t.use === "run" ? "runs" : "reads"} (${
          t.why ?? `${t.key} = ${t.value}`
        }), which must stay read-only to commands. Use another directory, or run with ` +
        `--sandbox read-only`,
    );
  }
  let cur = root;
  let missingAt: string | undefined;
  const between: string[] = [];
  for (const part of relative(root, path).split(sep)) {
    if (cur !== root) between.push(cur);
    cur = join(cur, part);
    const info = held.has(cur) ? undefined : lstatOrNone(cur);
    if (info === undefined) {
      missingAt = cur;
      break;
    }
    // A bare command word that happens to name a link (git finds programs on PATH) is skipped.
    if (info.isSymlink && t.ifExists) return;
    if (info.isSymlink) throw linkOnTheWay(cur, t);
  }
  if (how === "pin" && missingAt === undefined) between.push(path);
  pinAll(between, out, tryList);
  const protect = tryList ?? out.protect;
  if (missingAt === undefined) {
    if (how !== "pin" && !protect.includes(path)) protect.push(path);
  } else if (!out.placeholders.some((p) => p.path === missingAt)) {
    const kind = missingAt === path && how === "file" ? "file" : "dir";
    out.placeholders.push(
      kind === "file" ? { path: missingAt, kind, content: "" } : { path: missingAt, kind },
    );
    out.protect.push(missingAt);
  }
}

/**
 * Pin `dirs`. A nested repository's paths may vanish before the sandbox
 * starts: pinned if still there (`tryList` given), never inside its
 * read-only git directory, which a writable bind would open again.
 */
function pinAll(dirs: readonly string[], out: GitGuardOut, tryList?: string[]): void {
  const pins = tryList ? out.pinnedTry : out.pinned;
  for (const dir of dirs) {
    if (pins.includes(dir) || out.protect.some((p) => isInside(dir, p))) continue;
    if (tryList?.some((p) => isInside(dir, p))) continue;
    pins.push(dir);
  }
}

/**
 * Pin the directories strictly between `root` and `path` (inside it) that
 * exist as directories, up to the first that does not (or is a link: what
 * lies past it is not `path`'s way any longer).
 */
function pinWayTo(path: string, root: string, out: GitGuardOut, tryList?: string[]): void {
  const between: string[] = [];
  let cur = root;
  for (const part of relative(root, dirname(path)).split(sep)) {
    if (part === "" || part === ".") continue;
    cur = join(cur, part);
    const info = out.standIns.has(cur) ? undefined : lstatOrNone(cur);
    if (info === undefined || !info.isDirectory) break;
    between.push(cur);
  }
  pinAll(between, out, tryList);
}

/**
 * `plan` without the hidden paths that are gone by now, looked up just before the sandbox starts.
 * What another penguin keeps (its run directory, its data root) goes away whenever it ends, and
 * bubblewrap fails to hide a directory removed with its parent (it makes the mount point's
 * parents on a read-only root); on a loaded machine the plan is often a second old when bubblewrap
 * starts. A path gone is nothing to hide, as a path missing when planned is (`--tmpfs` is for
 * what exists); one made again at that path later is the next plan's, as any made while the
 * command runs.
 */
export function withoutGoneHidden(plan: SandboxPlan): SandboxPlan {
  const hideDirs = plan.hideDirs.filter(existsNow);
  const hideFiles = plan.hideFiles.filter(existsNow);
  const privateDirs = plan.privateDirs?.filter(existsNow);
  const same = hideDirs.length === plan.hideDirs.length &&
    hideFiles.length === plan.hideFiles.length &&
    privateDirs?.length === plan.privateDirs?.length;
  return same ? plan : { ...plan, hideDirs, hideFiles, ...(privateDirs ? { privateDirs } : {}) };
}

/**
 * The path a bubblewrap setup message names (`Can't mkdir parents for /x: Read-only file
 * system`): the text between the verb and the last `: ` of its line.
 */
const SETUP_MESSAGE_PATH = /\bCan't [a-z ]+? (\/[^\n]*?): [^:\n]+$/m;

/**
 * Whether a path `plan` mounts, hides or protects no longer exists, or the setup message `said`
 * (bubblewrap's own) names a path that no longer does; a path the plan knew to be missing is no
 * news. The message counts because a directory removed with its parent (another penguin's run
 * directory, a test's temp dir) fails the mount at its parent, whichever list held it.
 */
export function planPathVanished(plan: SandboxPlan, said = ""): boolean {
  const paths = [
    ...plan.roots,
    ...plan.hideDirs,
    ...(plan.privateDirs ?? []),
    ...plan.hideFiles,
    ...plan.protect,
    ...(plan.pinned ?? []),
    ...(plan.reveals ?? []).map((r) => r.source),
  ];
  // Missing when planned: the stand-ins of missing protected paths (made while the sandbox runs)
  // and the paths a tmpfs takes the place of.
  const known = new Set([...(plan.placeholders ?? []).map((p) => p.path), ...plan.protectMissing]);
  for (const p of paths) {
    if (!known.has(p) && !existsNow(p)) return true;
  }
  const named = SETUP_MESSAGE_PATH.exec(said)?.[1];
  return named !== undefined && !known.has(named) && !existsNow(named);
}
