/**
 * With `--git-writable` the workspace's own git directory is the commands'
 * to write, but for the entries that configure git (`git_guard.ts`): a
 * command could make `COMMIT_EDITMSG`, `FETCH_HEAD` or a reflog a link to a
 * file outside the workspace, which the user's next `git commit`, `git
 * fetch` or `git stash` writes through (`logs/refs/stash` → `~/.bashrc`:
 * the stash subject the model chose ran in the user's next shell, attack
 * round 19 concgit R4). So every link in it outside the entries commands
 * cannot write (`hooks`, `info`, `config`…: the user's own links stay there)
 * is renamed aside (`<name>-disarmed-by-penguin`) before and after each
 * command, and said at the session end.
 *
 * @module
 */
import { join, relative } from "node:path";
import { findParkedRepo } from "./_git_parked.ts";
import { lstatOrNone } from "./_look.ts";
import { gitDirLinks, MAX_GIT_DIR_ENTRIES } from "./_git_dir_traps.ts";
import { GIT_GUARDED_ENTRIES } from "./git_guard.ts";
import { renameAside } from "./git_nested.ts";
import { noteSessionEnd } from "./session_end_report.ts";

/** The workspace's own git directories that commands may write. */
export interface OwnGitLinks {
  gitDirs: readonly string[];
}

/** What {@linkcode disarmOwnGitLinks} must look through for `gitDirs`. */
export function ownGitLinks(gitDirs: readonly string[]): OwnGitLinks {
  return { gitDirs: [...gitDirs] };
}

/**
 * Whether `path` lies in an entry of the git directory `dir` that commands
 * cannot write whatever the git access (`GIT_GUARDED_ENTRIES`: `hooks`,
 * `info`, `config`…): a link there is the user's (a shared hooks directory).
 */
function guarded(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return GIT_GUARDED_ENTRIES.some((e) => rel === e.rel || rel.startsWith(`${e.rel}/`));
}

/** Why no command may start: a link penguin could not rename, or a git directory it could not look through. */
let stuck: string | undefined;
/** The git directories of the check that found it. */
let stuckOwn: OwnGitLinks | undefined;

/**
 * Before and after each command: rename aside every link of `own`'s git
 * directories outside their guarded entries (a link left by a session whose
 * penguin was killed counts as well as one a command just made, round 20
 * concgit R6); the renamed ones, each said at the session end. One that
 * cannot be renamed, or a git directory too large to look through (a
 * command can fill it to hide a link, R5), stops every later command
 * ({@linkcode undisarmedOwnLink}).
 */
export async function disarmOwnGitLinks(
  own: OwnGitLinks,
): Promise<{ from: string; to: string }[]> {
  const out: { from: string; to: string }[] = [];
  stuck = undefined;
  stuckOwn = own;
  for (const dir of own.gitDirs) {
    // Every entry: a command can fill the git directory to push a link past any limit (round 20
    // concgit R5); listing costs less than making.
    const { links, over } = gitDirLinks(dir, Infinity, Infinity);
    if (over) {
      stuck = `"${dir}" holds more than ${MAX_GIT_DIR_ENTRIES} entries outside its object store, ` +
        `so penguin cannot look through it for links a command made (your git would write ` +
        `through one). No command runs until it holds fewer; or run without --git-writable`;
      noteSessionEnd(`[penguin] ${stuck}`, true);
    }
    for (const from of links) {
      // One renamed aside already stays so (git writes no file of that name but for a branch
      // named so, which the user would have to make).
      if (guarded(dir, from) || /-disarmed-by-penguin(-\d+)?$/.test(from)) continue;
      const to = await renameAsideOrNone(from);
      out.push({ from, to });
      if (to === "") {
        stuck = `"${from}" is a link (or a name penguin cannot use) in your git directory, which ` +
          `your git would write through, and penguin could not rename it aside. No command runs ` +
          `until it is gone: remove it`;
      }
      noteSessionEnd(
        to === ""
          ? `[penguin] could not rename "${from}", a link in your git directory, which your git ` +
            `would write through: remove it before you run git there`
          : `[penguin] renamed "${from}" to "${to}": it was a link in your git directory, which ` +
            `your git would write through to the file it leads to`,
        to === "",
      );
    }
    await disarmParked(dir, out);
  }
  return out;
}

/** Parked repositories disarmed in one git directory at most, per call. */
const MAX_PARKED_DISARMED = 16;

/**
 * A repository parked in the writable git directory `dir` (a remote of a repository a command made
 * names it, and git runs its `pre-receive` at the user's push: attack round 32 u10) stops being
 * one: its `HEAD` (and `commondir`) renamed aside, said at the session's end. The root's own linked
 * work trees (`worktrees/<name>`) and submodules (`modules/`) are the user's.
 */
async function disarmParked(dir: string, out: { from: string; to: string }[]): Promise<void> {
  for (let i = 0; i < MAX_PARKED_DISARMED; i++) {
    const found = findParkedRepo(dir, (rel) => /^worktrees\/[^/]+$/.test(rel));
    if (found === undefined) return;
    if (found.path === undefined) {
      stuck = `${found.why}. No command runs until it is gone; or run without --git-writable`;
      noteSessionEnd(`[penguin] ${stuck}`, true);
      return;
    }
    for (const name of ["HEAD", "commondir"]) {
      const from = join(found.path, name);
      if (lstatOrNone(from) === undefined) continue;
      const to = await renameAsideOrNone(from);
      out.push({ from, to });
      noteSessionEnd(
        to === ""
          ? `[penguin] could not rename "${from}": ${found.why}; remove it before you push`
          : `[penguin] renamed "${from}" to "${to}": ${found.why}`,
        to === "",
      );
      if (to === "") {
        stuck = `"${found.path}" is a repository parked in your git directory, and penguin could ` +
          "not disarm it. No command runs until it is gone: remove it";
        return;
      }
    }
  }
}

/** Why no command may start ({@linkcode disarmOwnGitLinks}, tried again now), or undefined. */
export async function undisarmedOwnLink(): Promise<string | undefined> {
  if (stuck !== undefined && stuckOwn !== undefined) await disarmOwnGitLinks(stuckOwn);
  return stuck;
}

/** `path` renamed aside as a disarmed repository is (never removed); its new name, "" when that failed. */
function renameAsideOrNone(path: string): Promise<string> {
  // By name in its directory as it is now: a link swapped in above it is not followed
  // (removing or renaming by path once took the user's ~/.ssh/authorized_keys, round 20 R4).
  return renameAside(path).catch(() => "");
}
