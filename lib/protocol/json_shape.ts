/**
 * What a JSON text would cost to parse, judged before `JSON.parse`: the
 * number of objects and arrays it holds and how deep they nest. A text
 * under every byte limit can still parse into millions of small values
 * (`{},` is 3 bytes and one object of ~100 bytes), or nest so deep that
 * walking it overflows the stack; the bytes do not tell, the brackets do.
 *
 * One pass over the characters, following strings (and their escapes) so
 * that brackets inside them are not counted. It does not check that the
 * text is valid JSON: `JSON.parse` still does that.
 *
 * @module
 */

/** The bounds a JSON text is held to. */
export interface JsonShapeLimits {
  /** Objects and arrays the text may hold in all. */
  maxContainers: number;
  /** How deep objects and arrays may nest (a top-level object is depth 1). */
  maxDepth: number;
}

/**
 * Default bounds: 100 000 objects and arrays, nested at most 256 deep. No
 * real model event, response body or tool call's arguments comes near.
 */
export const JSON_SHAPE_LIMITS: Readonly<JsonShapeLimits> = Object.freeze({
  maxContainers: 100_000,
  maxDepth: 256,
});

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** Index just past the string whose opening quote is at `open`; `text.length` when it never closes. */
function stringEnd(text: string, open: number): number {
  let at = open + 1;
  for (;;) {
    const q = text.indexOf('"', at);
    if (q < 0) return text.length;
    let slashes = 0;
    for (let i = q - 1; i > open && text.charCodeAt(i) === BACKSLASH; i--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    at = q + 1;
  }
}

/**
 * Why `text` is too costly to parse — `more than N JSON objects and arrays`
 * or `JSON objects and arrays nested more than N deep` — or `undefined`
 * when it is within `limits`. Stops at the first bound passed.
 */
export function jsonShapeProblem(
  text: string,
  limits: JsonShapeLimits = JSON_SHAPE_LIMITS,
): string | undefined {
  let containers = 0;
  let depth = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++containers > limits.maxContainers) {
        return `more than ${limits.maxContainers} JSON objects and arrays`;
      }
      if (++depth > limits.maxDepth) {
        return `JSON objects and arrays nested more than ${limits.maxDepth} deep`;
      }
    } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && depth > 0) depth--;
    i++;
  }
  return undefined;
}
