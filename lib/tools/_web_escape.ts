/**
 * URL percent-encoding and HTML/XML character references, for secret masking
 * (lib/tools/secret_mask.ts): `encodeURIComponent`, `urllib.parse.quote`, `jq @uri`, JavaScript's
 * `escape()` and `html.escape`, `xmlstarlet esc` or any templating engine spell a character so.
 * The tokens, each with its exact grammar:
 *
 * - `%` and exactly two hex digits, either case (`%51`, `%5c`): the byte of that value;
 * - `%u` and exactly four hex digits (`%u0051`, JavaScript's `escape()`): that code unit;
 * - `&#` and decimal digits, `&#x` or `&#X` and hex digits, then `;` or not (`&#81;`, `&#x51`):
 *   the character of the whole run's value (leading zeros and all, as HTML reads it);
 * - `&`, a name of {@linkcode ENTITY_NAMES} in any case, then `;` or not (`&amp;`, `&num;`, `&lt`):
 *   its ASCII character.
 *
 * A character reference whose run has more than {@linkcode MOST_NUMERIC_DIGITS} digits reads too
 * many ways to follow and is masked whole (as a numeric escape is: lib/tools/_escape_lattice.ts).
 * The lattice reads each token as well as the plain characters it is made of; the `web` view reads
 * every token of a text at once, for the next level (a URL-encoded JSON string).
 *
 * @module
 */

import type { EscapeView } from "./_escape_view.ts";
import { MOST_NUMERIC_DIGITS } from "./_numeric_escape.ts";

/**
 * The HTML5 named character references of the printable ASCII punctuation (and tab, newline),
 * by lower-case name.
 */
export const ENTITY_NAMES: ReadonlyMap<string, number> = new Map(
  Object.entries({
    tab: 0x09,
    newline: 0x0a,
    excl: 0x21,
    quot: 0x22,
    num: 0x23,
    dollar: 0x24,
    percnt: 0x25,
    amp: 0x26,
    apos: 0x27,
    lpar: 0x28,
    rpar: 0x29,
    ast: 0x2a,
    midast: 0x2a,
    plus: 0x2b,
    comma: 0x2c,
    period: 0x2e,
    sol: 0x2f,
    colon: 0x3a,
    semi: 0x3b,
    lt: 0x3c,
    equals: 0x3d,
    gt: 0x3e,
    quest: 0x3f,
    commat: 0x40,
    lsqb: 0x5b,
    lbrack: 0x5b,
    bsol: 0x5c,
    rsqb: 0x5d,
    rbrack: 0x5d,
    hat: 0x5e,
    lowbar: 0x5f,
    underbar: 0x5f,
    grave: 0x60,
    diacriticalgrave: 0x60,
    lcub: 0x7b,
    lbrace: 0x7b,
    verbar: 0x7c,
    vert: 0x7c,
    verticalline: 0x7c,
    rcub: 0x7d,
    rbrace: 0x7d,
  }),
);

const LONGEST_NAME = Math.max(...[...ENTITY_NAMES.keys()].map((n) => n.length));

/** Every leading part of a name (lower case): a text that ends in one may still spell a name. */
const NAME_PREFIXES: ReadonlySet<string> = new Set(
  [...ENTITY_NAMES.keys()].flatMap((n) =>
    Array.from({ length: n.length }, (_, k) => n.slice(0, k + 1))
  ),
);

/** A token: its length in the text and the code point it stands for; `long` when masked whole. */
export interface WebEscape {
  length: number;
  point: number;
  long: boolean;
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/** Whether `text` may hold a token (a `%` or a `&`): a cheap test before reading it. */
export function mayHoldWebEscape(text: string): boolean {
  return text.indexOf("%") >= 0 || text.indexOf("&") >= 0;
}

/** The `%HH` or `%uHHHH` at `i`; "cut" when the end of a text not final may still complete it. */
function percentAt(text: string, i: number, final: boolean): WebEscape | "cut" | null {
  const u = text.charCodeAt(i + 1) === 0x75 || text.charCodeAt(i + 1) === 0x55;
  const from = u ? i + 2 : i + 1;
  const want = u ? 4 : 2;
  let v = 0;
  for (let k = 0; k < want; k++) {
    if (from + k >= text.length) return final ? null : "cut";
    const d = hexDigit(text.charCodeAt(from + k));
    if (d < 0) return null;
    v = v * 16 + d;
  }
  return { length: from + want - i, point: v, long: false };
}

/** The `&#…;` at `i` (a `&` before `#`). */
function numericReferenceAt(text: string, i: number, final: boolean): WebEscape | "cut" | null {
  const n = text.length;
  const x = text.charCodeAt(i + 2);
  const hex = x === 0x78 || x === 0x58;
  const from = hex ? i + 3 : i + 2;
  if (from >= n) return final ? null : "cut";
  let j = from;
  let v = 0;
  while (j < n && j - from <= MOST_NUMERIC_DIGITS) {
    const d = hexDigit(text.charCodeAt(j));
    if (d < 0 || (!hex && d > 9)) break;
    v = v > 0x10ffff ? v : v * (hex ? 16 : 10) + d;
    j++;
  }
  if (j - from > MOST_NUMERIC_DIGITS) return { length: j - i, point: -1, long: true };
  if (j === n && !final) return "cut";
  if (j === from) return null;
  const semi = text.charCodeAt(j) === 0x3b ? 1 : 0;
  return { length: j + semi - i, point: v > 0x10ffff || v === 0 ? -1 : v, long: false };
}

/** The `&name;` at `i`: the longest name of the letters there, then `;` or not. */
function namedReferenceAt(text: string, i: number, final: boolean): WebEscape | "cut" | null {
  const n = text.length;
  let j = i + 1;
  while (j < n && j - i - 1 <= LONGEST_NAME) {
    const c = text.charCodeAt(j) | 0x20;
    if (c < 0x61 || c > 0x7a) break;
    j++;
  }
  const letters = text.slice(i + 1, j).toLowerCase();
  // The letters run to the end: a longer name, or its `;`, may still come.
  if (j === n && !final && (NAME_PREFIXES.has(letters) || letters === "")) return "cut";
  const whole = ENTITY_NAMES.get(letters);
  if (whole !== undefined && text.charCodeAt(j) === 0x3b) {
    return { length: j - i + 1, point: whole, long: false };
  }
  for (let k = Math.min(letters.length, LONGEST_NAME); k > 0; k--) {
    const point = ENTITY_NAMES.get(letters.slice(0, k));
    if (point !== undefined) return { length: k + 1, point, long: false };
  }
  return null;
}

/**
 * The token at `i` of `text` (a `%` or a `&`): null when there is none, "cut" when the end of a
 * text not final may still complete one.
 */
export function webEscapeAt(text: string, i: number, final: boolean): WebEscape | "cut" | null {
  const c = text.charCodeAt(i);
  if (c === 0x25) return percentAt(text, i, final);
  if (c !== 0x26) return null;
  if (i + 1 >= text.length) return final ? null : "cut";
  if (text.charCodeAt(i + 1) === 0x23) return numericReferenceAt(text, i, final);
  return namedReferenceAt(text, i, final);
}

/**
 * The `web` view of `text`: every token decoded (a long one or one of no character kept as it
 * is), or null when there is none and none is cut short at its end. Not final, a token the end
 * cuts short is kept as it is and its start given as `tail`.
 */
export function webView(text: string, final: boolean): EscapeView | null {
  const n = text.length;
  const units = new Uint16Array(n);
  const start = new Int32Array(n + 1);
  let v = 0;
  let tail = n;
  let changed = false;
  for (let i = 0; i < n;) {
    const c = text.charCodeAt(i);
    const tok = c === 0x25 || c === 0x26 ? webEscapeAt(text, i, final) : null;
    if (tok === "cut") {
      tail = i;
      break;
    }
    if (tok !== null && !tok.long && tok.point >= 0) {
      changed = true;
      const p = tok.point;
      if (p > 0xffff) {
        units[v] = 0xd800 + ((p - 0x10000) >> 10);
        start[v++] = i;
        units[v] = 0xdc00 + ((p - 0x10000) & 0x3ff);
      } else units[v] = p;
      start[v++] = i;
      i += tok.length;
      continue;
    }
    units[v] = c;
    start[v++] = i++;
  }
  if (!changed && tail === n) return null;
  for (let k = tail; k < n; k++) {
    units[v] = text.charCodeAt(k);
    start[v++] = k;
  }
  start[v] = n;
  const parts: string[] = [];
  for (let k = 0; k < v; k += 4096) {
    parts.push(String.fromCharCode(...units.subarray(k, Math.min(v, k + 4096))));
  }
  return {
    view: parts.join(""),
    start: start.subarray(0, v + 1),
    tail,
    ambiguous: false,
    printfDiffers: false,
    wrapDiffers: false,
  };
}
