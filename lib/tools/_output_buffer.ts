/**
 * The unread output of a command session: a bounded character buffer that
 * drops its oldest text when full and says so once, in a marker, when the
 * rest is taken.
 *
 * The text is held as UTF-8 bytes, not strings: a string that stays alive
 * across a few collections is moved to V8's old generation, so a buffer of
 * strings filled by a fast producer grows the heap far beyond its own size
 * (a command printing a gigabyte would cost hundreds of MB of RSS). Bytes
 * live outside the heap and are freed as soon as they are dropped or taken;
 * the arrays of large pieces are kept to encode the next ones into
 * (`_spare_bytes.ts`), so streaming output leaves no dead array per piece.
 *
 * @module
 */
import { safeCut } from "./_archive.ts";
import { isHighSurrogate as isHigh } from "../protocol/pair_safe_slices.ts";
import { type SpareBytes, spareBytes } from "./_spare_bytes.ts";

/** Unread output kept per command session (characters). */
export const DEFAULT_BUFFER_LIMIT = 1024 * 1024;

/**
 * The unread output and spare arrays all the output buffers of the process hold together (UTF-8
 * bytes). A session keeps up to 64 command sessions and each subagent a registry of its own, and
 * a buffer's limit counts characters, three bytes each for CJK text: 64 background commands
 * printing `中` that nobody read held 482 MB (attack round 25 bounded C2). Past it the spare
 * arrays go first, then the buffers holding the most drop their oldest output down to an equal
 * share (never below {@linkcode MIN_UNREAD_BYTES}), with the usual marker.
 */
export const PROCESS_UNREAD_BYTES = 32 * 1024 * 1024;

/** What a buffer keeps of its unread output however much the process holds (bytes). */
export const MIN_UNREAD_BYTES = 64 * 1024;

/** The most UTF-8 bytes of output {@linkcode OutputBuffer.takeNext} decodes at a time. */
export const TAKE_MAX_BYTES = 16 * 1024;

/** The line put before taken output when older text was dropped. */
export function droppedMarker(chars: number): string {
  return `[... ${chars} chars of earlier output dropped ...]`;
}

/** A bounded buffer of unread output. */
export interface OutputBuffer {
  /** Append text; drops the oldest characters beyond the limit. */
  append(text: string): void;
  /** Everything unread (prefixed with the drop marker and a newline when text was dropped); empties the buffer. */
  take(): string;
  /**
   * The same as {@linkcode OutputBuffer.take}, in the pieces it was appended
   * in (never joined, so no large string is built for output that streams on).
   */
  takeChunks(): string[];
  /**
   * The next unread piece, of at most {@linkcode TAKE_MAX_BYTES} bytes (the
   * drop marker and a newline first, when text was dropped), removed from the
   * buffer; undefined when nothing is unread. Only that piece is decoded, and
   * kept small: a reader holds the last piece it took while it writes it on,
   * and 16 commands' pieces of 64 KiB held across collections were moved to
   * V8's old generation by the hundred MB (attack round 24).
   */
  takeNext(): string | undefined;
  /** Unread characters held. */
  readonly size: number;
  /** Characters dropped since the last `take`. */
  readonly dropped: number;
}

const decoder = new TextDecoder();

/** One appended piece: its UTF-8 bytes and its length in UTF-16 units. */
interface Piece {
  bytes: Uint8Array;
  chars: number;
}

/** What a buffer holds. */
interface Held {
  cap: number;
  pieces: Piece[];
  size: number; // chars in `pieces` plus `carry`
  bytes: number; // bytes in `pieces`
  dropped: number;
  carry: string; // a trailing high surrogate waiting for its low half
  spare: SpareBytes;
  account: Account;
}

/** What a buffer counts in the process's total, kept apart so it can be taken back once the buffer is collected. */
interface Account {
  bytes: number;
}

/** The bytes every live buffer's account holds, and the buffers themselves. */
const all = { bytes: 0, buffers: new Set<WeakRef<Held>>() };
/** A buffer collected: its bytes and its entry go. */
const collected = new FinalizationRegistry<{ account: Account; ref: WeakRef<Held> }>((gone) => {
  all.bytes -= gone.account.bytes;
  all.buffers.delete(gone.ref);
});

/** The unread output and spare arrays the process's output buffers hold together (bytes). */
export function processUnreadBytes(): number {
  return all.bytes;
}

/** Bring `h`'s account up to date, and the process under its bound. */
function settle(h: Held): void {
  const now = h.bytes + h.spare.heldBytes;
  all.bytes += now - h.account.bytes;
  h.account.bytes = now;
  if (all.bytes > PROCESS_UNREAD_BYTES) rebalance();
}

/** The process over {@linkcode PROCESS_UNREAD_BYTES}: spare arrays let go, then the largest buffers cut. */
function rebalance(): void {
  const live: Held[] = [];
  for (const ref of all.buffers) {
    const h = ref.deref();
    if (h === undefined) all.buffers.delete(ref);
    else live.push(h);
  }
  for (const h of live) h.spare.clear();
  const share = Math.max(MIN_UNREAD_BYTES, Math.floor(PROCESS_UNREAD_BYTES / live.length));
  let total = live.reduce((n, h) => n + h.bytes, 0);
  live.sort((a, b) => b.bytes - a.bytes);
  for (const h of live) {
    if (total <= PROCESS_UNREAD_BYTES || h.bytes <= share) break;
    const before = h.bytes;
    trimBytes(h, share);
    total -= before - h.bytes;
  }
  for (const h of live) {
    all.bytes += h.bytes - h.account.bytes;
    h.account.bytes = h.bytes;
  }
}

/** UTF-16 units of well-formed UTF-8 `bytes`: one a code point, two for one past U+FFFF. */
function utf16Units(bytes: Uint8Array): number {
  let n = 0;
  for (const b of bytes) {
    if ((b & 0xc0) !== 0x80) n += b >= 0xf0 ? 2 : 1;
  }
  return n;
}

/** Drop the oldest output of `h` until it holds at most `target` bytes (cut on a code point). */
function trimBytes(h: Held, target: number): void {
  while (h.bytes > target && h.pieces.length > 0) {
    const first = h.pieces[0]!;
    const excess = h.bytes - target;
    if (first.bytes.length <= excess) {
      h.pieces.shift();
      h.bytes -= first.bytes.length;
      h.size -= first.chars;
      h.dropped += first.chars;
      continue;
    }
    let cut = excess;
    while ((first.bytes[cut]! & 0xc0) === 0x80) cut++;
    const chars = utf16Units(first.bytes.subarray(0, cut));
    h.pieces[0] = { bytes: first.bytes.subarray(cut), chars: first.chars - chars };
    h.bytes -= cut;
    h.size -= chars;
    h.dropped += chars;
  }
}

/** Drop the oldest characters beyond the cap. */
function trim(h: Held): void {
  while (h.size > h.cap && h.pieces.length > 0) {
    const first = h.pieces[0]!;
    const excess = h.size - h.cap;
    if (first.chars <= excess) {
      h.pieces.shift();
      h.spare.give(first.bytes);
      h.bytes -= first.bytes.length;
      h.size -= first.chars;
      h.dropped += first.chars;
      continue;
    }
    if (first.bytes.length === first.chars) {
      // ASCII: one byte per char, no pair to split.
      h.pieces[0] = { bytes: first.bytes.subarray(excess), chars: first.chars - excess };
      h.bytes -= excess;
      h.size -= excess;
      h.dropped += excess;
      continue;
    }
    // Cut inside the first piece, never between the halves of a surrogate pair.
    const text = decoder.decode(first.bytes);
    let cut = excess;
    const code = text.charCodeAt(cut);
    if (code >= 0xdc00 && code <= 0xdfff) cut++;
    const rest = text.slice(cut);
    const bytes = h.spare.encode(rest);
    h.pieces[0] = { bytes, chars: rest.length };
    h.spare.give(first.bytes);
    h.bytes += bytes.length - first.bytes.length;
    h.size -= cut;
    h.dropped += cut;
  }
}

/** Take the next piece of at most {@linkcode TAKE_MAX_BYTES} (see `OutputBuffer.takeNext`). */
function takeNext(h: Held): string | undefined {
  if (h.dropped > 0) {
    const marker = `${droppedMarker(h.dropped)}\n`;
    h.dropped = 0;
    return marker;
  }
  const first = h.pieces[0];
  if (first !== undefined) {
    if (first.bytes.length > TAKE_MAX_BYTES) {
      // Its start, cut on a code point (the bytes are well-formed UTF-8); the rest stays.
      let cut = TAKE_MAX_BYTES;
      while ((first.bytes[cut]! & 0xc0) === 0x80) cut--;
      const text = decoder.decode(first.bytes.subarray(0, cut));
      h.pieces[0] = { bytes: first.bytes.subarray(cut), chars: first.chars - text.length };
      h.bytes -= cut;
      h.size -= text.length;
      settle(h);
      return text;
    }
    h.pieces.shift();
    h.bytes -= first.bytes.length;
    h.size -= first.chars;
    const text = decoder.decode(first.bytes);
    h.spare.give(first.bytes);
    settle(h);
    return text;
  }
  if (!h.carry) return undefined;
  const rest = h.carry;
  h.size -= rest.length;
  h.carry = "";
  return rest;
}

/** Take everything unread, in the pieces it was appended in (see `OutputBuffer.takeChunks`). */
function takeChunks(h: Held): string[] {
  const out = h.pieces.map((p) => decoder.decode(p.bytes));
  if (h.carry) out.push(h.carry);
  if (h.dropped > 0) out.unshift(`${droppedMarker(h.dropped)}\n`);
  for (const p of h.pieces) h.spare.give(p.bytes);
  h.pieces = [];
  h.bytes = 0;
  h.size = 0;
  h.dropped = 0;
  h.carry = "";
  settle(h);
  return out;
}

/** A buffer keeping at most `limit` unread characters (at least 1). */
export function createOutputBuffer(limit: number = DEFAULT_BUFFER_LIMIT): OutputBuffer {
  const h: Held = {
    cap: Math.max(1, Math.floor(limit)),
    pieces: [],
    size: 0,
    bytes: 0,
    dropped: 0,
    carry: "",
    spare: spareBytes(),
    account: { bytes: 0 },
  };
  const ref = new WeakRef(h);
  all.buffers.add(ref);
  collected.register(h, { account: h.account, ref });
  return {
    append(text: string) {
      if (text.length === 0) return;
      let piece = h.carry + text;
      h.size -= h.carry.length;
      h.carry = "";
      if (isHigh(piece.charCodeAt(piece.length - 1))) {
        h.carry = piece.slice(-1);
        piece = piece.slice(0, -1);
      }
      if (piece.length > 0) {
        const bytes = h.spare.encode(piece);
        h.pieces.push({ bytes, chars: piece.length });
        h.bytes += bytes.length;
      }
      h.size += piece.length + h.carry.length;
      if (h.size > h.cap) trim(h);
      settle(h);
    },
    take: () => takeChunks(h).join(""),
    takeChunks: () => takeChunks(h),
    takeNext: () => takeNext(h),
    get size() {
      return h.size;
    },
    get dropped() {
      return h.dropped;
    },
  };
}

/** The last `max` characters of `text` (cut on a code point), or all of it. */
export function tailOf(text: string, max: number): string {
  if (text.length <= max) return text;
  const start = text.length - max;
  const code = text.charCodeAt(start);
  return text.slice(code >= 0xdc00 && code <= 0xdfff ? start + 1 : start);
}

/** The first `max` characters of `text` (cut on a code point), or all of it. */
export function headOf(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, safeCut(text, max));
}
