/**
 * Reading a whole file with a bound: the size is checked on the open
 * handle before anything is read, the bytes come in chunks of
 * {@linkcode READ_CHUNK_BYTES} into one buffer, and the read stops at the
 * limit (a file that grows while read is refused too) or at an abort,
 * checked between chunks.
 *
 * `Deno.readFile` is not used: it reads the whole file in one operation on
 * a thread of its own, which an abort signal (or terminating the worker)
 * does not stop, so a 12 GiB sparse file kept filling memory after the
 * tool's timeout.
 *
 * @module
 */
import { READ_CHUNK_BYTES } from "./file_limits.ts";

/** The outcome of {@linkcode readFileBounded}. */
export type BoundedRead =
  | { ok: true; bytes: Uint8Array }
  /** Larger than the limit: `size` is what stat said, or the bytes seen when it grew while read. */
  | { ok: false; reason: "too-large"; size: number; grew: boolean }
  /** A directory, FIFO, device or socket. */
  | { ok: false; reason: "not-a-file" }
  | { ok: false; reason: "aborted" };

/**
 * Read the regular file at `path`, at most `maxBytes` of it. Opening a path
 * that is not a regular file is avoided (a FIFO would block the open);
 * throws what the file system throws (not found, permission denied).
 */
export async function readFileBounded(
  path: string,
  maxBytes: number,
  signal: AbortSignal,
): Promise<BoundedRead> {
  if (!(await Deno.stat(path)).isFile) return { ok: false, reason: "not-a-file" };
  if (signal.aborted) return { ok: false, reason: "aborted" };
  using file = await Deno.open(path, { read: true });
  const info = await file.stat();
  if (!info.isFile) return { ok: false, reason: "not-a-file" };
  if (info.size > maxBytes) return { ok: false, reason: "too-large", size: info.size, grew: false };
  // One byte more than the limit tells a file that grew past it.
  let buf = new Uint8Array(Math.min(info.size, maxBytes) + 1);
  let used = 0;
  for (;;) {
    if (signal.aborted) return { ok: false, reason: "aborted" };
    if (used === buf.length) {
      if (used > maxBytes) return { ok: false, reason: "too-large", size: used, grew: true };
      const next = new Uint8Array(Math.min(maxBytes + 1, Math.max(buf.length * 2, 64 * 1024)));
      next.set(buf);
      buf = next;
    }
    const n = await file.read(buf.subarray(used, Math.min(buf.length, used + READ_CHUNK_BYTES)));
    if (n === null || n === 0) break;
    used += n;
  }
  if (used > maxBytes) return { ok: false, reason: "too-large", size: used, grew: true };
  return { ok: true, bytes: buf.subarray(0, used) };
}
