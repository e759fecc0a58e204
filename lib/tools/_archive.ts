/**
 * The truncation archive (§6.2): when a tool's output exceeds its
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

/** Largest archive file: one byte below read_file's 8 MiB scan cap, so read_file can reach EOF. */
export const ARCHIVE_LIMIT_BYTES = 8 * 1024 * 1024 - 1;

/** Written between head and tail when the output exceeded the file limit. */
export const ARCHIVE_GAP_MARKER = "\n[archive middle truncated]\n";

const encoder = new TextEncoder();
const GAP_BYTES = encoder.encode(ARCHIVE_GAP_MARKER).length;

/** UTF-8 byte length of a string (lone surrogates count as U+FFFD, 3 bytes). */
export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

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

/** The longest UTF-8 suffix of `text` of at most `maxBytes` bytes, cut on a code point. */
function tailBytes(text: string, maxBytes: number): Uint8Array {
  let start = Math.max(0, text.length - maxBytes);
  if (start > 0 && isLow(text.charCodeAt(start)) && isHigh(text.charCodeAt(start - 1))) start--;
  let slice = text.slice(start);
  if (slice.length > 0 && isLow(slice.charCodeAt(0))) slice = slice.slice(1); // orphaned half
  const bytes = encoder.encode(slice);
  if (bytes.length <= maxBytes) return bytes;
  let from = bytes.length - maxBytes;
  while (from < bytes.length && (bytes[from]! & 0xc0) === 0x80) from++;
  return bytes.slice(from);
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
 * An archive file being written as the output arrives. Only the rolling tail
 * is held in memory; everything up to the size limit goes to the file at
 * once. When the output outgrows the limit the file is cut back to its head
 * and, at {@linkcode ArchiveWriter.finish}, the gap marker and the tail are
 * appended.
 */
export interface ArchiveWriter {
  /** Append the next piece of the tool's (masked) text. Never throws: a failure is kept for `finish`. */
  append(text: string): Promise<void>;
  /** Complete and close the file; the path, or the error code of the first failure. */
  finish(): Promise<ArchiveResult>;
  /** UTF-16 units held in memory (the rolling tail and a split surrogate). */
  readonly heldChars: number;
  /** Bytes in the file so far. */
  readonly fileBytes: number;
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? code : (err as Error).name || "UNKNOWN";
}

async function writeAll(file: Deno.FsFile, data: Uint8Array): Promise<void> {
  let off = 0;
  while (off < data.length) off += await file.write(data.subarray(off));
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
  const limit = Math.max(limitBytes, GAP_BYTES + 2);
  const headBudget = Math.floor((limit - GAP_BYTES) / 2);
  const tailBudget = limit - GAP_BYTES - headBudget;
  let file: Deno.FsFile | undefined;
  let path: string | undefined;
  let failed: string | undefined;
  let written = 0; // bytes in the file
  let overflowed = false;
  let carry = ""; // a high surrogate waiting for its low half
  let tail: string[] = [];
  let tailLen = 0; // UTF-16 units held in `tail`; every unit is >= 1 byte

  const pushTail = (text: string) => {
    if (text.length >= tailBudget) {
      const start = text.length - tailBudget;
      tail = [text.slice(start > 0 && isLow(text.charCodeAt(start)) ? start - 1 : start)];
      tailLen = tail[0]!.length;
      return;
    }
    tail.push(text);
    tailLen += text.length;
    // Each unit is at least one byte, so `tailBudget` units always cover the byte budget.
    while (tail.length > 1 && tailLen - tail[0]!.length >= tailBudget) {
      tailLen -= tail.shift()!.length;
    }
  };

  const open = async (): Promise<Deno.FsFile> => {
    if (file) return file;
    const dir = join(scratchpad, "truncated-tool-output");
    path = join(dir, await archiveFileName(toolName, toolCallId));
    await Deno.mkdir(scratchpad, { recursive: true });
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    file = await Deno.open(path, { write: true, read: true, createNew: true, mode: 0o600 });
    return file;
  };

  /** Cut the file back to at most `headBudget` bytes, on a code point. */
  const cutToHead = async (f: Deno.FsFile) => {
    let cut = headBudget;
    const probe = new Uint8Array(4);
    const from = Math.max(0, cut - 3);
    await f.seek(from, Deno.SeekMode.Start);
    let got = 0;
    while (got < probe.length) {
      const n = await f.read(probe.subarray(got));
      if (n === null) break;
      got += n;
    }
    const window = probe.subarray(0, got);
    cut = from + codePointCut(window, cut - from);
    await f.truncate(cut);
    await f.seek(cut, Deno.SeekMode.Start);
    written = cut;
  };

  const write = async (text: string) => {
    if (text.length === 0) return;
    if (overflowed) {
      pushTail(text);
      return;
    }
    const bytes = encoder.encode(text);
    const f = await open();
    if (written + bytes.length <= limit) {
      await writeAll(f, bytes);
      written += bytes.length;
      pushTail(text);
      return;
    }
    overflowed = true;
    if (written > headBudget) await cutToHead(f);
    else if (written < headBudget) {
      const room = codePointCut(bytes, headBudget - written);
      await writeAll(f, bytes.subarray(0, room));
      written += room;
    }
    pushTail(text);
  };

  return {
    async append(text: string) {
      if (failed !== undefined || text.length === 0) return;
      let piece = carry + text;
      carry = "";
      if (isHigh(piece.charCodeAt(piece.length - 1))) {
        carry = piece.slice(-1);
        piece = piece.slice(0, -1);
      }
      try {
        await write(piece);
      } catch (err) {
        failed = errorCode(err);
      }
    },
    async finish() {
      try {
        if (failed === undefined) {
          const rest = carry;
          carry = "";
          await write(rest);
          const f = await open();
          if (overflowed) {
            await writeAll(f, encoder.encode(ARCHIVE_GAP_MARKER));
            await writeAll(f, tailBytes(tail.join(""), tailBudget));
          }
        }
      } catch (err) {
        failed = errorCode(err);
      } finally {
        tail = [];
        tailLen = 0;
        try {
          file?.close();
        } catch {
          // Already closed.
        }
        file = undefined;
      }
      if (failed !== undefined) return { ok: false, code: failed };
      return { ok: true, path: path!, truncated: overflowed };
    },
    get heldChars() {
      return tailLen + carry.length;
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
