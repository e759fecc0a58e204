/**
 * The decoded view of text that holds string escapes, for secret masking
 * (lib/tools/secret_mask.ts). JSON encoders spell the same character in many
 * ways (`&` as `\u0026` in Go, `\u0026` with upper-case hex in .NET, `ä` as
 * `\u00e4` in Python, `/` as `\/` in PHP, any character as `\uXXXX`), so a
 * secret is looked for in the text as it decodes, not in each spelling.
 *
 * Decoded are the JSON and JavaScript string escapes: `\"` `\\` `\/` `\'`
 * `\b` `\f` `\n` `\r` `\t`, `\uXXXX` (either hex case; a surrogate pair's two
 * escapes decode to its two code units, so to the code point), `\u{X…}` and
 * `\xHH`. Anything else after a backslash is kept as it is. Each view code
 * unit knows the span of the text it comes from (a whole escape, never part
 * of one), so a match in the view masks whole escapes of the text.
 *
 * @module
 */

/** What a one-character escape stands for. */
const SIMPLE: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  "'": "'",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/** A decoded view of a text. */
export interface EscapeView {
  /** The text with its escapes decoded. */
  view: string;
  /**
   * Where each view code unit's span starts in the text, and at index
   * `view.length` the text's length: unit `k` comes from
   * `text.slice(start[k], start[k + 1])`, except that the two units of a
   * `\u{…}` escape beyond U+FFFF both start where it does (see
   * {@linkcode spanEnd}).
   */
  start: Int32Array;
  /**
   * Where an escape begins that the end of the text cut short (`\`, `\u00`),
   * when not final; the text's length otherwise. Text from there may still
   * decode differently once more of it comes.
   */
  tail: number;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/** The value of the `count` hex digits of `text` from `at`; -1 when one is not a hex digit. */
function hexAt(text: string, at: number, count: number): number {
  let v = 0;
  for (let i = 0; i < count; i++) {
    const d = hexValue(text.charCodeAt(at + i));
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/**
 * The escape at `i` (a backslash) of `text`: what it decodes to and its
 * length; `null` when it is not an escape; `"short"` when the text ends
 * before it could be told.
 */
function escapeAt(text: string, i: number): { ch: string; length: number } | null | "short" {
  const n = text.length;
  if (i + 1 >= n) return "short";
  const next = text[i + 1]!;
  const simple = SIMPLE[next];
  if (simple !== undefined) return { ch: simple, length: 2 };
  if (next === "x") {
    if (i + 4 > n) return hexAt(text, i + 2, n - i - 2) < 0 ? null : "short";
    const v = hexAt(text, i + 2, 2);
    return v < 0 ? null : { ch: String.fromCharCode(v), length: 4 };
  }
  if (next !== "u") return null;
  if (text[i + 2] === "{") {
    const close = text.indexOf("}", i + 3);
    const digits = close < 0 ? n - i - 3 : close - i - 3;
    if (digits > 6 || (digits > 0 && hexAt(text, i + 3, digits) < 0)) return null;
    if (close < 0) return "short";
    const v = digits === 0 ? -1 : hexAt(text, i + 3, digits);
    if (v < 0 || v > 0x10ffff) return null;
    return { ch: String.fromCodePoint(v), length: close - i + 1 };
  }
  if (i + 6 > n) return hexAt(text, i + 2, n - i - 2) < 0 ? null : "short";
  const v = hexAt(text, i + 2, 4);
  return v < 0 ? null : { ch: String.fromCharCode(v), length: 6 };
}

/**
 * The decoded view of `text`, or `null` when it decodes to itself and no
 * escape is cut short at its end. Not final: an escape the end of the text
 * cuts short is kept as it is and its start is given as `tail`.
 */
export function escapeView(text: string, final: boolean): EscapeView | null {
  let i = text.indexOf("\\");
  if (i < 0) return null;
  const n = text.length;
  const parts: string[] = [];
  /** The start of each view unit, grown as needed. */
  let start = new Int32Array(n + 1);
  let v = 0;
  let from = 0;
  let tail = n;
  let changed = false;
  const literal = (upTo: number) => {
    if (upTo <= from) return;
    parts.push(text.slice(from, upTo));
    for (let k = from; k < upTo; k++) start[v++] = k;
  };
  while (i >= 0) {
    const esc = escapeAt(text, i);
    if (esc === "short" && !final) {
      tail = i;
      break;
    }
    if (esc === null || esc === "short") {
      i = text.indexOf("\\", i + 1);
      continue;
    }
    changed = true;
    literal(i);
    parts.push(esc.ch);
    // `\u{1F600}` decodes to two code units from the one escape.
    for (let k = 0; k < esc.ch.length; k++) {
      if (v + 1 >= start.length) {
        const grown = new Int32Array(start.length * 2);
        grown.set(start);
        start = grown;
      }
      start[v++] = i;
    }
    from = i + esc.length;
    i = text.indexOf("\\", from);
  }
  if (!changed && tail === n) return null;
  literal(n);
  start[v] = n;
  return { view: parts.join(""), start: start.subarray(0, v + 1), tail };
}

/** Where in the text the span of view unit `k` ends (a whole escape). */
export function spanEnd(ev: EscapeView, k: number): number {
  const s = ev.start;
  return s[k + 1]! > s[k]! ? s[k + 1]! : s[k + 2]!;
}

/** The view unit whose span holds text position `p` (the last of two that start there). */
function unitAt(ev: EscapeView, p: number): number {
  const s = ev.start;
  let lo = 0;
  let hi = s.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (s[mid]! <= p) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Where the escape holding text position `p` starts (`p` itself when none holds it). */
export function spanStartAt(ev: EscapeView, p: number): number {
  if (p >= ev.start[ev.start.length - 1]!) return p;
  return ev.start[unitAt(ev, p)]!;
}

/** Where the escape holding text position `end - 1` ends (`end` itself when none holds it). */
export function spanEndAt(ev: EscapeView, end: number): number {
  if (end <= 0) return end;
  return Math.max(end, spanEnd(ev, unitAt(ev, end - 1)));
}
