// Writing new trace files from the bytes of existing ones: fork, clone and
// import copy the selected lines of a source file verbatim (so `fidelity`
// and every other field keep their exact bytes) behind a new first line.
import { dirname } from "node:path";
import { errorMessage, PenguinError } from "../protocol/errors.ts";
import { readLines } from "../trace/lines.ts";
import { mkdirPrivate } from "../state/_fs.ts";

const CHUNK = 1 << 20;
const NEWLINE = new Uint8Array([0x0a]);
const enc = new TextEncoder();

/** Where copied bytes go. */
export interface Sink {
  /** Write bytes (buffered). */
  write(bytes: Uint8Array): Promise<void>;
  /** Write a string as UTF-8. */
  text(s: string): Promise<void>;
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) {
    const n = await file.write(bytes.subarray(off));
    if (n <= 0) throw new Error("the write made no progress");
    off += n;
  }
}

/**
 * Create `path` exclusively (mode 0600; missing directories 0700) and fill
 * it through `fill`; the file is synced and closed. Throws a PenguinError of
 * kind "runtime" with `AlreadyExists` as its cause when the file exists;
 * on any other failure the partial file is removed.
 */
export async function createTraceFile(
  path: string,
  fill: (sink: Sink) => Promise<void>,
): Promise<void> {
  await mkdirPrivate(dirname(path));
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
  } catch (err) {
    throw new PenguinError("runtime", `Cannot create trace "${path}": ${errorMessage(err)}`, {
      cause: err,
    });
  }
  const buf = new Uint8Array(CHUNK);
  let used = 0;
  const flush = async () => {
    if (used > 0) await writeAll(file, buf.subarray(0, used));
    used = 0;
  };
  const sink: Sink = {
    async write(bytes) {
      if (used + bytes.length > buf.length) await flush();
      if (bytes.length >= buf.length) await writeAll(file, bytes);
      else {
        buf.set(bytes, used);
        used += bytes.length;
      }
    },
    text(s) {
      return sink.write(enc.encode(s));
    },
  };
  try {
    await Deno.chmod(path, 0o600);
    await fill(sink);
    await flush();
    await file.sync();
  } catch (err) {
    try {
      file.close();
    } catch { /* already closed */ }
    await Deno.remove(path).catch(() => {});
    if (err instanceof PenguinError) throw err;
    throw new PenguinError("runtime", `Cannot write trace "${path}": ${errorMessage(err)}`, {
      cause: err,
    });
  }
  file.close();
}

/** True when `err` (or its cause) says the file already existed. */
export function alreadyExists(err: unknown): boolean {
  return err instanceof Deno.errors.AlreadyExists ||
    (err instanceof Error && err.cause instanceof Deno.errors.AlreadyExists);
}

/**
 * Copy the lines of `src` for which `select(line)` holds (1-based, as the
 * trace reader counts them), up to line `lastLine`: each line's bytes
 * unchanged, ended by a newline (a CR before it is not kept; a last line
 * without its newline gets one). Lines are cut by lib/trace/lines.ts; a
 * line too long to gather is copied in pieces. Returns the number of lines
 * copied.
 */
export async function copyLines(
  src: string,
  select: (line: number) => boolean,
  lastLine: number,
  sink: Sink,
  opts: CopyChecks = {},
): Promise<number> {
  if (lastLine < 1) return 0;
  const file = await Deno.open(src, { read: true });
  // Selected lines next to each other in the read buffer are written as one
  // run, their newlines included (one write per run, not two per line).
  let run: Uint8Array | null = null;
  const flush = async () => {
    if (run !== null) await sink.write(run);
    run = null;
  };
  try {
    if (opts.expect) sameFile(src, opts.expect, await file.stat());
    let copied = 0;
    for await (const batch of readLines(file, { decode: false, chunkSize: CHUNK })) {
      for (const line of batch) {
        if (line.no > lastLine) break;
        if (!select(line.no)) continue;
        copied++;
        // A long line checked is copied from the bytes the check read, never read again: the file
        // rewritten in place between two reads had unchecked bytes copied (attack round 25
        // secrets B2: a secret imported unmasked).
        const checked = !opts.check
          ? undefined
          : line.kind === "long"
          ? await line.read()
          : line.kind === "bytes"
          ? line.bytes
          : enc.encode(line.text);
        const instead = checked && opts.check?.(checked, line.no);
        const longRead = line.kind === "long" ? checked : undefined;
        if (instead !== undefined) {
          await flush();
          await sink.write(instead);
          await sink.write(NEWLINE);
          continue;
        }
        if (line.kind === "bytes" && !line.own) {
          const withNl = withNewline(line.bytes);
          if (withNl !== null) {
            run = run !== null && follows(run, withNl)
              ? extend(run, withNl)
              : (await flush(), withNl);
            continue;
          }
        }
        await flush();
        if (longRead !== undefined) {
          for (let at = 0; at < longRead.length; at += CHUNK) {
            await sink.write(longRead.subarray(at, Math.min(longRead.length, at + CHUNK)));
          }
        } else if (line.kind === "long") {
          for (let at = 0; at < line.size; at += CHUNK) {
            await sink.write(await line.read(at, Math.min(line.size, at + CHUNK)));
          }
        } else if (line.kind === "bytes") await sink.write(line.bytes);
        await sink.write(NEWLINE);
      }
      await flush(); // the views die with the batch
      if (batch.length > 0 && batch[batch.length - 1]!.no >= lastLine) break;
    }
    return copied;
  } finally {
    file.close();
  }
}

/** What {@linkcode copyLines} checks before it copies a line's bytes. */
export interface CopyChecks {
  /**
   * The file as it was read before (device, inode, size, modification and
   * change times): a file that is another one now is not copied.
   */
  expect?: Deno.FileInfo | undefined;
  /**
   * The bytes to write instead of line `no`'s (`bytes`, its line end left
   * out), or undefined to copy them as they are; throw to stop the copy.
   */
  check?: ((bytes: Uint8Array, no: number) => Uint8Array | undefined) | undefined;
}

/** Throw unless `now` is the file `before` described. */
export function sameFile(src: string, before: Deno.FileInfo, now: Deno.FileInfo): void {
  const same = now.dev === before.dev && now.ino === before.ino && now.size === before.size &&
    now.mtime?.getTime() === before.mtime?.getTime() &&
    now.ctime?.getTime() === before.ctime?.getTime();
  if (!same) {
    throw new PenguinError(
      "runtime",
      `"${src}" changed while it was read; import it again once nothing writes it`,
    );
  }
}

/** `bytes` and the LF right after it in its buffer, or null when a LF does not follow (CR LF, end). */
function withNewline(bytes: Uint8Array): Uint8Array | null {
  const end = bytes.byteOffset + bytes.length;
  if (end >= bytes.buffer.byteLength) return null;
  const next = new Uint8Array(bytes.buffer, end, 1);
  return next[0] === NEWLINE[0]
    ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length + 1)
    : null;
}

/** `b` starts where `a` ends, in the same buffer. */
function follows(a: Uint8Array, b: Uint8Array): boolean {
  return a.buffer === b.buffer && a.byteOffset + a.length === b.byteOffset;
}

function extend(a: Uint8Array, b: Uint8Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.length + b.length);
}
