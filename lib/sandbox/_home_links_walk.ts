/**
 * The walk of a hidden home for its files with more than one name (hard
 * links): any such file may have a name in a writable root, through which a
 * command would read or change what the home holds (`~/.vimrc`, a hook of
 * git's `init.templateDir`, a key deep in `~/.ssh`).
 *
 * One breadth-first walk per home and process, at any depth, of at most
 * {@linkcode HOME_WALK_BUDGET} directory entries; links are not followed,
 * and not entered are the writable roots (their own rule covers them), the
 * toolchain directories shown to commands, and directories on a file system
 * no root is on (a hard link never crosses one). Each regular file is looked
 * at with one `lstat`. The walk hands the event loop back every
 * {@linkcode YIELD_EVERY} entries, so a walk started in the background does
 * not hold up a session's first model request.
 *
 * Measured on a loaded 2-core machine: a home of 29 entries outside its
 * toolchains (325,000 with them) in 4 to 27 ms; a walk that reads the whole
 * budget (of `/usr`) in 2.3 to 3.1 s.
 *
 * @module
 */
import { listDirInPlan } from "./_plan_scope.ts";
import { join } from "node:path";
import { expandHomePaths, TOOLCHAIN_PATHS } from "./home.ts";
import { inside, realOf } from "./_paths.ts";
import { lstatOrNone } from "./_look.ts";

/** How many directory entries one walk of a home reads at the most. */
export const HOME_WALK_BUDGET = 100_000;

/** Entries read between two returns to the event loop. */
const YIELD_EVERY = 1_024;

/** What one walk found. */
export interface HomeLinks {
  /** Regular files (paths under the starts) with more than one name on a root's file system. */
  files: string[];
  /** Whether the walk stopped at its budget with directories left unread. */
  cut: boolean;
}

const walks = new Map<string, Promise<HomeLinks>>();

/**
 * The files with more than one name below `home` and below `more` (other
 * directories whose files matter wherever they lie, such as git's template
 * directory), on the file systems `devs`, outside `roots` and the shown
 * toolchain directories; once per process and question.
 */
export function homeLinks(
  home: string,
  more: readonly string[],
  devs: ReadonlySet<number>,
  roots: readonly string[],
): Promise<HomeLinks> {
  const key = JSON.stringify([home, more, [...devs].sort(), roots]);
  let found = walks.get(key);
  if (found === undefined) {
    found = walk(home, more, devs, roots);
    walks.set(key, found);
  }
  return found;
}

async function walk(
  home: string,
  more: readonly string[],
  devs: ReadonlySet<number>,
  roots: readonly string[],
): Promise<HomeLinks> {
  const skip = new Set<string>(roots);
  for (const p of expandHomePaths(home, TOOLCHAIN_PATHS)) {
    skip.add(p);
    if (lstatOrNone(p) === undefined) continue; // most toolchains are not installed
    const real = await realOf(p);
    if (real !== undefined && real !== home) skip.add(real);
  }
  const onDevs = (info: Deno.FileInfo | undefined) =>
    info?.dev !== undefined && info.dev !== null && devs.has(info.dev);
  const files: string[] = [];
  const queue = [home, ...more.filter((d) => !inside(d, home))];
  let left = HOME_WALK_BUDGET;
  let sinceYield = 0;
  while (queue.length > 0 && left > 0) {
    const dir = queue.shift()!;
    if (skip.has(dir) || roots.some((r) => inside(dir, r)) || !onDevs(lstatOrNone(dir))) continue;
    let entries: Deno.DirEntry[];
    try {
      entries = listDirInPlan(dir);
    } catch {
      continue; // unreadable or gone
    }
    for (const e of entries) {
      if (--left < 0) break;
      if (++sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      const path = join(dir, e.name);
      if (e.isDirectory) {
        queue.push(path);
      } else if (e.isFile) {
        const info = lstatOrNone(path);
        if (info?.isFile && (info.nlink ?? 1) > 1 && onDevs(info)) files.push(path);
      }
    }
  }
  return { files, cut: left < 0 || queue.length > 0 };
}
