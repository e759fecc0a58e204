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

/** What {@linkcode readEscape} read: the escape's length and its one or two code units. */
let escLength = 0;
let escUnits = 0;
let escHigh = 0;
let escLow = 0;

/** The code unit a one-character escape (`\n`, `\"`) stands for; -1 when it is none. */
function simpleEscape(c: number): number {
  switch (c) {
    case 0x22: // "
    case 0x5c: // \
    case 0x2f: // /
    case 0x27: // '
      return c;
    case 0x62: // b
      return 0x08;
    case 0x66: // f
      return 0x0c;
    case 0x6e: // n
      return 0x0a;
    case 0x72: // r
      return 0x0d;
    case 0x74: // t
      return 0x09;
    default:
      return -1;
  }
}

/** One code point as the code units read. */
function setPoint(v: number, length: number): number {
  escLength = length;
  if (v > 0xffff) {
    escUnits = 2;
    escHigh = 0xd800 + ((v - 0x10000) >> 10);
    escLow = 0xdc00 + ((v - 0x10000) & 0x3ff);
  } else {
    escUnits = 1;
    escHigh = v;
  }
  return 1;
}

/**
 * The escape at `i` (a backslash) of `text`: 1 when it is one (what it
 * decodes to is left in `esc…`), 0 when it is not, -1 when the text ends
 * before it could be told.
 */
function readEscape(text: string, i: number): number {
  const n = text.length;
  if (i + 1 >= n) return -1;
  const next = text.charCodeAt(i + 1);
  const simple = simpleEscape(next);
  if (simple >= 0) return setPoint(simple, 2);
  if (next === 0x78) { // x
    if (i + 4 > n) return hexAt(text, i + 2, n - i - 2) < 0 ? 0 : -1;
    const v = hexAt(text, i + 2, 2);
    return v < 0 ? 0 : setPoint(v, 4);
  }
  if (next !== 0x75) return 0; // u
  if (text.charCodeAt(i + 2) === 0x7b) { // {
    let j = i + 3;
    while (j < n && j - i - 3 <= 6 && hexValue(text.charCodeAt(j)) >= 0) j++;
    if (j === n) return j - i - 3 <= 6 ? -1 : 0;
    const digits = j - i - 3;
    if (text.charCodeAt(j) !== 0x7d || digits === 0 || digits > 6) return 0;
    const v = hexAt(text, i + 3, digits);
    return v > 0x10ffff ? 0 : setPoint(v, j - i + 1);
  }
  if (i + 6 > n) return hexAt(text, i + 2, n - i - 2) < 0 ? 0 : -1;
  const v = hexAt(text, i + 2, 4);
  return v < 0 ? 0 : setPoint(v, 6);
}

/**
 * The code units of `units` as a string, lone surrogates kept (in pieces: a
 * call takes only so many arguments).
 */
function unitsToString(units: Uint16Array): string {
  const parts: string[] = [];
  for (let i = 0; i < units.length; i += 4096) {
    parts.push(String.fromCharCode.apply(null, units.subarray(i, i + 4096) as unknown as number[]));
  }
  return parts.join("");
}

/**
 * The decoded view of `text`, or `null` when it decodes to itself and no
 * escape is cut short at its end. Not final: an escape the end of the text
 * cuts short is kept as it is and its start is given as `tail`.
 */
export function escapeView(text: string, final: boolean): EscapeView | null {
  const first = text.indexOf("\\");
  if (first < 0) return null;
  const n = text.length;
  // A view is never longer than its text (`\u{10FFFF}`, the longest pair, takes 10).
  const units = new Uint16Array(n);
  const start = new Int32Array(n + 1);
  for (let k = 0; k < first; k++) {
    units[k] = text.charCodeAt(k);
    start[k] = k;
  }
  let v = first;
  let i = first;
  let tail = n;
  let changed = false;
  while (i < n) {
    const c = text.charCodeAt(i);
    const got = c === 0x5c ? readEscape(text, i) : 0;
    if (got === 1) {
      changed = true;
      units[v] = escHigh;
      start[v++] = i;
      // `\u{1F600}` decodes to two code units from the one escape.
      if (escUnits === 2) {
        units[v] = escLow;
        start[v++] = i;
      }
      i += escLength;
      continue;
    }
    if (got === -1 && !final) {
      tail = i;
      break;
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
  return { view: unitsToString(units.subarray(0, v)), start: start.subarray(0, v + 1), tail };
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
