/**
 * Small file helpers shared by the state module: atomic private writes,
 * private directories, optional reads and opens.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { type ErrorKind, PenguinError } from "../protocol/errors.ts";

const CAN_CHMOD = Deno.build.os !== "windows";

/**
 * Write `data` (text is UTF-8 encoded) to `path` atomically: a temp file
 * `.<base>.tmp-<pid>-<rand>` in the same directory is written, flushed,
 * chmod-ed to `mode` and renamed over `path`, so readers see either the old
 * or the new content, never half a file, and a hard link at `path` is
 * replaced instead of written through. With `mode` the file gets exactly it,
 * whatever the previous file's mode was; without, the default (0666 minus
 * the umask). Nothing is done through `path` after the rename, so a symlink
 * planted there in the meantime is not followed. A failure the user must fix
 * is a {@linkcode fsFailure}.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode?: number,
): Promise<void> {
  const base = basename(path).slice(0, 200);
  const tmp = join(dirname(path), `.${base}.tmp-${Deno.pid}-${randomSuffix()}`);
  let file;
  try {
    file = await Deno.open(tmp, { write: true, createNew: true, mode: mode ?? 0o666 });
  } catch (err) {
    throw fsFailure(err, "write", path) ?? err;
  }
  try {
    try {
      const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
      let off = 0;
      while (off < bytes.length) off += await file.write(bytes.subarray(off));
      await file.sync();
    } finally {
      file.close();
    }
    if (mode !== undefined && CAN_CHMOD) await Deno.chmod(tmp, mode);
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw fsFailure(err, "write", path) ?? err;
  }
}

function randomSuffix(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 8);
}

/**
 * `mkdir -p` with mode 0700: each missing directory is created and chmod-ed
 * to 0700, so the umask cannot change it; existing directories are left as
 * they are. A failure the user must fix is a {@linkcode fsFailure}.
 */
export async function mkdirPrivate(path: string): Promise<void> {
  try {
    await makePrivateDirs(path);
  } catch (err) {
    throw fsFailure(err, "create the directory", path) ?? err;
  }
}

async function makePrivateDirs(dir: string): Promise<void> {
  try {
    await Deno.mkdir(dir, { mode: 0o700 });
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) return;
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    const parent = dirname(dir);
    if (parent === dir) throw err;
    await makePrivateDirs(parent);
    try {
      await Deno.mkdir(dir, { mode: 0o700 });
    } catch (again) {
      if (again instanceof Deno.errors.AlreadyExists) return;
      throw again;
    }
  }
  if (CAN_CHMOD) await Deno.chmod(dir, 0o700);
}

/**
 * The bytes of the file at `path`, read through a handle in chunks and never
 * past `limit`; undefined when the file holds more (the size is checked on
 * the handle before anything is read, so a huge sparse file costs nothing).
 */
export async function readUpTo(path: string, limit: number): Promise<Uint8Array | undefined> {
  using file = await Deno.open(path, { read: true });
  return await readOpenUpTo(file, limit);
}

/** {@linkcode readUpTo} of a file already open, read from its current position (the start). */
export async function readOpenUpTo(
  file: Deno.FsFile,
  limit: number,
): Promise<Uint8Array | undefined> {
  const { size } = await file.stat();
  if (size > limit) return undefined;
  const buf = new Uint8Array(size + 1);
  let n = 0;
  while (n < buf.length) {
    const got = await file.read(buf.subarray(n, Math.min(buf.length, n + 1024 * 1024)));
    if (got === null) break;
    n += got;
  }
  return n > size ? undefined : buf.subarray(0, n);
}

/** Why a path that is not a regular file is refused, worded the same by every caller. */
export const NOT_REGULAR_FILE = "it is not a regular file (a FIFO, device or socket)";

/** How {@linkcode openRegularFile} words and classes what it refuses. */
export interface OpenRegularOptions {
  /** What was attempted, put before the quoted path (default `Cannot read`). */
  label?: string;
  /** The kind of a refusal of a path that is there (default "data"). */
  kind?: ErrorKind;
}

/**
 * `path` opened for reading, only when it is a regular file (links followed).
 * Deno cannot open without blocking (no `O_NONBLOCK`), and opening a FIFO
 * waits for a writer, so the path is looked at before the open and a FIFO,
 * device, socket or directory is refused unopened; the open file is then
 * looked at again (`file.stat()`), so one swapped in for another kind between
 * the look and the open is closed unread. (A FIFO swapped in at that moment
 * can still block the open itself.) Throws a PenguinError
 * `<label> "<path>": <why>`: of kind "not_found" (`no such file`) when it does
 * not exist; else of `options.kind`, {@linkcode NOT_REGULAR_FILE},
 * `it is a directory` (with a `Deno.errors.IsADirectory` cause), or the
 * system's reason.
 */
export async function openRegularFile(
  path: string,
  options: OpenRegularOptions = {},
): Promise<Deno.FsFile> {
  const label = options.label ?? "Cannot read";
  const kind = options.kind ?? "data";
  const refuse = (info: Deno.FileInfo) => {
    if (info.isFile) return;
    if (!info.isDirectory) throw new PenguinError(kind, `${label} "${path}": ${NOT_REGULAR_FILE}`);
    // The cause tells callers that name a directory as such (`sessions import`) what it is.
    throw new PenguinError(kind, `${label} "${path}": it is a directory`, {
      cause: new Deno.errors.IsADirectory(path),
    });
  };
  const failure = (err: unknown) => {
    if (err instanceof PenguinError) return err;
    const notFound = err instanceof Deno.errors.NotFound;
    const why = notFound ? "no such file" : (err as Error).message;
    return new PenguinError(notFound ? "not_found" : kind, `${label} "${path}": ${why}`, {
      cause: err,
    });
  };
  let file: Deno.FsFile;
  try {
    refuse(await Deno.stat(path));
    file = await Deno.open(path, { read: true });
  } catch (err) {
    throw failure(err);
  }
  try {
    refuse(await file.stat());
    return file;
  } catch (err) {
    file.close();
    throw failure(err);
  }
}

/** The bytes of the file at `path`, or undefined when it does not exist (other failures throw). */
export async function readBytesIfExists(path: string): Promise<Uint8Array | undefined> {
  try {
    return await Deno.readFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw fsFailure(err, "read", path) ?? err;
  }
}

/** The file's text, or undefined when it does not exist. */
export async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw fsFailure(err, "read", path) ?? err;
  }
}

/**
 * `path` opened with `options`, or null when it cannot be opened: for any
 * reason, or with `failure` "missing" only when it does not exist (other
 * errors are thrown).
 */
export async function tryOpen(
  path: string,
  options: Deno.OpenOptions,
  failure: "any" | "missing" = "any",
): Promise<Deno.FsFile | null> {
  try {
    return await Deno.open(path, options);
  } catch (err) {
    if (failure === "any" || err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/** The stat of `path`; a `not_found` error "<what> does not exist: <path>" when it is missing. */
export async function statExisting(path: string, what: string): Promise<Deno.FileInfo> {
  try {
    return await Deno.stat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new PenguinError("not_found", `${what} does not exist: ${path}`);
    }
    throw err;
  }
}

/**
 * The lock file at `path` (created private when missing) opened and locked
 * exclusively, waiting while another process holds it. Closing the file
 * releases the lock.
 */
export async function lockFile(path: string): Promise<Deno.FsFile> {
  const file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
  try {
    await file.lock(true);
  } catch (err) {
    file.close();
    throw err;
  }
  return file;
}

/** What {@linkcode exists} looks for. */
export interface ExistsOptions {
  /** The kind of entry that counts (default: any). */
  kind?: "file" | "directory";
  /** Follow a symlink at `path` (`stat`) instead of looking at the link itself (`lstat`); default true. */
  followLinks?: boolean;
  /** Rethrow a failure other than "not found" (permission denied…) instead of answering false; default false. */
  strict?: boolean;
}

/** True when `path` exists (as `options.kind`, when given). */
export async function exists(path: string, options: ExistsOptions = {}): Promise<boolean> {
  let info: Deno.FileInfo;
  try {
    info = options.followLinks === false ? await Deno.lstat(path) : await Deno.stat(path);
  } catch (err) {
    if (options.strict && !(err instanceof Deno.errors.NotFound)) throw err;
    return false;
  }
  if (options.kind === "file") return info.isFile;
  if (options.kind === "directory") return info.isDirectory;
  return true;
}

/**
 * The user error for a file-system failure the user must fix (permission
 * denied, a read-only or full file system, a disk quota), naming `action`
 * ("write") and `path`; undefined for any other failure (the caller rethrows
 * it unchanged).
 */
export function fsFailure(err: unknown, action: string, path: string): PenguinError | undefined {
  const text = err instanceof Error ? err.message : String(err);
  let why: string | undefined;
  if (err instanceof Deno.errors.PermissionDenied) why = "permission denied";
  else if (/\(os error 30\)/.test(text)) why = "the file system is read-only";
  else if (/\(os error 28\)/.test(text)) why = "no space left on the device";
  else if (/\(os error 122\)/.test(text)) why = "the disk quota is exceeded";
  if (why === undefined) return undefined;
  return new PenguinError("runtime", `Cannot ${action} "${path}": ${why}`, { cause: err });
}

/** A regular file open for reading (see {@linkcode openRegularNow}). */
export interface RegularFd extends Disposable {
  /** Its size when opened. */
  size: number;
  /** Read into `buf` from the current offset; 0 at the end. */
  read(buf: Uint8Array): number;
  close(): void;
}

/**
 * The regular file `path` opened for reading without blocking (`O_NONBLOCK`) and checked as
 * opened (`fstat`), links followed. Unlike {@linkcode openRegularFile}, a FIFO put in its place
 * between a look and the open cannot block the open: a `sessions import` whose file the model
 * swapped with a FIFO hung (attack round 29 k06). What is not a regular file before the open is
 * not opened. Throws `Error("… is not a regular file")` for
 * anything else, and the system's error (with its `code`) when it cannot be opened.
 */
export function openRegularNow(path: string): RegularFd {
  // Looked at first: a device is never opened (an open alone may act: a watchdog, a tape's
  // rewind), whatever the check of what was opened says after (attack round 31, note).
  if (!Deno.statSync(path).isFile) throw new Error(`"${path}" is not a regular file`);
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  let size: number;
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new Error(`"${path}" is not a regular file`);
    size = info.size;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  let open = true;
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  return {
    size,
    read: (buf) => buf.length === 0 ? 0 : readSync(fd, buf, 0, buf.length, null),
    close,
    [Symbol.dispose]: close,
  };
}
