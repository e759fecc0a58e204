/**
 * The reader-independent rule for numeric escapes, for secret masking (lib/tools/secret_mask.ts).
 * Readers disagree on how far a numeric escape goes and on what a value past a byte means: bash
 * `$'…'`, printf, `echo -e`, awk and C compilers keep the low 8 bits of `\521` (`Q`), Python keeps
 * U+0151; a C compiler reads every hex digit after `\x`, printf two; Perl reads `\N{U+51}` and
 * `\o{121}`, GNU sed `\d081` and `\o121`. Rather than one more reading per reader, a numeric escape
 * is read every way any reader could:
 *
 * - a numeric escape is a backslash, then a base marker (`x` `X` `u` `U` hex, `o` octal, `d`
 *   decimal, `N{U+` hex, none for an octal digit), then a run of digits of that base, optionally
 *   inside `{…}`;
 * - it may stand for the character whose code is the value of any leading part of its run (the
 *   rest of the run is then plain text) or of all of a braced run, either that whole value or its
 *   low 8 bits.
 *
 * A run of more than {@linkcode MOST_NUMERIC_DIGITS} digits reads too many ways to follow: its
 * backslash, marker and first digits, one more than that, are masked instead (the rest of the run
 * is then plain digits; see lib/tools/_escape_lattice.ts).
 *
 * @module
 */

/** Digits a numeric escape's run may have and still be read; a longer one is masked whole. */
export const MOST_NUMERIC_DIGITS = 32;

/** A numeric escape at a backslash: where its digit run is, in what base, and how it ends. */
export interface NumericEscape {
  /** Where its digits start. */
  digits: number;
  /** How many digits its run has. */
  count: number;
  /** 8, 10 or 16. */
  base: number;
  /** Whether the run is inside `{…}` (then only all of it is read). */
  braced: boolean;
  /** Where the escape ends: after its whole run (and the closing brace). */
  end: number;
}

/** The value of digit `c` in `base`; -1 when it is not one. */
function digitValue(c: number, base: number): number {
  let d = -1;
  if (c >= 0x30 && c <= 0x39) d = c - 0x30;
  else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
  else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
  return d < base ? d : -1;
}

/** The base a marker letter names (0 for none), and how many characters the marker takes. */
function markerAt(text: string, i: number): { base: number; skip: number; brace: boolean } | null {
  const c = text.charCodeAt(i + 1);
  if (c >= 0x30 && c <= 0x37) return { base: 8, skip: 1, brace: false };
  if (c === 0x78 || c === 0x58 || c === 0x75 || c === 0x55) {
    return { base: 16, skip: 2, brace: false };
  }
  if (c === 0x6f) return { base: 8, skip: 2, brace: false };
  if (c === 0x64) return { base: 10, skip: 2, brace: false };
  if (c === 0x4e && text.startsWith("{U+", i + 2)) return { base: 16, skip: 5, brace: true };
  return null;
}

/**
 * The numeric escape at `i` (a backslash) of `text`: null when there is none, `"cut"` when the end
 * of a text not final cuts it short (its run, at most {@linkcode MOST_NUMERIC_DIGITS} digits, may
 * go on, or its marker is not complete yet).
 */
export function numericEscapeAt(
  text: string,
  i: number,
  final: boolean,
): NumericEscape | "cut" | null {
  const n = text.length;
  // `\`, `\N`, `\N{U` at the end: the marker may still come.
  if (!final && i + 5 > n) {
    const rest = text.slice(i + 1, i + 5);
    if ("N{U+".startsWith(rest)) return "cut";
  }
  const m = markerAt(text, i);
  if (m === null) return null;
  let from = i + m.skip;
  let braced = m.brace;
  if (!braced && m.skip === 2 && text.charCodeAt(from) === 0x7b) {
    braced = true;
    from++;
  }
  let j = from;
  while (j < n && j - from <= MOST_NUMERIC_DIGITS && digitValue(text.charCodeAt(j), m.base) >= 0) {
    j++;
  }
  const count = j - from;
  if (j === n && !final && count <= MOST_NUMERIC_DIGITS) return "cut";
  // Too long to follow: `end` takes one digit past the most, so that masking up to it leaves no
  // escape (the rest of the run is plain digits), however long the run goes on.
  if (count > MOST_NUMERIC_DIGITS) {
    return { digits: from, count, base: m.base, braced: false, end: j };
  }
  if (braced) {
    if (count > 0 && text.charCodeAt(j) === 0x7d) {
      return { digits: from, count, base: m.base, braced: true, end: j + 1 };
    }
    return null; // `\x{12` or `\N{U+51` unclosed: not a numeric escape
  }
  if (count === 0) return null;
  return { digits: from, count, base: m.base, braced: false, end: j };
}

/**
 * Calls `emit(end, unit)` for each character the escape may stand for: `end` is where it ends in
 * the text, `unit` the code unit (only values up to U+FFFF are given whole).
 */
export function forEachReading(
  text: string,
  esc: NumericEscape,
  emit: (end: number, unit: number) => void,
): void {
  let whole = 0;
  let low = 0;
  for (let k = 0; k < esc.count; k++) {
    const d = digitValue(text.charCodeAt(esc.digits + k), esc.base);
    whole = whole > 0xffff ? whole : whole * esc.base + d;
    low = (low * esc.base + d) & 0xff;
    if (esc.braced && k < esc.count - 1) continue;
    const end = esc.braced ? esc.end : esc.digits + k + 1;
    if (whole <= 0xffff) emit(end, whole);
    if (whole !== low) emit(end, low);
  }
}
