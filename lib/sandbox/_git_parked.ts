/**
 * A repository parked inside a git directory a command made: the walk of the writable roots never
 * enters a `.git` (git looks for no repository there), but a remote, a `branch.*.remote`, a file
 * holding `gitdir:` or any path git resolves can name one, and git runs its `pre-receive` and
 * other hooks on the host at the user's `git push`. Checking the names (URLs) was not enough:
 * `file://localhost/…`, `%2egit`, `link/..`, `/proc/self/cwd/…`, a URL-less remote's name and a
 * gitfile at the URL all reached one (attack rounds 30 n01 and 31 q01–q07). So the whole git
 * directory is looked through, its object store too, for anything git would take for a git
 * directory; one found anywhere but the directory itself and its `modules/` (each submodule
 * git directory is looked at as one of its own) arms the repository, a linked work tree's
 * `worktrees/<name>` too (round 32 u01). A directory that cannot be listed, or more than {@linkcode MAX_PARKED_ENTRIES}
 * entries, arms it too: what was not looked at could hold one.
 *
 * @module
 */
import { join, relative } from "node:path";
import { listDirNow } from "./_look.ts";
import { isGitDir } from "./_git_dir_shape.ts";

/** Entries of a git directory looked through (the object store's loose objects included). */
export const MAX_PARKED_ENTRIES = 200_000;

/** A repository parked in a git directory, or why the look was cut short. */
export interface Parked {
  /** The parked git directory, when one was found. */
  path?: string;
  why: string;
}

/** Why the git directory `dir` holds a repository parked in it; undefined when none. */
export function parkedRepoIn(dir: string): string | undefined {
  return findParkedRepo(dir)?.why;
}

/**
 * The first repository parked in the git directory `dir`, or why the look was cut short;
 * undefined when none. `own` names directories (relative to `dir`) not taken for parked ones,
 * though what they hold is looked through: a writable root's own `worktrees/<name>`.
 */
export function findParkedRepo(
  dir: string,
  own: (rel: string) => boolean = () => false,
): Parked | undefined {
  const queue = [dir];
  let seen = 0;
  while (queue.length > 0) {
    const at = queue.shift()!;
    let entries: Deno.DirEntry[];
    try {
      entries = listDirNow(at);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) continue;
      return {
        why: `${at} inside the git directory ${dir} cannot be listed, and could hold a repository`,
      };
    }
    const kinds = new Map(entries.map((e) => [e.name, e]));
    // A linked work tree's admin directory (`worktrees/<name>`) counts too: git pushes to it as
    // to any repository, with the hooks its `commondir` leads to (attack round 32 u01).
    if (at !== dir && !own(relative(dir, at)) && isGitDir(at, (n) => kinds.get(n))) {
      return {
        path: at,
        why: `${at} is a repository parked inside the git directory ${dir}: git runs its hooks ` +
          "when a remote or a path names it (the user's push)",
      };
    }
    for (const e of entries) {
      // A name that is not UTF-8 (read with U+FFFD) cannot be looked into by it (u13).
      if (e.name.includes("\uFFFD")) {
        return {
          why: `${join(at, e.name)} inside the git directory ${dir} has a name that is not ` +
            "UTF-8, which penguin cannot look into",
        };
      }
      if (++seen > MAX_PARKED_ENTRIES) {
        return {
          why: `the git directory ${dir} holds more than ${MAX_PARKED_ENTRIES} entries, too many ` +
            "to look through for a repository parked in it",
        };
      }
      if (!e.isDirectory || (at === dir && e.name === "modules")) continue;
      queue.push(join(at, e.name));
    }
  }
  return undefined;
}
