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
import { type SpareBytes, spareBytes } from "./_spare_bytes.ts";

/** Unread output kept per command session (characters). */
export const DEFAULT_BUFFER_LIMIT = 1024 * 1024;

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
  dropped: number;
  carry: string; // a trailing high surrogate waiting for its low half
  spare: SpareBytes;
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;

/** Drop the oldest characters beyond the cap. */
function trim(h: Held): void {
  while (h.size > h.cap && h.pieces.length > 0) {
    const first = h.pieces[0]!;
    const excess = h.size - h.cap;
    if (first.chars <= excess) {
      h.pieces.shift();
      h.spare.give(first.bytes);
      h.size -= first.chars;
      h.dropped += first.chars;
      continue;
    }
    if (first.bytes.length === first.chars) {
      // ASCII: one byte per char, no pair to split.
      h.pieces[0] = { bytes: first.bytes.subarray(excess), chars: first.chars - excess };
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
    h.pieces[0] = { bytes: h.spare.encode(rest), chars: rest.length };
    h.spare.give(first.bytes);
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
      h.size -= text.length;
      return text;
    }
    h.pieces.shift();
    h.size -= first.chars;
    const text = decoder.decode(first.bytes);
    h.spare.give(first.bytes);
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
  h.size = 0;
  h.dropped = 0;
  h.carry = "";
  return out;
}

/** A buffer keeping at most `limit` unread characters (at least 1). */
export function createOutputBuffer(limit: number = DEFAULT_BUFFER_LIMIT): OutputBuffer {
  const h: Held = {
    cap: Math.max(1, Math.floor(limit)),
    pieces: [],
    size: 0,
    dropped: 0,
    carry: "",
    spare: spareBytes(),
  };
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
      if (piece.length > 0) h.pieces.push({ bytes: h.spare.encode(piece), chars: piece.length });
      h.size += piece.length + h.carry.length;
      if (h.size > h.cap) trim(h);
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
