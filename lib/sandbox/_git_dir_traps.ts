/**
 * What in a git directory a command made would turn the user's next git
 * command against the host, beyond its configuration and hooks
 * (`git_nested.ts` counts a repository holding one as armed):
 *
 * - a symbolic link, or a file with another name (a hard link), anywhere in
 *   it but the object store: git appends to `logs/**` and writes
 *   `COMMIT_EDITMSG`, `FETCH_HEAD`, `MERGE_MSG`… by opening the path, so a
 *   link there makes the user's `git commit`, `git stash` or `git fetch` write
 *   into the file it leads to (`logs/refs/stash` → `~/.bashrc`: the stash
 *   subject the model chose became a line of the user's shell startup, attack
 *   round 19 concgit R4). In `objects/` git only ever makes new files, and
 *   only its top, `info/` and `pack/` are looked at;
 * - a rebase, `am`, cherry-pick or revert in progress (`rebase-merge/`,
 *   `rebase-apply/`, `sequencer/`): the todo's `exec` lines run at the user's
 *   `git rebase --continue` (R3).
 *
 * A git directory with more entries than {@linkcode MAX_GIT_DIR_ENTRIES}
 * outside its object store counts as one too: what was not looked at could
 * hold either.
 *
 * @module
 */
import { basename, join } from "node:path";
import { existsNow, listDirNow, lstatOrNone } from "./_look.ts";

/** Entries of a git directory looked at, its object store aside. */
export const MAX_GIT_DIR_ENTRIES = 50_000;

/** The directories of a git directory that hold other git directories. */
const OTHER_GIT_DIRS = new Set(["modules", "worktrees"]);

/** The state directories of an operation in progress whose todo may hold `exec` lines. */
const SEQUENCE_DIRS = ["rebase-merge", "rebase-apply", "sequencer"];

/** Why the git directory `dir` would make the user's git write or run elsewhere; undefined when nothing. */
export function gitDirTrap(dir: string): string | undefined {
  for (const name of SEQUENCE_DIRS) {
    const path = join(dir, name);
    if (existsNow(path)) {
      return `${path} holds an operation in progress, whose todo's exec lines the user's ` +
        `next git rebase --continue would run`;
    }
  }
  return linkIn(dir);
}

/** The first symbolic link or multiply-linked file below `dir` (objects aside), or a reason it was not looked through. */
function linkIn(dir: string): string | undefined {
  const { links, over } = gitDirLinks(dir, 1);
  if (over) return `${dir} holds more than ${MAX_GIT_DIR_ENTRIES} entries outside its object store`;
  const path = links[0];
  if (path === undefined) return undefined;
  if (path.includes("\uFFFD")) {
    return `${path} has a name that is not UTF-8, which penguin cannot look into`;
  }
  return lstatOrNone(path)?.isSymlink
    ? `${path} is a symbolic link, which the user's git would write through`
    : `${path} has another name (a hard link), which the user's git would write through`;
}

/**
 * The symbolic links and multiply-linked files below the git directory `dir`
 * (its object store aside, but for the top, `info/` and `pack/`; a local
 * clone's hard-linked packs aside), at most `most` of them; `over` when it
 * holds more than `maxEntries` entries (default {@linkcode MAX_GIT_DIR_ENTRIES}).
 */
export function gitDirLinks(
  dir: string,
  most = Infinity,
  maxEntries = MAX_GIT_DIR_ENTRIES,
): { links: string[]; over: boolean } {
  const queue = [dir];
  const links: string[] = [];
  let seen = 0;
  while (queue.length > 0 && links.length < most) {
    const at = queue.shift()!;
    let entries: Deno.DirEntry[];
    try {
      entries = listDirNow(at);
    } catch {
      continue; // gone or unreadable: git cannot write through it either
    }
    for (const e of entries) {
      if (++seen > maxEntries) return { links, over: true };
      const path = join(at, e.name);
      // A name that is not UTF-8 (read with U+FFFD) cannot be looked into or renamed by it: a
      // reflog link below such a directory went unseen (attack round 20 concgit R3).
      if (e.name.includes("\uFFFD")) {
        links.push(path);
      } else if (e.isSymlink) {
        links.push(path);
      } else if (e.isDirectory) {
        // Below an object store's top (any `objects/`: one of a git directory parked inside this
        // one too) only `info/` and `pack/`: its other directories hold objects alone, which git
        // never opens to write. `modules/` and `worktrees/` hold git
        // directories of their own, each looked at as one (`git_nested.ts`).
        if (at === dir && OTHER_GIT_DIRS.has(e.name)) continue;
        if (basename(at) !== "objects" || e.name === "info" || e.name === "pack") queue.push(path);
      } else if (e.isFile && !at.endsWith("/objects/pack") && multiplyLinked(path)) {
        // Packs a local clone made are hard links to the original's: read, never written.
        links.push(path);
      }
    }
  }
  return { links, over: false };
}

function multiplyLinked(path: string): boolean {
  return (lstatOrNone(path)?.nlink ?? 1) > 1;
}
