/**
 * Directories held open, and paths through them that no rename can redirect.
 *
 * A path names a directory only for as long as nobody renames it or one of
 * its parents: a session whose workspace encloses another's can swap a name
 * on the way for a link to any directory it likes, at any moment. An open
 * directory is the directory, wherever it is moved. On Linux its file
 * descriptor also says where it lies now (`/proc/self/fd/<n>` reads as its
 * path, and names below `/proc/self/fd/<n>/` are looked up in it, as
 * `mkdirat` / `unlinkat` would, without walking its parents again).
 *
 * @module
 */

/** The process's file descriptors: the names in `/proc/self/fd` (none when it cannot be read). */
function openFds(): Set<string> {
  try {
    return new Set([...Deno.readDirSync("/proc/self/fd")].map((e) => e.name));
  } catch {
    return new Set();
  }
}

function sameId(path: string, info: Deno.FileInfo): boolean {
  try {
    const s = Deno.statSync(path);
    return s.dev === info.dev && s.ino === info.ino;
  } catch {
    return false;
  }
}

/** A directory held open: the file, its identity and a path that leads into it, not to its name. */
export interface HeldDir {
  /** The open directory (close it when done). */
  file: Deno.FsFile;
  /** `/proc/self/fd/<n>`: the directory itself, whatever its name is now. */
  via: string;
  /** Device number. */
  dev: number;
  /** Inode number. */
  ino: number;
}

/**
 * Open the directory `path` and find its descriptor, or undefined when it
 * is not a directory, cannot be opened, or the descriptor cannot be found
 * (no `/proc`: not Linux). Synchronous, so no other task of this process
 * opens or closes a file in between.
 */
export function holdDir(path: string): HeldDir | undefined {
  const before = openFds();
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch {
    return undefined;
  }
  try {
    const info = file.statSync();
    if (!info.isDirectory || info.ino === null) throw new Error("not a directory");
    // The descriptor that came with this open (another one may hold the same directory).
    const fresh = [...openFds()].filter((n) => !before.has(n));
    const fd = fresh.find((n) => sameId(`/proc/self/fd/${n}`, info));
    if (fd === undefined) throw new Error("descriptor not found");
    return { file, via: `/proc/self/fd/${fd}`, dev: info.dev, ino: info.ino };
  } catch {
    file.close();
    return undefined;
  }
}

/**
 * Where the held directory lies now (its real path), or undefined when it
 * has been removed or cannot be told.
 */
export function locationOf(dir: HeldDir): string | undefined {
  try {
    const p = Deno.readLinkSync(dir.via);
    if (!p.startsWith("/") || p.endsWith(" (deleted)")) return undefined;
    // The descriptor is still this directory (read after the link, so the path is its).
    const s = dir.file.statSync();
    return s.dev === dir.dev && s.ino === dir.ino && sameId(dir.via, s) ? p : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The directory at `path`, held open, when it lies there now: opened, and its
 * real path read back from its descriptor equals `path` (which must be a real
 * path). Undefined otherwise: missing, not a directory, or reached through a
 * name swapped for a link (it then lies elsewhere).
 */
export function holdDirAt(path: string): HeldDir | undefined {
  const dir = holdDir(path);
  if (!dir) return undefined;
  if (locationOf(dir) === path) return dir;
  dir.file.close();
  return undefined;
}

/** Whether this process can tell where an open directory lies (Linux `/proc`). */
export function canLocateDirs(): boolean {
  const dir = holdDir("/");
  if (!dir) return false;
  try {
    return locationOf(dir) === "/";
  } finally {
    dir.file.close();
  }
}
