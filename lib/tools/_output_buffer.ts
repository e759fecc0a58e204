/**
 * The unread output of a command session: a bounded character buffer that
 * drops its oldest text when full and says so once, in a marker, when the
 * rest is taken.
 *
 * The text is held as UTF-8 bytes, not strings: a string that stays alive
 * across a few collections is moved to V8's old generation, so a buffer of
 * strings filled by a fast producer grows the heap far beyond its own size
 * (a command printing a gigabyte would cost hundreds of MB of RSS). Bytes
 * live outside the heap and are freed as soon as they are dropped or taken.
 *
 * @module
 */
import { safeCut } from "./_archive.ts";

/** Unread output kept per command session (characters). */
export const DEFAULT_BUFFER_LIMIT = 1024 * 1024;

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
  /** Unread characters held. */
  readonly size: number;
  /** Characters dropped since the last `take`. */
  readonly dropped: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One appended piece: its UTF-8 bytes and its length in UTF-16 units. */
interface Piece {
  bytes: Uint8Array;
  chars: number;
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;

/** A buffer keeping at most `limit` unread characters (at least 1). */
export function createOutputBuffer(limit: number = DEFAULT_BUFFER_LIMIT): OutputBuffer {
  const cap = Math.max(1, Math.floor(limit));
  let pieces: Piece[] = [];
  let size = 0; // chars in `pieces` plus `carry`
  let dropped = 0;
  let carry = ""; // a trailing high surrogate waiting for its low half

  const trim = () => {
    while (size > cap && pieces.length > 0) {
      const first = pieces[0]!;
      const excess = size - cap;
      if (first.chars <= excess) {
        pieces.shift();
        size -= first.chars;
        dropped += first.chars;
        continue;
      }
      if (first.bytes.length === first.chars) {
        // ASCII: one byte per char, no pair to split.
        pieces[0] = { bytes: first.bytes.subarray(excess), chars: first.chars - excess };
        size -= excess;
        dropped += excess;
        continue;
      }
      // Cut inside the first piece, never between the halves of a surrogate pair.
      const text = decoder.decode(first.bytes);
      let cut = excess;
      const code = text.charCodeAt(cut);
      if (code >= 0xdc00 && code <= 0xdfff) cut++;
      const rest = text.slice(cut);
      pieces[0] = { bytes: encoder.encode(rest), chars: rest.length };
      size -= cut;
      dropped += cut;
    }
  };

  const takeChunks = (): string[] => {
    const out = pieces.map((p) => decoder.decode(p.bytes));
    if (carry) out.push(carry);
    if (dropped > 0) out.unshift(`${droppedMarker(dropped)}\n`);
    pieces = [];
    size = 0;
    dropped = 0;
    carry = "";
    return out;
  };

  return {
    append(text: string) {
      if (text.length === 0) return;
      let piece = carry + text;
      size -= carry.length;
      carry = "";
      if (isHigh(piece.charCodeAt(piece.length - 1))) {
        carry = piece.slice(-1);
        piece = piece.slice(0, -1);
      }
      if (piece.length > 0) pieces.push({ bytes: encoder.encode(piece), chars: piece.length });
      size += piece.length + carry.length;
      if (size > cap) trim();
    },
    take: () => takeChunks().join(""),
    takeChunks,
    get size() {
      return size;
    },
    get dropped() {
      return dropped;
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
