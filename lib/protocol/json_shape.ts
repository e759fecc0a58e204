/**
 * What a JSON text would cost to parse, judged before `JSON.parse`: the
 * number of values it holds, how many of them are objects and arrays, and
 * how deep those nest. A text under every byte limit can still parse into
 * millions of small values (`{},` is 3 bytes and one object of ~100 bytes;
 * `"k1":0,` is one key and one number in an object that grows with each),
 * or nest so deep that walking it overflows the stack; the bytes do not
 * tell, the values do.
 *
 * One pass over the characters, following strings (and their escapes) so
 * that brackets and quotes inside them are not counted. Every value counts
 * once: each object, array, string (an object's keys included), number and
 * `true`/`false`/`null`. It does not check that the text is valid JSON:
 * `JSON.parse` still does that. On valid JSON the count is exact; invalid
 * text (which `JSON.parse` then refuses) may count otherwise.
 *
 * @module
 */

/** The bounds a JSON text is held to. */
export interface JsonShapeLimits {
  /** Objects and arrays the text may hold in all. */
  maxContainers: number;
  /** How deep objects and arrays may nest (a top-level object is depth 1). */
  maxDepth: number;
  /**
   * Values the text may hold in all: objects, arrays, strings (keys
   * included), numbers and literals. {@linkcode JSON_SHAPE_LIMITS}' when
   * left out.
   */
  maxValues?: number;
}

/**
 * Default bounds: 200 000 values, 100 000 of them objects and arrays,
 * nested at most 256 deep. No real model event, response body or tool
 * call's arguments comes near: an event holds tens of values, a body one
 * string per message and a few fields, and a call's arguments a handful of
 * named fields (file content is one string however long). Parsed, 200 000
 * values cost some tens of MB; the millions a 32 MiB text can hold cost
 * hundreds.
 */
export const JSON_SHAPE_LIMITS: Readonly<Required<JsonShapeLimits>> = Object.freeze({
  maxContainers: 100_000,
  maxDepth: 256,
  maxValues: 200_000,
});

/** What {@linkcode jsonShape} found in a text. */
export interface JsonShape {
  /** Values counted (up to the first bound passed). */
  values: number;
  /** Objects and arrays among them. */
  containers: number;
  /** Why the text is too costly to parse, or `undefined` when it is within the bounds. */
  problem: string | undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Whether `c` can start a number or a literal (`-`, a digit, or the first
 * letter of `true`, `false`, `null`).
 */
function startsScalar(c: number): boolean {
  return c === 0x2d || (c >= 0x30 && c <= 0x39) || c === 0x74 || c === 0x66 || c === 0x6e;
}

/**
 * Whether `c` can go on a number or a literal begun before it: digits,
 * letters, `.`, `+`, `-`. A run of them is one value.
 */
function continuesScalar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) ||
    c === 0x2e || c === 0x2b || c === 0x2d;
}

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
 * The values of `text` counted, and why it is too costly to parse — `more
 * than N JSON values`, `more than N JSON objects and arrays` or `JSON
 * objects and arrays nested more than N deep` — when it passes a bound of
 * `limits`. Stops at the first bound passed.
 */
export function jsonShape(text: string, limits: JsonShapeLimits = JSON_SHAPE_LIMITS): JsonShape {
  const maxValues = limits.maxValues ?? JSON_SHAPE_LIMITS.maxValues;
  let values = 0;
  let containers = 0;
  let depth = 0;
  const n = text.length;
  const found = (problem: string | undefined): JsonShape => ({ values, containers, problem });
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    const container = c === OPEN_BRACE || c === OPEN_BRACKET;
    if (container || c === QUOTE || startsScalar(c)) {
      if (++values > maxValues) return found(`more than ${maxValues} JSON values`);
    }
    if (c === QUOTE) {
      i = stringEnd(text, i);
      continue;
    }
    if (container) {
      if (++containers > limits.maxContainers) {
        return found(`more than ${limits.maxContainers} JSON objects and arrays`);
      }
      if (++depth > limits.maxDepth) {
        return found(`JSON objects and arrays nested more than ${limits.maxDepth} deep`);
      }
    } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && depth > 0) depth--;
    else if (startsScalar(c)) {
      i++;
      while (i < n && continuesScalar(text.charCodeAt(i))) i++;
      continue;
    }
    i++;
  }
  return found(undefined);
}

/**
 * Why `text` is too costly to parse — `more than N JSON values`, `more
 * than N JSON objects and arrays` or `JSON objects and arrays nested more
 * than N deep` — or `undefined` when it is within `limits`. Stops at the
 * first bound passed.
 */
export function jsonShapeProblem(
  text: string,
  limits: JsonShapeLimits = JSON_SHAPE_LIMITS,
): string | undefined {
  return jsonShape(text, limits).problem;
}
