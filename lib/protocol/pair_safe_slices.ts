/**
 * Cutting a long text into slices that never fall between the two halves
 * of a surrogate pair, so that each slice encodes (as UTF-8, or as a JSON
 * string) exactly as its part of the whole text would. Writers, encoders
 * and the masker all handle a text of tens of MB a slice at a time; a cut
 * between a pair's halves would turn the pair into two U+FFFD.
 *
 * @module
 */

/** Whether the UTF-16 unit `c` is the first (high) half of a surrogate pair. */
export function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/**
 * `end` as the end of a slice of `text` that begins at `start`: moved back a
 * unit where the unit before it is a high surrogate (the pair stays whole in
 * the next slice), but never to `start` or before (a slice of one high
 * surrogate then takes its low half too).
 */
export function pairSafeEnd(text: string, start: number, end: number): number {
  if (end >= text.length) return text.length;
  if (!isHighSurrogate(text.charCodeAt(end - 1))) return end;
  return end - 1 > start ? end - 1 : Math.min(text.length, end + 1);
}

/**
 * The slices of `text` in order, each at most `max` UTF-16 units long (one
 * unit longer only where `max` is 1 and a pair must stay whole): the text
 * itself when it is no longer than `max`.
 */
export function* pairSafeSlices(text: string, max: number): Generator<string> {
  if (text.length <= max) {
    yield text;
    return;
  }
  for (let at = 0; at < text.length;) {
    const end = pairSafeEnd(text, at, Math.min(text.length, at + Math.max(1, max)));
    yield text.slice(at, end);
    at = end;
  }
}
