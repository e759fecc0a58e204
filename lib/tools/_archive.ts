/**
 * The truncation archive: when a tool's output exceeds its
 * `maxOutputLength`, the full text the tool produced is saved under the
 * session scratchpad so the model can page through it with read_file.
 *
 * The text goes to the file as it arrives, so memory stays bounded whatever
 * the output size: the file holds the exact text up to its size limit; past
 * it, only a UTF-8-safe head of the file is kept, the rest passes through a
 * ring of the last bytes kept in the file past the limit
 * (`_archive_tail.ts`), and when the call ends that tail is moved after a
 * gap marker and the file cut there. The text is encoded through one block
 * and written at once, synchronously: a write into the page cache costs
 * less than handing it to a thread, and a writer waiting for threads fell
 * behind a fast command (its unread output was dropped) while the output
 * it held waited in the heap. A writer holds two blocks of memory, whatever
 * the output size.
 *
 * @module
 */
import { join } from "node:path";
import { TRUNCATED_OUTPUT_DIR } from "../state/paths.ts";
import { splitTrailingSurrogate } from "../display/invisible.ts";
import { type FileAt, type FileTail, fileTail, readInto, writeAt } from "./_archive_tail.ts";
import { hexOf } from "../protocol/hex.ts";

/** Largest archive file: one byte below read_file's 8 MiB scan cap, so read_file can reach EOF. */
export const ARCHIVE_LIMIT_BYTES = 8 * 1024 * 1024 - 1;

/** Written between head and tail when the output exceeded the file limit. */
export const ARCHIVE_GAP_MARKER = "\n[archive middle truncated]\n";

/** Largest block an archive encodes and copies through (bytes; at most an eighth of its limit). */
const BLOCK_BYTES = 64 * 1024;

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
 * only the file's head is kept, the rest passes through a fixed-size ring
 * of the last bytes kept in the file, and {@linkcode ArchiveWriter.finish}
 * puts the gap marker and that tail after the head.
 */
export interface ArchiveWriter {
  /**
   * Write the next piece of the tool's (masked) text; resolves once it is
   * in the file (at once but for the first, which creates the file). Never
   * rejects: a failure is kept for `finish`.
   */
  append(text: string): Promise<void>;
  /** Complete and close the file; the path, or the error code of the first failure. */
  finish(): Promise<ArchiveResult>;
  /**
   * Bytes of memory the writer holds for the output: its block and, once the
   * limit was passed, its copy block; at most 128 KiB (a quarter of the limit
   * for a small one), whatever the output size.
   */
  readonly heldBytes: number;
  /** Bytes of the head in the file so far (the tail's ring past the limit not counted). */
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
  const real = join(await Deno.realPath(scratchpad), TRUNCATED_OUTPUT_DIR);
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

/** Where to cut the file `f` to keep at most `headBudget` bytes of head, on a code point boundary. */
function headCut(f: FileAt, headBudget: number): number {
  const from = Math.max(0, headBudget - 3);
  const probe = new Uint8Array(4);
  const window = probe.subarray(0, readInto(f, from, probe));
  return from + codePointCut(window, headBudget - from);
}

/** Close `file`, if any; one already closed is fine. */
function closeQuietly(file: Deno.FsFile | undefined): void {
  try {
    file?.close();
  } catch {
    // Already closed.
  }
}

/** Where an archive's bytes go in its file: the head up to the limit, then the tail's ring. */
interface ArchiveLayout {
  /** Put the next bytes of the output in the file. */
  write(f: FileAt, bytes: Uint8Array): void;
  /** After the output: put the gap marker and the tail after the head and cut the file there. */
  close(f: FileAt): void;
  /** Whether the output passed the limit. */
  readonly truncated: boolean;
  /** Bytes of the head in the file. */
  readonly headBytes: number;
  /** Bytes of its copy block (once the output passed the limit). */
  readonly heldBytes: number;
}

/** The layout of an archive of at most `limit` bytes (gap marker included), copying through blocks of `blockBytes`. */
function archiveLayout(limit: number, blockBytes: number): ArchiveLayout {
  const headBudget = Math.floor((limit - GAP_BYTES) / 2);
  const tailBudget = limit - GAP_BYTES - headBudget;
  let written = 0; // bytes of the head in the file
  let tail: FileTail | undefined; // set once the output passed the limit: its ring, past `limit`
  let copyBlock: Uint8Array | undefined;

  /** The output just passed the limit with `bytes`: seed the tail from the file, keep only the head there. */
  const overflow = (f: FileAt, bytes: Uint8Array) => {
    copyBlock = new Uint8Array(blockBytes);
    // The ring lies past the limit: clear of the head, and of where `close` moves the tail to.
    const ring = fileTail(f, limit, tailBudget, copyBlock);
    ring.seed(Math.max(0, written - tailBudget), written);
    ring.push(bytes);
    if (written > headBudget) written = headCut(f, headBudget);
    else if (written < headBudget) {
      const room = codePointCut(bytes, headBudget - written);
      writeAt(f, written, bytes.subarray(0, room));
      written += room;
    }
    tail = ring;
  };

  return {
    write(f, bytes) {
      if (bytes.length === 0) return;
      if (tail) return tail.push(bytes);
      if (written + bytes.length <= limit) {
        writeAt(f, written, bytes);
        written += bytes.length;
        return;
      }
      overflow(f, bytes);
    },
    close(f) {
      if (!tail) return;
      writeAt(f, written, encoder.encode(ARCHIVE_GAP_MARKER));
      f.file.truncateSync(tail.moveTo(written + GAP_BYTES));
    },
    get truncated() {
      return tail !== undefined;
    },
    get headBytes() {
      return written;
    },
    get heldBytes() {
      return copyBlock?.length ?? 0;
    },
  };
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
  // Long because: one closure-based archive writer whose methods share the file, its layout and
  // the appends waiting for the file; each method is short.
  const limit = Math.max(limitBytes, GAP_BYTES + 2);
  const blockBytes = Math.max(4, Math.min(BLOCK_BYTES, Math.floor(limit / 8))); // 4: any code point
  const layout = archiveLayout(limit, blockBytes);
  let opening: Promise<FileAt> | undefined;
  let file: FileAt | undefined;
  let path: string | undefined;
  let failed: string | undefined;
  let block: Uint8Array | undefined; // what the text is encoded into
  let carry = ""; // a high surrogate waiting for its low half
  // Appends made while the file is being created wait for it, in order.
  let chain: Promise<void> = Promise.resolve();
  let chained = 0;

  const open = (): Promise<FileAt> =>
    opening ??= (async () => {
      const dir = join(scratchpad, TRUNCATED_OUTPUT_DIR);
      const name = await archiveFileName(toolName, toolCallId);
      path = join(dir, name);
      file = { file: await createArchiveFile(scratchpad, dir, name), at: 0 };
      return file;
    })();

  /** Write `text` to `f` through the block; a failure is kept. */
  const writeText = (f: FileAt, text: string) => {
    if (failed !== undefined) return;
    try {
      block ??= new Uint8Array(blockBytes);
      for (let rest = text; rest.length > 0;) {
        const { read, written } = encoder.encodeInto(rest, block);
        layout.write(f, block.subarray(0, written));
        rest = rest.slice(read);
      }
    } catch (err) {
      failed = errorCode(err);
    }
  };

  return {
    append(text: string) {
      if (failed !== undefined || text.length === 0) return Promise.resolve();
      const [piece, rest] = splitTrailingSurrogate(carry + text);
      carry = rest;
      if (file !== undefined && chained === 0) {
        writeText(file, piece);
        return Promise.resolve();
      }
      chained++;
      chain = chain.then(async () => {
        try {
          writeText(file ?? await open(), piece);
        } catch (err) {
          failed ??= errorCode(err);
        } finally {
          chained--;
        }
      });
      return chain;
    },
    async finish() {
      await chain;
      try {
        if (failed === undefined) {
          const f = file ?? await open();
          writeText(f, carry);
          carry = "";
          if (failed === undefined) layout.close(f);
        }
      } catch (err) {
        failed ??= errorCode(err);
      } finally {
        closeQuietly(file?.file);
        file = undefined;
      }
      if (failed !== undefined) return { ok: false, code: failed };
      return { ok: true, path: path!, truncated: layout.truncated };
    },
    get heldBytes() {
      return (block?.length ?? 0) + layout.heldBytes;
    },
    get fileBytes() {
      return layout.headBytes;
    },
  };
}

/** The archive file name: `<safeTool>-<first 16 hex of sha256(tool_call_id)>.log`. */
export async function archiveFileName(toolName: string, toolCallId: string): Promise<string> {
  const safe = toolName.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 48) || "tool";
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(toolCallId)));
  const hex = hexOf(digest.subarray(0, 8));
  return `${safe}-${hex}.log`;
}
