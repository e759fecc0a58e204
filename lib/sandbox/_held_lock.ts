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
  for (;;) {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true, write: true, create: opts.create, mode: 0o600 });
    } catch (err) {
      if (!opts.create && err instanceof Deno.errors.NotFound) return "none";
      throw err;
    }
    let same = false;
    try {
      await lockSeam.afterOpen(path);
      if (opts.wait) await file.lock(opts.exclusive);
      else if (!await file.tryLock(opts.exclusive).then((ok) => ok, () => false)) {
        file.close();
        return "busy";
      }
      const held = await file.stat();
      const now = await Deno.lstat(path).catch(() => undefined);
      same = now !== undefined && now.dev === held.dev && now.ino === held.ino;
    } catch (err) {
      file.close();
      throw err;
    }
    if (same) return file;
    // Deleted (and maybe made again) between the open and the lock: that file is no lock.
    file.close();
  }
}
