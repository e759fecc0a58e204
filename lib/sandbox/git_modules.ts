/**
 * The git directories a repository keeps for its submodules inside its own
 * git directory: `<git dir>/modules/<name>`, where a name may hold slashes
 * and a submodule's own submodules nest (`modules/a/modules/b`). The host's
 * git runs their hooks and configuration when the user works in the outer
 * repository (`git submodule update` checks a submodule out from there;
 * `git status` enters a checked-out one), whether or not the submodule's
 * work tree has a `.git` file naming it. `git_nested.ts` counts each one
 * found as part of the outer repository: its check and its identity.
 *
 * Every directory below `modules/` is looked at (a name may lead anywhere
 * below it, inside another submodule's git directory too); one holding
 * `config`, or `HEAD` with `objects` and `refs` or with `commondir` (as git's
 * own test), counts as a git directory (`logs/` and `refs/remotes/<name>/`
 * hold a `HEAD` too: not one). The look is bounded
 * ({@linkcode MAX_MODULE_ENTRIES}): past it, `overflow` is set and the
 * caller treats the repository as armed.
 *
 * @module
 */
import { join } from "node:path";
import { lstatOrNone } from "./_look.ts";

/** The most entries (listed or looked up) one look below a `modules/` directory makes. */
export const MAX_MODULE_ENTRIES = 50_000;

/** What {@linkcode moduleGitDirs} found below `<git dir>/modules/`. */
export interface ModuleScan {
  /** The git directories found, outermost first. */
  dirs: string[];
  /** Symbolic links where a git directory could be (git follows them). */
  links: string[];
  /** Directories below `modules/` that could not be listed. */
  unreadable: string[];
  /** The look stopped at its limit: what is past it was not seen. */
  overflow: boolean;
}

/** The names whose presence can make a directory below `modules/` a git directory. */
const MARKS = ["HEAD", "config", "objects", "refs", "commondir"];

/** Whether the names `has` makes a git directory ({@linkcode moduleGitDirs}). */
function marked(has: (name: string) => boolean): boolean {
  return has("config") || (has("HEAD") && ((has("objects") && has("refs")) || has("commondir")));
}

/**
 * The submodule git directories below `<gitDir>/modules/` at any depth, the
 * symbolic links found where one could be, and whether the look went past
 * `max` entries. Every directory is listed, whatever its link count: one
 * without subdirectories (link count 2) may still hold a symbolic link git
 * follows, so a submodule's loose objects count against `max` too.
 */
export function moduleGitDirs(gitDir: string, max = MAX_MODULE_ENTRIES): ModuleScan {
  const out: ModuleScan = { dirs: [], links: [], unreadable: [], overflow: false };
  const top = join(gitDir, "modules");
  const info = lstatOrNone(top);
  // A linked `modules` is the git directory's own symlinked entry (`symlinkedEntries`).
  if (!info?.isDirectory) return out;
  let left = max;
  const queue = [top];
  while (queue.length > 0) {
    const dir = queue.shift()!;
    if (--left < 0) return { ...out, overflow: true };
    const look = lookAt(dir);
    if (look === undefined) continue;
    if (look.unreadable) out.unreadable.push(dir);
    left -= look.cost;
    if (left < 0) return { ...out, overflow: true };
    const isGitDir = dir !== top && look.marked;
    if (isGitDir) out.dirs.push(dir);
    // Links inside a git directory that configure git are its own (`symlinkedEntries`);
    // elsewhere below `modules/` a link may stand where git looks for a submodule's.
    for (const name of look.links) {
      if (!isGitDir || name === "modules") out.links.push(join(dir, name));
    }
    for (const name of look.subdirs) queue.push(join(dir, name));
  }
  return out;
}

/** What one directory holds for {@linkcode moduleGitDirs}, and what looking cost. */
interface Look {
  marked: boolean;
  subdirs: string[];
  links: string[];
  cost: number;
  unreadable: boolean;
}

/** Look at `dir`; undefined when it is gone or no longer a directory. */
function lookAt(
  dir: string,
): Look | undefined {
  const info = lstatOrNone(dir);
  if (!info?.isDirectory) return undefined;
  const out: Look = { marked: false, subdirs: [], links: [], cost: 0, unreadable: false };
  const names = new Set<string>();
  try {
    for (const e of Deno.readDirSync(dir)) {
      out.cost++;
      // A name that is not UTF-8 (read with U+FFFD) cannot be opened by it: a submodule git
      // directory there would go unchecked while git finds it (attack round 20 concgit R2).
      if (e.name.includes("\uFFFD")) out.unreadable = true;
      if (MARKS.includes(e.name)) names.add(e.name);
      if (e.isSymlink) out.links.push(e.name);
      else if (e.isDirectory) out.subdirs.push(e.name);
    }
  } catch {
    // Neither penguin nor (most likely) git can look inside: the caller counts it armed.
    out.unreadable = true;
  }
  out.marked = marked((n) => names.has(n));
  return out;
}
