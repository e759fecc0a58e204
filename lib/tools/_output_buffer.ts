/**
 * The unread output of a command session: a bounded character buffer that
 * drops its oldest text when full and says so once, in a marker, when the
 * rest is taken.
 *
 * @module
 */
import { safeCut } from "./_archive.ts";

/** Unread output kept per command session (characters), §6.5. */
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
  /** Unread characters held. */
  readonly size: number;
  /** Characters dropped since the last `take`. */
  readonly dropped: number;
}

/** A buffer keeping at most `limit` unread characters (at least 1). */
export function createOutputBuffer(limit: number = DEFAULT_BUFFER_LIMIT): OutputBuffer {
  const cap = Math.max(1, Math.floor(limit));
  let chunks: string[] = [];
  let size = 0;
  let dropped = 0;

  const trim = () => {
    while (size > cap && chunks.length > 0) {
      const first = chunks[0]!;
      const excess = size - cap;
      if (first.length <= excess) {
        chunks.shift();
        size -= first.length;
        dropped += first.length;
        continue;
      }
      // Cut inside the first chunk, never between the halves of a surrogate pair.
      let cut = excess;
      const code = first.charCodeAt(cut);
      if (code >= 0xdc00 && code <= 0xdfff) cut++;
      chunks[0] = first.slice(cut);
      size -= cut;
      dropped += cut;
    }
  };

  return {
    append(text: string) {
      if (text.length === 0) return;
      chunks.push(text);
      size += text.length;
      if (size > cap) trim();
    },
    take() {
      const body = chunks.join("");
      const out = dropped > 0 ? `${droppedMarker(dropped)}\n${body}` : body;
      chunks = [];
      size = 0;
      dropped = 0;
      return out;
    },
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
