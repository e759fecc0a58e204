/**
 * Looks at the file system for a plan: `lstat`, `stat` and `realpath` of
 * local paths, answered at once (synchronously), undefined where the path
 * cannot be looked at. A plan makes hundreds of these per command; each of
 * Deno's asynchronous calls is a round trip through a thread pool, which on
 * a loaded machine costs far more than the call itself (issue 32).
 *
 * @module
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/** `lstat` of `path`; undefined when it fails. */
export function lstatOrNone(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.lstatSync(path);
  } catch {
    return undefined;
  }
}

/** `stat` of `path` (links followed); undefined when it fails. */
export function statOrNone(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.statSync(path);
  } catch {
    return undefined;
  }
}

/** The real path of `path`; undefined when it cannot be resolved. */
export function realPathOrNone(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}

/** Whether `path` names anything (a dangling link included). */
export function existsNow(path: string): boolean {
  return lstatOrNone(path) !== undefined;
}

/** `lstat` of `path`; throws as `Deno.lstatSync` does. */
export function lstatNow(path: string): Deno.FileInfo {
  return Deno.lstatSync(path);
}

/** The entries of the directory `path`; throws as `Deno.readDirSync` does. */
export function listDirNow(path: string): Deno.DirEntry[] {
  return [...Deno.readDirSync(path)];
}

/** The text of the (small) file `path`; throws as `Deno.readTextFileSync` does. */
export function readTextNow(path: string): string {
  return Deno.readTextFileSync(path);
}

/**
 * Open `path` without blocking and, as `O_NOFOLLOW` would, never through a
 * symbolic link at its end: Deno checks a path against the permissions
 * penguin runs with (anything but `-A`) by opening its resolved form, so
 * `O_NOFOLLOW` is not honoured there, and a file swapped for a link in a
 * tight loop had penguin read the link's target, `~/.ssh/id_rsa` included
 * (attack round 23 concgit; the tests, run with `-A`, never saw it). What
 * was opened (`fstat`) must be what the name is, not through a link, now
 * (`lstat`): same device and inode. Throws an error with `code` `ELOOP`
 * otherwise, as the kernel's `O_NOFOLLOW` does.
 */
export function openNoFollowNow(path: string, flags: number): number {
  // O_NOFOLLOW kept: where Deno honours it (-A: the tests, an SDK embedding) a link is never
  // opened, so a device a link names (`/dev/watchdog`) is not opened before the check refuses it.
  const fd = openSync(path, flags | constants.O_NOFOLLOW);
  try {
    const opened = fstatSync(fd);
    const named = Deno.lstatSync(path);
    if (named.isSymlink || named.dev !== opened.dev || named.ino !== opened.ino) {
      throw Object.assign(new Error(`"${path}" is a symbolic link`), { code: "ELOOP" });
    }
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** What {@linkcode readRegularNow} found instead of a regular file's bytes. */
export type NotRead = "missing" | "directory" | "other" | "too-large" | "unreadable";

/**
 * The bytes of the regular file `path` of at most `maxBytes` (links followed
 * unless `follow` is false), or why not. The file is opened without
 * blocking and checked as opened (`fstat`), not as looked at before: a FIFO
 * or device the model puts in a file's place, even between a look and the
 * read, cannot stop penguin (attack round 21 concgit: a FIFO `commondir`
 * hung the walk after a command, and penguin with it).
 */
export function readRegularNow(
  path: string,
  maxBytes: number,
  follow = true,
): Uint8Array | NotRead {
  let fd: number;
  try {
    const flags = constants.O_RDONLY | constants.O_NONBLOCK;
    fd = follow ? openSync(path, flags) : openNoFollowNow(path, flags);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return "missing";
    if (code === "ELOOP") return "other"; // a link, not followed
    if (code === "EISDIR") return "directory";
    return "unreadable";
  }
  try {
    const info = fstatSync(fd);
    if (info.isDirectory()) return "directory";
    if (!info.isFile()) return "other";
    if (info.size > maxBytes) return "too-large";
    const out = new Uint8Array(info.size);
    let got = 0;
    while (got < out.length) {
      const n = readSync(fd, out, got, out.length - got, null);
      if (n <= 0) break;
      got += n;
    }
    return got === out.length ? out : out.subarray(0, got);
  } catch {
    return "unreadable";
  } finally {
    closeSync(fd);
  }
}

/**
 * What `path` is when this process can open it as the sandbox's launcher
 * will (a directory it can list, a regular file it can read; the last
 * component not followed, without blocking on a FIFO), else undefined.
 */
export function openableNow(path: string): "dir" | "file" | undefined {
  const info = lstatOrNone(path);
  if (info?.isDirectory) {
    try {
      Deno.readDirSync(path);
      return "dir";
    } catch {
      return undefined;
    }
  }
  if (!info?.isFile) return undefined;
  let fd: number;
  try {
    fd = openNoFollowNow(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    return fstatSync(fd).isFile() ? "file" : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** {@linkcode readRegularNow} as UTF-8 text (undefined for anything but such a file). */
export function readRegularTextNow(
  path: string,
  maxBytes: number,
  follow = true,
): string | undefined {
  const r = readRegularNow(path, maxBytes, follow);
  return r instanceof Uint8Array ? new TextDecoder().decode(r) : undefined;
}
