/**
 * Byte chunks (read from a stream or a file) joined into one array, and
 * texts encoded as UTF-8 into one array without joining them first.
 *
 * @module
 */

/** The chunks, in order, in one new array. */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

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

const encoder = new TextEncoder();

/**
 * The UTF-8 bytes of `parts` one after the other, in one array of exactly
 * their size: the joined string is never built (for a record of megabytes,
 * `join` and `+` make a flat copy of it all before the encoding copies it
 * again). No part may end inside a surrogate pair the next one completes
 * (JSON texts never do: JSON.stringify escapes lone surrogates).
 */
export function encodeJoined(parts: readonly string[]): Uint8Array<ArrayBuffer> {
  const lengths = parts.map(utf8Length);
  const out = new Uint8Array(lengths.reduce((n, l) => n + l, 0));
  let at = 0;
  for (const [i, part] of parts.entries()) {
    encoder.encodeInto(part, out.subarray(at));
    at += lengths[i]!;
  }
  return out;
}
