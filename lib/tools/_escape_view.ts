/**
 * The decoded view of text that holds string escapes, for secret masking
 * (lib/tools/secret_mask.ts). JSON encoders spell the same character in many
 * ways (`&` as `\u0026` in Go, `\u0026` with upper-case hex in .NET, `ä` as
 * `\u00e4` in Python, `/` as `\/` in PHP, any character as `\uXXXX`), so a
 * secret is looked for in the text as it decodes, not in each spelling.
 *
 * Escapes are read three ways, as a reader of the output may:
 *
 * - as JavaScript reads a string literal (ECMA-262 EscapeSequence, with the
 *   legacy forms): `\"` `\\` `\/` `\'` `\b` `\f` `\n` `\r` `\t` `\v`,
 *   `\uXXXX` (either hex case; a surrogate pair's two escapes decode to its
 *   two code units, so to the code point), `\u{X…}`, `\xHH`, `\0` and the
 *   legacy octal escapes (`\7`, `\033`, `\101`, greedy up to `\377`), line
 *   continuations (`\` before LF, CR, CR LF, U+2028 or U+2029: nothing), and
 *   any other character after a backslash as itself (`\q` is `q`, `\8` is
 *   `8`); a malformed `\x` or `\u` is kept as it is;
 * - as C, shell `$'…'`, printf and Python read it: the same but `\a` (BEL),
 *   `\e` `\E` (ESC), `\cX` (control-X), `\?`, octal of 1 to 3 digits,
 *   `\xH`, `\u` with 1 to 4 hex digits and `\U` with 1 to 8, a C compiler's `\x0…`
 *   with every hex digit, Python's `\N{NAME}` for the printable ASCII
 *   characters (lib/tools/_ascii_char_names.ts); an unknown escape or name is
 *   kept as it is (`\q` stays `\q`), `\` before U+2028 too;
 * - as printf `%b` and `echo -e` read it: the C reading but for `\0NNN`, `\0`
 *   and up to three octal digits more (`\0121` is `Q`, where C, Python, bash
 *   `$'…'` and printf's format string read `\012` then `1`). It differs from
 *   the C reading only where `\0` has three octal digits after it
 *   ({@linkcode EscapeView.printfDiffers}), so it is read only there.
 *
 * All read `\u{…}` with any number of leading zeros (at most U+10FFFF). The
 * reading of `\x0HH…` that C differs on is JavaScript's too (`\x0a` then
 * `1`), so the C reading loses none of them.
 * Cut short by the end of a text not final, such an escape is held only
 * while its digits are few (bounded work and a bounded held tail).
 *
 * Each view code unit knows the span of the text it comes from (a whole
 * escape, never part of one; a line continuation belongs to the unit after
 * it), so a match in the view masks whole escapes of the text. Each reading
 * is one pass over the text.
 *
 * @module
 */

import { asciiByName, LONGEST_ASCII_NAME } from "./_ascii_char_names.ts";

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
  /**
   * Whether the text holds an escape that the other reading decodes
   * differently (`\q`, `\a`, `\e`, `\cX`, `\U…`, `\xH`, `\477`, `\` before
   * U+2028): then the other reading's view is worth a look too.
   */
  ambiguous: boolean;
  /**
   * Read as C or printf: whether the text holds `\0` and three octal digits more (`\0121`), or
   * that cut short by the end of a text not final, which the C and printf readings read apart.
   */
  printfDiffers: boolean;
  /**
   * Whether the text holds an escape that reads otherwise the wrapping way (octal past `\377`,
   * `\x` with three hex digits or more, `\d…`, `\o…`, `\x{…}`, `\N{U+…}`).
   */
  wrapDiffers: boolean;
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

/** What {@linkcode readEscape} read: the escape's length and its zero, one or two code units. */
let escLength = 0;
let escUnits = 0;
let escHigh = 0;
let escLow = 0;
/** Whether the last escape read is one the other reading spells differently. */
let escAmbiguous = false;
/** Whether the last escape read is a `\0NN` that printf `%b` reads further than C does. */
let escPrintf = false;
/** Whether the text being read is final: an escape its end cuts short is read as it is. */
let textFinal = false;
/** Whether the text is being read as printf `%b` reads it (see {@linkcode readOctal}). */
let readingPrintf = false;
/** Whether the text is being read the wrapping way (see {@linkcode EscapeReading}). */
let readingWrap = false;

/**
 * Digits (zeros and all) of a `\u{…}` or C `\x0…` escape that the end of a text not final may cut
 * short and still be held for more: past them, the escape is read as it is (see the module doc).
 */
const MOST_HELD_DIGITS = 16;

/** How escapes are read: see the module comment (`wrap`: the C reading, numbers kept to a byte). */
export type EscapeReading = "js" | "c" | "printf" | "wrap";

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
    case 0x76: // v
      return 0x0b;
    default:
      return -1;
  }
}

/** The code unit a C-reading-only escape (`\a`, `\e`, `\?`) stands for; -1 when it is none. */
function cEscape(c: number): number {
  switch (c) {
    case 0x61: // a
      return 0x07;
    case 0x65: // e
    case 0x45: // E
      return 0x1b;
    case 0x3f: // ?
      return 0x3f;
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

/** A line continuation of `length` code units: it reads as nothing. */
function setNothing(length: number): number {
  escLength = length;
  escUnits = 0;
  return 1;
}

const isOctal = (c: number) => c >= 0x30 && c <= 0x37;

/**
 * The line continuation at `i` (a backslash before a line terminator): 1 when
 * it is one, 0 when it is not, -1 when the text ends before it could be told.
 */
function readContinuation(text: string, i: number, js: boolean): number {
  const next = text.charCodeAt(i + 1);
  if (next === 0x0a) return setNothing(2);
  if (next === 0x0d) {
    if (i + 2 >= text.length) return -1;
    return setNothing(text.charCodeAt(i + 2) === 0x0a ? 3 : 2);
  }
  if (next === 0x2028 || next === 0x2029) {
    escAmbiguous = true;
    return js ? setNothing(2) : 0;
  }
  return 0;
}

/**
 * The octal escape at `i` (a backslash before an octal digit): JavaScript's
 * legacy octal escapes (`\0`…`\377`, greedy, `\4`…`\7` taking one more digit
 * at most) or, read as C, up to three digits (`\777`), or read as printf `%b`, up to four
 * after `\0`.
 */
function readOctal(text: string, i: number, js: boolean): number {
  const n = text.length;
  const first = text.charCodeAt(i + 1);
  // printf `%b` and `echo -e` read `\0` and up to three digits more (`\0121` is `Q`).
  const most = js ? (first > 0x33 ? 2 : 3) : first === 0x30 && readingPrintf ? 4 : 3;
  let j = i + 1;
  let v = 0;
  while (j < n && j - i - 1 < most && isOctal(text.charCodeAt(j))) {
    v = v * 8 + text.charCodeAt(j) - 0x30;
    j++;
  }
  const digits = j - i - 1;
  // JavaScript (and C) read `\012` of `\0121` (the rest is `1`), printf `%b` all four digits.
  if (first === 0x30 && digits === 3 && (j === n || isOctal(text.charCodeAt(j)))) {
    escAmbiguous = js;
    escPrintf = true;
  }
  if (first === 0x30 && digits === 4) escPrintf = true;
  if (j === n && digits < most && !textFinal) return -1;
  if (most === 2 && digits === 2 && isOctal(text.charCodeAt(j))) escAmbiguous = true;
  // bash, printf (`%b` too), awk and C compilers keep the low 8 bits of `\521` (`Q`).
  return setPoint(readingWrap || readingPrintf ? v & 0xff : v, j - i);
}

/**
 * `\xHH` (read as C, `\xH` too, and every hex digit after `\x0`, as a C compiler reads them:
 * `\x0051` is `Q`), -1 when the text ends before it could be told.
 */
function readHexByte(text: string, i: number, js: boolean): number {
  const n = text.length;
  if (readingWrap) return readWrappedRun(text, i, i + 2, 16);
  if (i + 4 > n) return hexAt(text, i + 2, n - i - 2) < 0 ? 0 : -1;
  const v = hexAt(text, i + 2, 2);
  if (v >= 0 && text.charCodeAt(i + 2) === 0x30 && (i + 4 === n || hexAt(text, i + 4, 1) >= 0)) {
    // printf, shell, Python and JavaScript read two digits, a C compiler all of them.
    escAmbiguous = true;
    if (!js) return readHexDigits(text, i, i + 2, 0);
  }
  if (v >= 0) return setPoint(v, 4);
  const one = hexAt(text, i + 2, 1);
  if (one >= 0) escAmbiguous = true;
  return one < 0 || js ? 0 : setPoint(one, 3);
}

/**
 * The hex digits of the escape at `i` from `from`, all of them while their value is at most
 * U+10FFFF (leading zeros as many as there are), then `close` (0 for none): C's `\x0…` and
 * JavaScript's `\u{…}`. Cut short by the end of a text not final, held only while the digits
 * are few (see {@linkcode MOST_HELD_DIGITS}).
 */
function readHexDigits(text: string, i: number, from: number, close: number): number {
  const n = text.length;
  let j = from;
  while (j < n && text.charCodeAt(j) === 0x30) j++;
  const lead = j;
  while (j < n && j - lead <= 6 && hexValue(text.charCodeAt(j)) >= 0) j++;
  const significant = j - lead;
  const v = significant > 6 ? -1 : hexAt(text, lead, significant);
  if (j === n && v >= 0 && v <= 0x10ffff && !textFinal) {
    return j - from <= MOST_HELD_DIGITS ? -1 : 0;
  }
  if (close !== 0 && (j === n || text.charCodeAt(j) !== close)) return 0;
  if (j === from || v < 0 || v > 0x10ffff) return 0;
  return setPoint(v, j - i + (close !== 0 ? 1 : 0));
}

/** `\u{X…}`: hex digits, as many leading zeros as there are, at most U+10FFFF. */
function readBraced(text: string, i: number): number {
  return readHexDigits(text, i, i + 3, 0x7d);
}

/**
 * Python's `\N{NAME}` (read as C): the ASCII character a Unicode name names, either case (see
 * lib/tools/_ascii_char_names.ts); a name not known there is kept as it is.
 */
function readNamed(text: string, i: number): number {
  const n = text.length;
  if (i + 2 >= n) return textFinal ? 0 : -1;
  if (text.charCodeAt(i + 2) !== 0x7b) return 0;
  let j = i + 3;
  while (j < n && j - i - 3 <= LONGEST_ASCII_NAME && isNameChar(text.charCodeAt(j))) j++;
  if (j - i - 3 > LONGEST_ASCII_NAME) return 0;
  if (j === n) return textFinal ? 0 : -1;
  if (text.charCodeAt(j) !== 0x7d) return 0;
  const c = asciiByName(text.slice(i + 3, j));
  return c < 0 ? 0 : setPoint(c, j - i + 1);
}

/** Whether `c` may be in a Unicode character name: an ASCII letter or digit, space or hyphen. */
function isNameChar(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) ||
    c === 0x20 || c === 0x2d;
}

/**
 * `\uXXXX`, or read as C, `\u` with 1 to 4 hex digits and `\U` with 1 to 8
 * (at most U+10FFFF).
 */
function readHexPoint(text: string, i: number, most: number, js: boolean): number {
  const n = text.length;
  let j = i + 2;
  while (j < n && j - i - 2 < most && hexValue(text.charCodeAt(j)) >= 0) j++;
  const digits = j - i - 2;
  if (j === n && digits < most) return -1;
  if (digits === most && most === 4) return setPoint(hexAt(text, i + 2, 4), 6);
  if (digits > 0) escAmbiguous = true;
  if (js || digits === 0) return 0;
  const v = hexAt(text, i + 2, digits);
  return v > 0x10ffff ? 0 : setPoint(v, j - i);
}

/**
 * The escape at `i` (a backslash) of `text`: 1 when it is one (what it
 * decodes to is left in `esc…`), 0 when it is not, -1 when the text ends
 * before it could be told.
 */
function readEscape(text: string, i: number, js: boolean): number {
  escAmbiguous = false;
  escPrintf = false;
  if (i + 1 >= text.length) return -1;
  const next = text.charCodeAt(i + 1);
  const simple = simpleEscape(next);
  if (simple >= 0) return setPoint(simple, 2);
  if (isOctal(next)) return readOctal(text, i, js);
  if (next === 0x78) return readHexByte(text, i, js); // x
  if (next === 0x75) { // u
    if (i + 2 >= text.length) return -1;
    return text.charCodeAt(i + 2) === 0x7b ? readBraced(text, i) : readHexPoint(text, i, 4, js);
  }
  const line = readContinuation(text, i, js);
  if (line !== 0) return line;
  // What is left is JavaScript's identity escape (`\q` is `q`); read as C, a few more letters
  // decode (`\a`, `\e`, `\cX`, `\U…`) and the rest is kept as it is.
  if (next === 0x2028 || next === 0x2029) return 0;
  escAmbiguous = true;
  if (js) return setPoint(next, 2);
  if (next === 0x55) return readHexPoint(text, i, 8, js); // U
  if (readingWrap && next === 0x4e && text.startsWith("{U+", i + 2)) {
    return readBracedRun(text, i, i + 5, 16);
  }
  if (next === 0x4e) return readNamed(text, i); // N
  if (readingWrap && next === 0x64) return readWrappedRun(text, i, i + 2, 10, 3); // d
  if (readingWrap && next === 0x6f) return readWrappedRun(text, i, i + 2, 8, 3); // o
  if (next === 0x63) { // c
    if (i + 2 >= text.length) return -1;
    const x = text.charCodeAt(i + 2);
    return x < 0x80 ? setPoint(x === 0x3f ? 0x7f : x & 0x1f, 3) : 0;
  }
  const c = cEscape(next);
  return c < 0 ? 0 : setPoint(c, 2);
}

/** The value of digit `c` in `base`; -1 when it is not one. */
function digitIn(c: number, base: number): number {
  const d = hexValue(c);
  return d < base ? d : -1;
}

/**
 * Read the wrapping way: the digits of `base` from `from` (at most `most`; `{…}` read by
 * {@linkcode readBracedRun}), as their value's low 8 bits: a C compiler's `\x0151` and `\x151`,
 * GNU sed's `\d081` and `\o121`. Cut short by the end of a text not final, held only while the
 * digits are few.
 */
function readWrappedRun(
  text: string,
  i: number,
  from: number,
  base: number,
  most = Infinity,
): number {
  const n = text.length;
  if (from < n && text.charCodeAt(from) === 0x7b) return readBracedRun(text, i, from + 1, base);
  let j = from;
  let v = 0;
  while (j < n && j - from < most && digitIn(text.charCodeAt(j), base) >= 0) {
    v = (v * base + digitIn(text.charCodeAt(j), base)) & 0xff;
    j++;
  }
  if (j === n && j - from < most && !textFinal) return j - from <= MOST_HELD_DIGITS ? -1 : 0;
  return j === from ? 0 : setPoint(v, j - i);
}

/** Perl's `\x{…}`, `\o{…}` and `\N{U+…}`: the digits of `base` from `from`, then `}`. */
function readBracedRun(text: string, i: number, from: number, base: number): number {
  const n = text.length;
  let j = from;
  let v = 0;
  while (j < n && j - from <= MOST_HELD_DIGITS && digitIn(text.charCodeAt(j), base) >= 0) {
    v = v * base + digitIn(text.charCodeAt(j), base);
    j++;
  }
  if (j === n && !textFinal && j - from <= MOST_HELD_DIGITS) return -1;
  if (j === from || j === n || text.charCodeAt(j) !== 0x7d || v > 0x10ffff) return 0;
  return setPoint(v, j - i + 1);
}

/**
 * Whether the escape at `i` (a backslash) reads otherwise the wrapping way: octal past `\377`,
 * `\x` with three hex digits or more or a `{`, `\d` before a digit, `\o`, `\N{U+`.
 */
function wrapDiffersAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i + 1);
  if (c >= 0x34 && c <= 0x37) {
    return isOctal(text.charCodeAt(i + 2)) && isOctal(text.charCodeAt(i + 3));
  }
  if (c === 0x78) return text.charCodeAt(i + 2) === 0x7b || hexAt(text, i + 2, 3) >= 0;
  if (c === 0x64) return digitIn(text.charCodeAt(i + 2), 10) >= 0;
  if (c === 0x6f) return text.charCodeAt(i + 2) === 0x7b || isOctal(text.charCodeAt(i + 2));
  return c === 0x4e && text.startsWith("{U+", i + 2);
}

/**
 * The escape at `i` (a backslash) of `text` in one reading: its length and the code units it
 * stands for (none for a line continuation); null when that reading reads no escape there or the
 * end of a text not final cuts it short.
 */
export function escapeAt(
  text: string,
  i: number,
  reading: EscapeReading,
  final: boolean,
): { length: number; units: number[] } | null {
  textFinal = final;
  readingPrintf = reading === "printf";
  readingWrap = reading === "wrap";
  if (readEscape(text, i, reading === "js") !== 1) return null;
  const units = escUnits === 0 ? [] : escUnits === 1 ? [escHigh] : [escHigh, escLow];
  return { length: escLength, units };
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
 * The decoded view of `text` in one reading, or `null` when it decodes to
 * itself and no escape is cut short at its end. Not final: an escape the end
 * of the text cuts short is kept as it is and its start is given as `tail`.
 */
export function escapeView(
  text: string,
  final: boolean,
  reading: EscapeReading = "js",
): EscapeView | null {
  const first = text.indexOf("\\");
  if (first < 0) return null;
  const js = reading === "js";
  textFinal = final;
  readingPrintf = reading === "printf";
  readingWrap = reading === "wrap";
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
  let ambiguous = false;
  let printfDiffers = false;
  let wrapDiffers = false;
  // Where a line continuation read as nothing began: the next unit's span takes it in.
  let from = -1;
  while (i < n) {
    const c = text.charCodeAt(i);
    const got = c === 0x5c ? readEscape(text, i, js) : 0;
    if (c === 0x5c) {
      ambiguous ||= escAmbiguous;
      printfDiffers ||= escPrintf;
      if (!wrapDiffers && wrapDiffersAt(text, i)) {
        wrapDiffers = true;
        ambiguous = true;
      }
    }
    if (got === 1) {
      changed = true;
      const at = from < 0 ? i : from;
      from = escUnits === 0 ? at : -1;
      if (escUnits > 0) {
        units[v] = escHigh;
        start[v++] = at;
      }
      // `\u{1F600}` decodes to two code units from the one escape.
      if (escUnits === 2) {
        units[v] = escLow;
        start[v++] = at;
      }
      i += escLength;
      continue;
    }
    if (got === -1 && !final) {
      tail = i;
      break;
    }
    units[v] = c;
    start[v++] = from < 0 ? i : from;
    from = -1;
    i++;
  }
  if (!changed && tail === n) return null;
  for (let k = tail; k < n; k++) {
    units[v] = text.charCodeAt(k);
    start[v++] = from < 0 ? k : from;
    from = -1;
  }
  // Continuations at the very end: the last unit's span takes them in (the text's length ends it).
  start[v] = n;
  const view = unitsToString(units.subarray(0, v));
  return { view, start: start.subarray(0, v + 1), tail, ambiguous, printfDiffers, wrapDiffers };
}

/** Where in the text the span of view unit `k` ends (a whole escape). */
export function spanEnd(ev: EscapeView, k: number): number {
  const s = ev.start;
  return s[k + 1]! > s[k]! ? s[k + 1]! : s[k + 2]!;
}

/** The view unit whose span holds text position `p` (the last of two that start there). */
export function unitAt(ev: EscapeView, p: number): number {
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
  if (p >= ev.start[ev.start.length - 1]! || ev.view.length === 0) return p;
  return Math.min(p, ev.start[unitAt(ev, p)]!);
}

/** Where the escape holding text position `end - 1` ends (`end` itself when none holds it). */
export function spanEndAt(ev: EscapeView, end: number): number {
  if (end <= 0 || ev.view.length === 0) return end;
  return Math.max(end, spanEnd(ev, unitAt(ev, end - 1)));
}
