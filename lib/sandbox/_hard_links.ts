/**
 * The other names of files: a hard link of `~/.profile` at
 * `~/dotfiles/profile` holds what `~/.profile` holds, so hiding or keeping
 * read-only one name and not the other leaves the file open to commands.
 *
 * Only files with more than one name are looked for (a usual home has none),
 * by walking the writable roots that hold them, then the other roots on their
 * file systems (the file may lie outside every root, `_protected_files.ts`):
 * links are not followed, roots on other file systems are not walked (a hard
 * link never crosses one), hidden
 * directories are skipped, and at most {@linkcode WALK_BUDGET} entries are
 * read. A name made later cannot be made by a command: the file it would need
 * is hidden or read-only, and linking across a mount point fails.
 *
 * @module
 */
import { join } from "node:path";
import { inside } from "./_paths.ts";

/** How many directory entries one search reads at the most. */
export const WALK_BUDGET = 200_000;

/** What {@linkcode otherNames} found. */
export interface OtherNames {
  /** Other names, found in the roots, of the files asked about. */
  names: string[];
  /**
   * Files with names left unfound because the walk stopped at its budget
   * (each may have them in the roots, unread).
   */
  unfound: string[];
}

interface Wanted {
  path: string;
  dev: number;
  ino: number;
  /** Names still expected besides `path`. */
  left: number;
}

/** One search per process and question: the walk may take a second in a large home. */
const cache = new Map<string, OtherNames>();

/**
 * The other names, inside `roots`, of those `files` (real paths of regular
 * files, in the roots or outside them) that have more than one; directories
 * for which `skip` holds (hidden ones) are not entered, nor roots on another
 * file system than every file's.
 */
export async function otherNames(
  files: readonly string[],
  roots: readonly string[],
  skip: (dir: string) => boolean,
  budget: number = WALK_BUDGET,
): Promise<OtherNames> {
  const wanted: Wanted[] = [];
  for (const path of files) {
    const info = await Deno.lstat(path).catch(() => undefined);
    if (!info?.isFile || (info.nlink ?? 1) < 2 || info.dev === null || info.ino === null) continue;
    wanted.push({ path, dev: info.dev, ino: info.ino, left: info.nlink! - 1 });
  }
  if (wanted.length === 0) return { names: [], unfound: [] };
  // The roots holding a file first (its other names are most likely there), then the others
  // on a file system of one (a second name of `~/.bashrc` in a workspace outside the home).
  const devs = new Set(wanted.map((w) => w.dev));
  const scope = [
    ...roots.filter((r) => wanted.some((w) => inside(w.path, r))),
    ...roots.filter((r) => !wanted.some((w) => inside(w.path, r)) && onDevices(r, devs)),
  ];
  const key = JSON.stringify([wanted.map((w) => [w.path, w.dev, w.ino, w.left]), scope, budget]);
  let found = cache.get(key);
  if (found === undefined) {
    found = walk(wanted, scope, skip, budget);
    cache.set(key, found);
  }
  return found;
}

/** Whether the directory `root` lies on one of `devs`. */
function onDevices(root: string, devs: ReadonlySet<number>): boolean {
  try {
    const dev = Deno.statSync(root).dev;
    return dev !== null && devs.has(dev);
  } catch {
    return false;
  }
}

/** Breadth first through `roots` until every wanted name is found or `budget` entries are read. */
function walk(
  wanted: Wanted[],
  roots: readonly string[],
  skip: (dir: string) => boolean,
  budget: number,
): OtherNames {
  const names: string[] = [];
  const byId = new Map(wanted.map((w) => [`${w.dev}:${w.ino}`, w]));
  let read = 0;
  let left = wanted.reduce((n, w) => n + w.left, 0);
  for (const root of roots) {
    const queue = [root];
    while (queue.length > 0 && left > 0 && read < budget) {
      const dir = queue.shift()!;
      let entries: Deno.DirEntry[];
      try {
        entries = Array.from(Deno.readDirSync(dir));
      } catch {
        continue; // unreadable or gone: nothing the sandbox shows there either
      }
      for (const e of entries) {
        if (++read > budget) break;
        const path = join(dir, e.name);
        if (e.isDirectory) {
          if (!skip(path)) queue.push(path);
          continue;
        }
        if (!e.isFile) continue;
        let info: Deno.FileInfo;
        try {
          info = Deno.lstatSync(path);
        } catch {
          continue;
        }
        if ((info.nlink ?? 1) < 2) continue;
        const w = byId.get(`${info.dev}:${info.ino}`);
        if (w === undefined || path === w.path || names.includes(path)) continue;
        names.push(path);
        w.left--;
        left--;
      }
    }
  }
  const unfound = read > budget ? wanted.filter((w) => w.left > 0).map((w) => w.path) : [];
  return { names, unfound };
}

/** Entries read at most by {@linkcode multiLinkFilesIn} over all the directories of one process. */
export const DIR_WALK_BUDGET = 50_000;

let dirWalkLeft = DIR_WALK_BUDGET;
const dirWalks = new Map<string, { files: string[]; complete: boolean }>();

/**
 * The regular files with more than one name below `dir` (links not
 * followed), breadth first, each directory once per process; `complete` is
 * false when the process's budget of {@linkcode DIR_WALK_BUDGET} entries ran
 * out before the walk ended.
 */
export function multiLinkFilesIn(dir: string): { files: string[]; complete: boolean } {
  const seen = dirWalks.get(dir);
  if (seen !== undefined) return seen;
  const files: string[] = [];
  const queue = [dir];
  let complete = true;
  while (queue.length > 0) {
    const d = queue.shift()!;
    let entries: Deno.DirEntry[];
    try {
      entries = Array.from(Deno.readDirSync(d));
    } catch {
      continue;
    }
    if (dirWalkLeft < entries.length) {
      complete = false;
      break;
    }
    dirWalkLeft -= entries.length;
    for (const e of entries) {
      const path = join(d, e.name);
      if (e.isDirectory) queue.push(path);
      else if (e.isFile && (Deno.lstatSync(path).nlink ?? 1) > 1) files.push(path);
    }
  }
  const result = { files, complete };
  dirWalks.set(dir, result);
  return result;
}
