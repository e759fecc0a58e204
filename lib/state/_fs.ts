/**
 * Small file helpers shared by the state module: atomic private writes,
 * private directories, optional reads.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { PenguinError } from "../protocol/errors.ts";

const CAN_CHMOD = Deno.build.os !== "windows";

/**
 * Write `text` to `path` atomically: a temp file in the same directory is
 * written, flushed, chmod-ed to `mode` and renamed over `path`, so readers
 * see either the old or the new content, never half a file. The mode is
 * re-applied on every write, whatever the previous file's mode was.
 */
export async function writeFileAtomic(path: string, text: string, mode = 0o600): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.tmp-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`);
  let file;
  try {
    file = await Deno.open(tmp, { write: true, createNew: true, mode });
  } catch (err) {
    throw fsFailure(err, "write", path) ?? err;
  }
  try {
    try {
      const data = new TextEncoder().encode(text);
      let off = 0;
      while (off < data.length) off += await file.write(data.subarray(off));
      await file.sync();
    } finally {
      file.close();
    }
    if (CAN_CHMOD) await Deno.chmod(tmp, mode);
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw fsFailure(err, "write", path) ?? err;
  }
  if (CAN_CHMOD) await Deno.chmod(path, mode);
}

/** `mkdir -p` with mode 0700 for every directory it creates. */
export async function mkdirPrivate(path: string): Promise<void> {
  try {
    await Deno.mkdir(path, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw fsFailure(err, "create the directory", path) ?? err;
  }
}

/**
 * The bytes of the file at `path`, read through a handle in chunks and never
 * past `limit`; undefined when the file holds more (the size is checked on
 * the handle before anything is read, so a huge sparse file costs nothing).
 */
export async function readUpTo(path: string, limit: number): Promise<Uint8Array | undefined> {
  using file = await Deno.open(path, { read: true });
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

/** The file's text, or undefined when it does not exist. */
export async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw fsFailure(err, "read", path) ?? err;
  }
}

/** True when `path` exists (any kind of entry). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
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
