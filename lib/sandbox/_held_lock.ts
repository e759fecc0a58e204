/**
 * A `flock` on a lock file that another process may delete: open, lock, and
 * then check that the path still names the file locked (device and inode of
 * the open file against the path's), opening again when it does not.
 *
 * A file is deleted only by a process that holds an exclusive lock on it
 * (the record garbage collection of `_repo_trust_gc.ts`); a process that
 * opened it before the deletion and got its lock after it would otherwise
 * hold a lock on a file no other process can open any more, while a third
 * process locks a new file at the same path: two holders of one exclusive
 * lock.
 *
 * @module
 */
import { lstatOrNone } from "./_look.ts";

/** How {@linkcode holdLock} opens and locks. */
export interface HoldOptions {
  /** Make the file when missing (mode 0600). */
  create: boolean;
  /** An exclusive lock (else shared). */
  exclusive: boolean;
  /** Wait for the lock (else give up at once when another process holds it). */
  wait: boolean;
}

/** Test seam: called after each open, before the lock is taken. */
export const lockSeam: { afterOpen: (path: string) => Promise<void> | void } = {
  afterOpen: () => {},
};

/**
 * `path` opened and locked as `opts` asks, the path still naming the open
 * file once locked. `"none"`: no such file (without `create`); `"busy"`:
 * another process holds a lock that conflicts (without `wait`).
 */
export async function holdLock(
  path: string,
  opts: HoldOptions,
): Promise<Deno.FsFile | "none" | "busy"> {
  // Opened, tried and checked synchronously: each asynchronous call is a round trip through
  // Deno's thread pool, and a plan takes a lock per writable root and record directory (issue
  // 32). Only a lock another holder keeps is waited for asynchronously: a synchronous wait would
  // stop this process, the other holder maybe among its own tasks.
  for (;;) {
    const file = openLockFile(path, opts.create);
    if (file === "none") return file;
    let same = false;
    try {
      await lockSeam.afterOpen(path);
      if (!tryLockNow(file, opts.exclusive)) {
        if (!opts.wait) {
          file.close();
          return "busy";
        }
        await file.lock(opts.exclusive);
      }
      same = namesFile(path, file);
    } catch (err) {
      file.close();
      throw err;
    }
    if (same) return file;
    // Deleted (and maybe made again) between the open and the lock: that file is no lock.
    file.close();
  }
}

/** `path` opened for a lock; "none" when it is missing and not to be made. */
function openLockFile(path: string, create: boolean): Deno.FsFile | "none" {
  try {
    return Deno.openSync(path, { read: true, write: true, create, mode: 0o600 });
  } catch (err) {
    if (!create && err instanceof Deno.errors.NotFound) return "none";
    throw err;
  }
}

/** Whether the lock on `file` was taken at once (false: another holder keeps it). */
function tryLockNow(file: Deno.FsFile, exclusive: boolean): boolean {
  try {
    return file.tryLockSync(exclusive);
  } catch {
    return false; // an error is taken as busy: the asynchronous lock says what it is
  }
}

/** Whether `path` still names the open `file` (device and inode). */
function namesFile(path: string, file: Deno.FsFile): boolean {
  const held = file.statSync();
  const now = lstatOrNone(path);
  return now !== undefined && now.dev === held.dev && now.ino === held.ino;
}
