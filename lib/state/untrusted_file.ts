/**
 * Reading and writing files in directories the model can write (its memory
 * directories, its scratchpad) from penguin's own, unconfined process. The
 * model may have put a symbolic link, a FIFO or a directory under any name
 * there, and may swap one in while penguin works, so:
 *
 * - {@linkcode readUntrustedFile} reads a name only when the file it opened
 *   is the regular file the name holds (device and inode compared after the
 *   open): a link, wherever it points, is refused, and so are a file swapped
 *   for another between the check and the read and a file with a second
 *   name (a hard link);
 * - {@linkcode replaceUntrustedFile} writes a new file beside the name and
 *   renames it over, so whatever the name held is replaced, never written
 *   through.
 *
 * The directory itself must be one the model cannot replace (penguin made
 * it, and its parent is not writable to the model).
 *
 * @module
 */
import { join } from "node:path";

/** The most bytes {@linkcode readUntrustedFile} reads by default. */
export const UNTRUSTED_READ_LIMIT = 4 * 1024 * 1024;

/** The outcome of {@linkcode readUntrustedFile}. */
export type UntrustedRead =
  /** The text (the first `limit` bytes; `truncated` when there was more). */
  | { ok: true; text: string; truncated: boolean }
  /** Not read: `missing` when the name does not exist; `message` says why. */
  | { ok: false; missing: boolean; message: string };

function isMissing(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory;
}

/** A plain file name: no separators, not `.` or `..`. */
export function isPlainName(name: string): boolean {
  return name !== "" && name !== "." && name !== ".." && !/[\\/\0]/.test(name);
}

async function openForRead(path: string): Promise<Deno.FsFile> {
  // Read and write: opening a FIFO for reading alone waits for a writer, so
  // one swapped in after the type check could hang penguin. Nothing is written.
  try {
    return await Deno.open(path, { read: true, write: true });
  } catch (err) {
    if (!(err instanceof Deno.errors.PermissionDenied)) throw err;
    return await Deno.open(path, { read: true });
  }
}

/** The outcome of {@linkcode readUntrustedBytes}: {@linkcode UntrustedRead} with bytes. */
export type UntrustedBytes =
  /** The first `limit` bytes; `truncated` when there was more. */
  | { ok: true; bytes: Uint8Array; truncated: boolean }
  /** Not read: `missing` when the name does not exist; `message` says why. */
  | { ok: false; missing: boolean; message: string };

/**
 * Read `name` (a plain file name) of `dir`, refusing anything that is not a
 * regular file there: a symbolic link, a directory, a FIFO, or a file
 * swapped for another while it is read. Reads at most `limit` bytes.
 */
export async function readUntrustedFile(
  dir: string,
  name: string,
  limit = UNTRUSTED_READ_LIMIT,
): Promise<UntrustedRead> {
  const r = await readUntrustedBytes(dir, name, limit);
  if (!r.ok) return r;
  return { ok: true, text: new TextDecoder().decode(r.bytes), truncated: r.truncated };
}

/** {@linkcode readUntrustedFile}, giving the bytes as they are. */
export async function readUntrustedBytes(
  dir: string,
  name: string,
  limit = UNTRUSTED_READ_LIMIT,
): Promise<UntrustedBytes> {
  if (!isPlainName(name)) {
    return { ok: false, missing: false, message: `"${name}" is not a file name in ${dir}` };
  }
  const path = join(dir, name);
  const missing: UntrustedBytes = { ok: false, missing: true, message: `"${path}" does not exist` };
  const refuse = (why: string): UntrustedBytes => ({
    ok: false,
    missing: false,
    message: `Refusing to read "${path}": ${why}`,
  });
  let before: Deno.FileInfo;
  try {
    before = await Deno.lstat(path);
  } catch (err) {
    if (isMissing(err)) return missing;
    throw err;
  }
  if (before.isSymlink) return refuse("it is a symbolic link");
  if (!before.isFile) return refuse("it is not a regular file");
  let file: Deno.FsFile;
  try {
    file = await openForRead(path);
  } catch (err) {
    if (isMissing(err)) return missing;
    return refuse(err instanceof Error ? err.message : String(err));
  }
  try {
    const opened = await file.stat();
    const now = await Deno.lstat(path).catch(() => undefined);
    // Windows reports no inode; there the link and type checks stand alone.
    const same = now !== undefined && !now.isSymlink && opened.isFile &&
      (Deno.build.os === "windows" || (opened.dev === now.dev && opened.ino === now.ino));
    if (!same) return refuse("it was replaced while penguin read it");
    // A second name could be a secret's (a link made where the sandbox does not separate
    // the directories, e.g. Seatbelt): a file with more than one name is not read.
    if ((opened.nlink ?? 1) > 1) return refuse("it has more than one name (a hard link)");
    // Never more than the file's size at open (plus one byte to see it grew): a sparse file
    // claiming terabytes costs nothing to make and must not cost penguin its memory.
    const buf = new Uint8Array(Math.min(limit, opened.size) + 1);
    let n = 0;
    while (n < buf.length) {
      const got = await file.read(buf.subarray(n));
      if (got === null) break;
      n += got;
    }
    return {
      ok: true,
      bytes: buf.slice(0, Math.min(n, limit)),
      truncated: n > limit || opened.size > limit || n > opened.size,
    };
  } finally {
    file.close();
  }
}

/**
 * Make `dir/name` hold `text` (mode 0600): a new file is written beside it
 * and renamed over the name, replacing whatever entry had it (a link is
 * replaced, not followed). Throws when the name is a directory.
 */
export async function replaceUntrustedFile(dir: string, name: string, text: string): Promise<void> {
  if (!isPlainName(name)) throw new Error(`"${name}" is not a file name in ${dir}`);
  const tmp = join(dir, `.${name}.tmp-${crypto.randomUUID()}`);
  const file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
  try {
    const data = new TextEncoder().encode(text);
    let off = 0;
    while (off < data.length) off += await file.write(data.subarray(off));
  } finally {
    file.close();
  }
  try {
    await Deno.rename(tmp, join(dir, name));
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}
