/**
 * Finding a string in a text in linear time. `String.prototype.indexOf`
 * searches with Boyer-Moore-Horspool, whose worst case is the text's length
 * times the pattern's: a 600 KB `old_string` of `a…aba…a` kept `edit_file`'s
 * tool host busy long past the call's timeout (attack round 20 bounded #4).
 * A long pattern is found with Knuth-Morris-Pratt instead, which looks at
 * each character of the text once, and the search gives up when `signal`
 * is aborted.
 *
 * @module
 */

/** Patterns up to this length are found with `indexOf` (its worst case stays linear enough). */
const SHORT = 256;

/** A finder of `needle`'s occurrences, each searched for from a position on. */
export interface Finder {
  /** The first occurrence at or after `from`, or -1. */
  next(from: number): number;
}

/** A {@linkcode Finder} of `needle` in `text`; throws when `signal` is aborted during a search. */
export function finderOf(text: string, needle: string, signal?: AbortSignal): Finder {
  if (needle.length <= SHORT) return { next: (from) => text.indexOf(needle, from) };
  // The failure function: for each prefix, the length of its longest proper border.
  const fail = new Int32Array(needle.length);
  for (let i = 1, k = 0; i < needle.length; i++) {
    while (k > 0 && needle.charCodeAt(i) !== needle.charCodeAt(k)) k = fail[k - 1]!;
    if (needle.charCodeAt(i) === needle.charCodeAt(k)) k++;
    fail[i] = k;
  }
  return {
    next(from: number): number {
      for (let i = from, k = 0; i < text.length; i++) {
        if ((i & 0xfffff) === 0 && signal?.aborted) throw new Error("the search was stopped");
        while (k > 0 && text.charCodeAt(i) !== needle.charCodeAt(k)) k = fail[k - 1]!;
        if (text.charCodeAt(i) === needle.charCodeAt(k)) k++;
        if (k === needle.length) return i - needle.length + 1;
      }
      return -1;
    },
  };
}
