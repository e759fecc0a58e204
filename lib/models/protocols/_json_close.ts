/**
 * Whether streamed text has become one whole JSON object or array, told
 * chunk by chunk: each character is looked at once, so asking after every
 * chunk costs nothing more (re-parsing the text each time would be
 * quadratic in a hostile stream). It follows only strings and brackets;
 * the text it calls `closed` still needs one `JSON.parse` to be known valid
 * — once, since only whitespace may follow without making it `other`.
 *
 * @module
 */

/**
 * `empty`: only whitespace so far; `open`: inside the top-level object or
 * array; `closed`: that value closed, followed by whitespace at most;
 * `other`: not an object or array, or something follows it.
 */
export type JsonCloseState = "empty" | "open" | "closed" | "other";

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x7b, 0x5b]);
const CLOSERS = new Set([0x7d, 0x5d]);

/** A scanner of one streamed JSON value. */
export interface JsonCloseScanner {
  /** Where the text pushed so far stands. */
  readonly state: JsonCloseState;
  /** Look at the next chunk of the text. */
  push(chunk: string): void;
}

/** A scanner with nothing pushed yet. */
export function createJsonCloseScanner(): JsonCloseScanner {
  let state: JsonCloseState = "empty";
  let depth = 0;
  let inString = false;
  let escape = false;

  function step(c: number): void {
    if (state === "empty" || state === "closed") {
      if (SPACE.has(c)) return;
      if (state === "empty" && OPENERS.has(c)) {
        state = "open";
        depth = 1;
      } else state = "other";
      return;
    }
    if (inString) {
      if (escape) escape = false;
      else if (c === BACKSLASH) escape = true;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (OPENERS.has(c)) depth++;
    else if (CLOSERS.has(c) && --depth === 0) state = "closed";
  }

  return {
    get state() {
      return state;
    },
    push(chunk) {
      for (let i = 0; i < chunk.length && state !== "other"; i++) step(chunk.charCodeAt(i));
    },
  };
}
