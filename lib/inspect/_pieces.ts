/**
 * An export's document in pieces, so that a long text is written slice by
 * slice instead of copied whole: a piece is a string written as it is, or a
 * text written through a map (an escaping) applied to one slice at a time.
 * A record's text may be tens of MB; joining it into its item's markup,
 * escaping it whole, then encoding the joined string for the write held it
 * three to eight times over (attack round 24 bounded R12: one 60 MB answer
 * took an export to 325 MB, a thinking block or a tool output to 520 MB).
 *
 * The map of a piece must work character by character (`&` to `&amp;`, a
 * newline to a quoted one): its slices, mapped and written one after the
 * other, are then exactly the whole text mapped. Slices never cut a
 * surrogate pair, so each encodes as the whole text would.
 *
 * @module
 */

import { pairSafeEnd } from "../protocol/pair_safe_slices.ts";

/** A text written through `map`, slice by slice (`map` works character by character). */
export interface MappedText {
  /** The text, as the record holds it. */
  text: string;
  /** What a slice of it becomes in the document. */
  map: (slice: string) => string;
}

/** One piece of a document: a string as it is, or a {@linkcode MappedText}. */
export type Piece = string | MappedText;

/** The longest slice of a text written at once, in UTF-16 units. */
export const SLICE_CHARS = 256 * 1024;

/**
 * Shorter than any slice of a text cut by {@linkcode textSlices} (with its
 * default `max`). A slice is a view of the whole text, which stays alive as
 * long as the slice does: a writer that gathers short writes before passing
 * them on passes one this long on at once instead of keeping it (a kept last
 * slice held a 60 MB answer through the reading of the next record).
 */
export const MIN_SLICE_CHARS = SLICE_CHARS / 4;

/**
 * The slices of `text` in order: the text itself when it is at most `max`
 * UTF-16 units long, else ceil(length / max) slices of about equal length,
 * more than `max / 2` units each. A cut never falls between the two halves
 * of a surrogate pair (the slice before it is a unit shorter).
 */
export function* textSlices(text: string, max: number = SLICE_CHARS): Generator<string> {
  if (text.length <= max) {
    yield text;
    return;
  }
  const count = Math.ceil(text.length / max);
  let start = 0;
  for (let i = 1; i <= count; i++) {
    const end = pairSafeEnd(
      text,
      start,
      Math.max(start + 1, Math.round((i * text.length) / count)),
    );
    yield text.slice(start, end);
    start = end;
  }
}

/** The document the pieces make, as one string (what {@linkcode writePieces} writes). */
export function joinPieces(pieces: readonly Piece[]): string {
  let out = "";
  for (const p of pieces) out += typeof p === "string" ? p : p.map(p.text);
  return out;
}

/** A mapped text is mapped this many UTF-16 units at a time: what that leaves is short-lived. */
const MAP_CHARS = 16 * 1024;

/** `map` of `slice`, a short stretch at a time (the same text: `map` works character by character). */
function mapInParts(slice: string, map: (part: string) => string): string {
  let out = "";
  for (const part of textSlices(slice, MAP_CHARS)) out += map(part);
  return out;
}

/**
 * Write the pieces to `write` in order, a long one slice by slice (a mapped
 * text's slices mapped): never more than {@linkcode SLICE_CHARS} of a text
 * at once, whatever its length.
 */
export async function writePieces(
  pieces: readonly Piece[],
  write: (text: string) => Promise<void>,
): Promise<void> {
  for (const p of pieces) {
    const text = typeof p === "string" ? p : p.text;
    for (const slice of textSlices(text)) {
      const out = typeof p === "string" ? slice : mapInParts(slice, p.map);
      if (out !== "") await write(out);
    }
  }
}
