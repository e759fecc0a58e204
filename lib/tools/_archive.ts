/**
 * The truncation archive (§6.2): when a tool's output exceeds its
 * `maxOutputLength`, the full text the tool produced is saved under the
 * session scratchpad so the model can page through it with read_file.
 *
 * Memory is bounded: the capture keeps the exact text up to the file limit,
 * then only a UTF-8-safe head and a rolling tail.
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

/** The longest UTF-8 prefix of `text` of at most `maxBytes` bytes, cut on a code point. */
function headBytes(text: string, maxBytes: number): Uint8Array {
  const bytes = encoder.encode(text.slice(0, safeCut(text, Math.min(text.length, maxBytes + 1))));
  if (bytes.length <= maxBytes) return bytes;
  let cut = maxBytes;
  while (cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut--;
  return bytes.slice(0, cut);
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

/** A bounded capture of one call's full output text. */
export interface ArchiveCapture {
  /** Append the next piece of the tool's text (before truncation). */
  append(text: string): void;
  /** The file content, and whether the middle had to be dropped. */
  finish(): { data: Uint8Array; truncated: boolean };
}

/** Start a capture that keeps at most `limitBytes` bytes (gap marker included). */
export function startCapture(limitBytes = ARCHIVE_LIMIT_BYTES): ArchiveCapture {
  const limit = Math.max(limitBytes, GAP_BYTES + 2);
  const headBudget = Math.floor((limit - GAP_BYTES) / 2);
  const tailBudget = limit - GAP_BYTES - headBudget;
  let exact: string[] = [];
  let exactBytes = 0;
  let head: Uint8Array | undefined; // set once the exact phase overflowed
  let tail: string[] = [];
  let tailLen = 0; // UTF-16 units held in `tail`; >= bytes/3, and every unit is >= 1 byte

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

  return {
    append(text: string) {
      if (text.length === 0) return;
      if (head === undefined) {
        const bytes = utf8Length(text);
        if (exactBytes + bytes <= limit) {
          exact.push(text);
          exactBytes += bytes;
          return;
        }
        const all = exact.join("") + text;
        exact = [];
        head = headBytes(all, headBudget);
        pushTail(all);
        return;
      }
      pushTail(text);
    },
    finish() {
      if (head === undefined) return { data: encoder.encode(exact.join("")), truncated: false };
      const t = tailBytes(tail.join(""), tailBudget);
      const out = new Uint8Array(head.length + GAP_BYTES + t.length);
      out.set(head, 0);
      out.set(encoder.encode(ARCHIVE_GAP_MARKER), head.length);
      out.set(t, head.length + GAP_BYTES);
      return { data: out, truncated: true };
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

/** The outcome of writing an archive. */
export type ArchiveResult = { ok: true; path: string } | { ok: false; code: string };

/**
 * Write `data` to `<scratchpad>/truncated-tool-output/<name>` (directory 0700,
 * file 0600 created exclusively). Never throws: a failure returns its code.
 */
export async function writeArchive(
  scratchpad: string,
  toolName: string,
  toolCallId: string,
  data: Uint8Array,
): Promise<ArchiveResult> {
  const dir = join(scratchpad, "truncated-tool-output");
  const path = join(dir, await archiveFileName(toolName, toolCallId));
  try {
    await Deno.mkdir(scratchpad, { recursive: true });
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const file = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
    try {
      let off = 0;
      while (off < data.length) off += await file.write(data.subarray(off));
    } finally {
      file.close();
    }
    return { ok: true, path };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return { ok: false, code: typeof code === "string" ? code : (err as Error).name || "UNKNOWN" };
  }
}
