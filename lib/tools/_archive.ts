/**
 * The truncation archive: when a tool's output exceeds its
 * `maxOutputLength`, the full text the tool produced is saved under the
 * session scratchpad so the model can page through it with read_file.
 *
 * The text goes to the file as it arrives, so memory stays bounded whatever
 * the output size: the file holds the exact text up to its size limit; past
 * it, the file is cut back to a UTF-8-safe head and only a rolling tail is
 * kept in memory, written after a gap marker when the call ends.
 *
 * @module
 */
import { join } from "node:path";
import { splitTrailingSurrogate } from "../display/invisible.ts";

/** Largest archive file: one byte below read_file's 8 MiB scan cap, so read_file can reach EOF. */
export const ARCHIVE_LIMIT_BYTES = 8 * 1024 * 1024 - 1;

/** Written between head and tail when the output exceeded the file limit. */
export const ARCHIVE_GAP_MARKER = "\n[archive middle truncated]\n";

const encoder = new TextEncoder();

const GAP_BYTES = encoder.encode(ARCHIVE_GAP_MARKER).length;

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Cut index `end` moved back so it does not split a surrogate pair. */
export function safeCut(text: string, end: number): number {
  if (
    end > 0 && end < text.length && isHigh(text.charCodeAt(end - 1)) && isLow(text.charCodeAt(end))
  ) {
    return end - 1;
  }
  return end;
}

/** `cut` moved back so that `bytes[cut]` starts a code point (never a continuation byte). */
function codePointCut(bytes: Uint8Array, cut: number): number {
  while (cut > 0 && cut < bytes.length && (bytes[cut]! & 0xc0) === 0x80) cut--;
  return cut;
}

/** The outcome of an archive. */
export type ArchiveResult =
  | { ok: true; path: string; truncated: boolean }
  | { ok: false; code: string };

/**
 * An archive file being written as the output arrives. Everything up to the
 * size limit goes to the file at once. When the output outgrows the limit
 * the file is cut back to its head, the rest only passes through a
 * fixed-size ring of the last bytes, and {@linkcode ArchiveWriter.finish}
 * appends the gap marker and that tail.
 */
export interface ArchiveWriter {
  /**
   * Append the next piece of the tool's (masked) text; resolves when the
   * caller may go on. Never rejects: a failure is kept for `finish`.
   */
  append(text: string): Promise<void>;
  /** Complete and close the file; the path, or the error code of the first failure. */
  finish(): Promise<ArchiveResult>;
  /** Bytes of output held in memory: the tail ring once the limit was passed (fixed), else 0. */
  readonly heldBytes: number;
  /**
   * Bytes appended but not yet written: `append` returns before its write
   * completes unless more than min(1 MiB, limit / 8) bytes are waiting.
   */
  readonly pendingBytes: number;
  /** Bytes in the file so far. */
  readonly fileBytes: number;
}

/** The archive directory is not one penguin can write into safely. */
class ArchiveRefused extends Error {
  override name = "ArchiveRefused";
}

/** Throw unless `dir` is a directory itself (not a symbolic link to one). */
async function assertRealDir(dir: string): Promise<void> {
  const info = await Deno.lstat(dir);
  if (info.isSymlink || !info.isDirectory) {
    throw new ArchiveRefused(`"${dir}" is not a directory (a symbolic link?)`);
  }
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? code : (err as Error).name || "UNKNOWN";
}

async function writeAll(file: Deno.FsFile, data: Uint8Array): Promise<void> {
  let off = 0;
  while (off < data.length) off += await file.write(data.subarray(off));
}

async function readFully(file: Deno.FsFile, into: Uint8Array): Promise<number> {
  let got = 0;
  while (got < into.length) {
    const n = await file.read(into.subarray(got));
    if (n === null) break;
    got += n;
  }
  return got;
}

/** A ring of the last `cap` bytes written to it. */
class TailRing {
  #ring: Uint8Array;
  #pos = 0;
  #len = 0;
  #scratch = new Uint8Array(64 * 1024);

  constructor(cap: number) {
    this.#ring = new Uint8Array(cap);
  }

  get size(): number {
    return this.#ring.length;
  }

  push(bytes: Uint8Array): void {
    const cap = this.#ring.length;
    if (bytes.length >= cap) {
      this.#ring.set(bytes.subarray(bytes.length - cap));
      this.#pos = 0;
      this.#len = cap;
      return;
    }
    const first = Math.min(bytes.length, cap - this.#pos);
    this.#ring.set(bytes.subarray(0, first), this.#pos);
    if (first < bytes.length) this.#ring.set(bytes.subarray(first), 0);
    this.#pos = (this.#pos + bytes.length) % cap;
    this.#len = Math.min(cap, this.#len + bytes.length);
  }

  /** Encode `text` into the ring through a reused buffer (no per-chunk allocation). */
  pushText(text: string): void {
    let rest = text;
    while (rest.length > 0) {
      const { read, written } = encoder.encodeInto(rest, this.#scratch);
      this.push(this.#scratch.subarray(0, written));
      rest = rest.slice(read);
    }
  }

  /** The held bytes in order, starting on a code point. */
  bytes(): Uint8Array {
    const cap = this.#ring.length;
    // Until the ring is full nothing has wrapped: the bytes are its start.
    const out = this.#len < cap
      ? this.#ring.slice(0, this.#len)
      : concat(this.#ring.subarray(this.#pos), this.#ring.subarray(0, this.#pos));
    let from = 0;
    while (from < out.length && (out[from]! & 0xc0) === 0x80) from++;
    return out.subarray(from);
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/**
 * Create the archive file `name` in `dir` (the scratchpad's
 * `truncated-tool-output`): directory 0700, file 0600 created exclusively,
 * refused when the directory or the file is not what it was checked to be.
 */
async function createArchiveFile(
  scratchpad: string,
  dir: string,
  name: string,
): Promise<Deno.FsFile> {
  await Deno.mkdir(scratchpad, { recursive: true });
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  // The model can write the scratchpad: a link planted as the archive directory would
  // have penguin write the output wherever it points.
  const real = join(await Deno.realPath(scratchpad), "truncated-tool-output");
  await assertRealDir(real);
  const opened = await Deno.open(join(real, name), {
    write: true,
    read: true,
    createNew: true,
    mode: 0o600,
  });
  try {
    await assertRealDir(real);
    const [a, b] = [await opened.stat(), await Deno.lstat(join(real, name))];
    if (Deno.build.os !== "windows" && (a.dev !== b.dev || a.ino !== b.ino)) {
      throw new ArchiveRefused("the archive file was replaced");
    }
  } catch (err) {
    opened.close();
    throw err;
  }
  return opened;
}

/** Cut the file `f` to at most `headBudget` bytes, on a code point boundary; returns its new size. */
async function cutHead(f: Deno.FsFile, headBudget: number): Promise<number> {
  const from = Math.max(0, headBudget - 3);
  const probe = new Uint8Array(4);
  await f.seek(from, Deno.SeekMode.Start);
  const window = probe.subarray(0, await readFully(f, probe));
  const size = from + codePointCut(window, headBudget - from);
  await f.truncate(size);
  return size;
}

/** Close `file`, if any; one already closed is fine. */
function closeQuietly(file: Deno.FsFile | undefined): void {
  try {
    file?.close();
  } catch {
    // Already closed.
  }
}

/** A tail ring of `tailBudget` bytes seeded with the last bytes of the `written` in `f`. */
async function seededTail(f: Deno.FsFile, written: number, tailBudget: number): Promise<TailRing> {
  const ring = new TailRing(tailBudget);
  const fromFile = Math.min(written, tailBudget);
  if (fromFile > 0) {
    const seed = new Uint8Array(fromFile);
    await f.seek(written - fromFile, Deno.SeekMode.Start);
    ring.push(seed.subarray(0, await readFully(f, seed)));
  }
  return ring;
}

/**
 * Start the archive of call `toolCallId` of `toolName` in
 * `<scratchpad>/truncated-tool-output/` (directory 0700, file 0600 created
 * exclusively on the first append), keeping at most `limitBytes` bytes (gap
 * marker included).
 */
export function startArchive(
  scratchpad: string,
  toolName: string,
  toolCallId: string,
  limitBytes: number = ARCHIVE_LIMIT_BYTES,
): ArchiveWriter {
  // Long because: one closure-based archive writer whose methods share the file, its size and the
  // limit; each method is short.
  const limit = Math.max(limitBytes, GAP_BYTES + 2);
  const headBudget = Math.floor((limit - GAP_BYTES) / 2);
  const tailBudget = limit - GAP_BYTES - headBudget;
  let file: Deno.FsFile | undefined;
  let path: string | undefined;
  let failed: string | undefined;
  let written = 0; // bytes in the file
  let tail: TailRing | undefined; // set once the output passed the limit
  let carry = ""; // a high surrogate waiting for its low half
  // Writes run behind `append` in order; at most `pendingLimit` bytes wait for them.
  const pendingLimit = Math.min(1024 * 1024, Math.floor(limit / 8));
  let queue: Promise<void> = Promise.resolve();
  let queued = 0;

  const open = async (): Promise<Deno.FsFile> => {
    if (file) return file;
    const dir = join(scratchpad, "truncated-tool-output");
    const name = await archiveFileName(toolName, toolCallId);
    path = join(dir, name);
    file = await createArchiveFile(scratchpad, dir, name);
    return file;
  };

  /** The output just passed the limit with `bytes`: seed the tail from the file, keep only the head there. */
  const overflow = async (f: Deno.FsFile, bytes: Uint8Array) => {
    const ring = await seededTail(f, written, tailBudget);
    ring.push(bytes);
    if (written > headBudget) written = await cutHead(f, headBudget);
    else if (written < headBudget) {
      await f.seek(written, Deno.SeekMode.Start);
      const room = codePointCut(bytes, headBudget - written);
      await writeAll(f, bytes.subarray(0, room));
      written += room;
    }
    await f.seek(written, Deno.SeekMode.Start);
    tail = ring;
  };

  const writeBytes = async (bytes: Uint8Array) => {
    if (bytes.length === 0) return;
    if (tail) {
      tail.push(bytes);
      return;
    }
    const f = await open();
    if (written + bytes.length <= limit) {
      await writeAll(f, bytes);
      written += bytes.length;
      return;
    }
    await overflow(f, bytes);
  };

  return {
    append(text: string) {
      if (failed !== undefined || text.length === 0) return Promise.resolve();
      const [piece, rest] = splitTrailingSurrogate(carry + text);
      carry = rest;
      if (tail && queued === 0) {
        tail.pushText(piece);
        return Promise.resolve();
      }
      const bytes = encoder.encode(piece);
      queued += bytes.length;
      queue = queue.then(async () => {
        try {
          if (failed === undefined) await writeBytes(bytes);
        } catch (err) {
          failed = errorCode(err);
        } finally {
          queued -= bytes.length;
        }
      });
      // The caller goes on while the file catches up, unless too much is waiting.
      return queued > pendingLimit ? queue : Promise.resolve();
    },
    async finish() {
      await queue;
      try {
        if (failed === undefined) {
          const rest = carry;
          carry = "";
          await writeBytes(encoder.encode(rest));
          const f = await open();
          if (tail) {
            await writeAll(f, encoder.encode(ARCHIVE_GAP_MARKER));
            await writeAll(f, tail.bytes());
          }
        }
      } catch (err) {
        failed = errorCode(err);
      } finally {
        closeQuietly(file);
        file = undefined;
      }
      if (failed !== undefined) return { ok: false, code: failed };
      return { ok: true, path: path!, truncated: tail !== undefined };
    },
    get heldBytes() {
      return tail?.size ?? 0;
    },
    get pendingBytes() {
      return queued;
    },
    get fileBytes() {
      return written;
    },
  };
}

/** The archive file name: `<safeTool>-<first 16 hex of sha256(tool_call_id)>.log`. */
export async function archiveFileName(toolName: string, toolCallId: string): Promise<string> {
  const safe = toolName.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 48) || "tool";
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(toolCallId)));
  const hex = Array.from(digest.subarray(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
  return `${safe}-${hex}.log`;
}
