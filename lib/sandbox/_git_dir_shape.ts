/**
 * What git takes for a git directory (its `is_git_directory`), judged from a directory's entries:
 * shared by the walk of the writable roots (`git_nested.ts`) and the look for a repository parked
 * inside a git directory (`_git_parked.ts`).
 *
 * @module
 */
import { join } from "node:path";
import { statOrNone } from "./_look.ts";

/** Whether `path`, not a directory, has an execute bit (git's `access(path, X_OK)` passes). */
function executable(path: string): boolean {
  const info = statOrNone(path);
  return info !== undefined && (info.isDirectory || ((info.mode ?? 0) & 0o111) !== 0);
}

/** An entry's kind as a directory listing or `lstat` gives it. */
export type EntryKind = Pick<Deno.DirEntry, "isFile" | "isDirectory" | "isSymlink">;

/**
 * Whether `dir` is a git directory, as git's is_git_directory judges it: HEAD (not a directory),
 * and objects and refs it can search (access X_OK): a directory, a link (git follows it) or
 * anything else with an execute bit. A commondir file naming the directory that has them counts whatever it names. `entry`
 * gives the kind of one of `dir`'s entries (from a listing, or `lstat`).
 */
export function isGitDir(dir: string, entry: (name: string) => EntryKind | undefined): boolean {
  const head = entry("HEAD");
  // Any other kind with an execute bit passes git's test too: a FIFO named `objects` (attack
  // round 29 j01), a socket, a device.
  const searchable = (name: string) => {
    const e = entry(name);
    if (!e) return false;
    if (e.isDirectory || e.isSymlink) return true;
    return executable(join(dir, name));
  };
  const commondir = entry("commondir");
  return head !== undefined && !head.isDirectory &&
    ((searchable("objects") && searchable("refs")) ||
      (commondir !== undefined && !commondir.isDirectory));
}
