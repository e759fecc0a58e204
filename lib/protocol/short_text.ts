/**
 * A string kept for display, cut to a length and copied: V8 keeps a slice
 * of a string as a view of the whole one, so a 48-character column cut
 * from a 1 MB prompt kept the megabyte alive as long as the row (attack
 * round 24 bounded R4: 600 such rows of `sessions list`, 778 MB).
 *
 * @module
 */

/** `text` cut to at most `max` characters (an ellipsis last when cut), in a string of its own. */
export function shortText(text: string, max: number): string {
  if (text.length <= max) return text.length > 12 ? copied(text) : text;
  return copied(`${text.slice(0, Math.max(0, max - 1))}…`);
}

/** `text` cut to at most `max` characters (no mark), in a string of its own when cut. */
export function cutText(text: string, max: number): string {
  return text.length <= max ? text : copied(text.slice(0, max));
}

/** A flat copy of `text`, sharing no storage with it. */
function copied(text: string): string {
  return new TextDecoder().decode(new TextEncoder().encode(text));
}
