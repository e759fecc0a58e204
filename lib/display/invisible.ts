/**
 * Characters a terminal draws as nothing: the Unicode default-ignorable code
 * points (zero-width spaces and joiners, soft hyphen, combining grapheme
 * joiner, invisible operators, variation selectors, tag characters, Hangul
 * fillers…), the format characters (general category Cf: bidi marks,
 * word joiner, byte-order mark…) and the line and paragraph separators
 * (U+2028, U+2029: categories Zl and Zp, which terminals do not break on). Decided from the Unicode properties the
 * JavaScript engine knows, not a hand list, so a character the list forgot
 * cannot hide a break inside a secret or in shown text.
 *
 * Both lib/display/terminal_text.ts (which removes them from shown text)
 * and lib/tools/secret_mask.ts (which reads past them when matching a
 * secret) use this one test.
 *
 * @module
 */

/** One default-ignorable or format character, at the start (sticky). */
const INVISIBLE_AT = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Zl}\p{Zp}]/uy;

/** Whether `text` holds any default-ignorable or format character. */
export const HAS_INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Zl}\p{Zp}]/u;

/** Per BMP code unit: 1 when it is invisible on its own (built on first use, a few ms). */
let bmp: Uint8Array | null = null;

function bmpTable(): Uint8Array {
  if (bmp) return bmp;
  const table = new Uint8Array(0x10000);
  const one = /^[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Zl}\p{Zp}]$/u;
  for (let c = 0; c < 0x10000; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    if (one.test(String.fromCharCode(c))) table[c] = 1;
  }
  return (bmp = table);
}

/**
 * The length in code units (1 or 2) of the invisible character starting at
 * `i` in `text`, or 0 when the character there is shown. A high surrogate
 * at the very end of `text` counts as shown: callers that stream hold it
 * back until its pair arrives (see {@linkcode splitTrailingSurrogate}).
 */
export function invisibleLength(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff) return c < 0x80 ? 0 : bmpTable()[c]!;
  const next = text.charCodeAt(i + 1);
  if (!(next >= 0xdc00 && next <= 0xdfff)) return 0;
  INVISIBLE_AT.lastIndex = i;
  return INVISIBLE_AT.test(text) ? 2 : 0;
}

/** Whether the code unit is a high surrogate (the first half of an astral character). */
export function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * `[text, carry]`: a chunk without its final high surrogate, which a
 * streaming reader keeps for the next chunk so a character split between
 * chunks (a tag character, U+E0041) is read whole.
 */
export function splitTrailingSurrogate(text: string): [string, string] {
  if (text.length > 0 && isHighSurrogate(text.charCodeAt(text.length - 1))) {
    return [text.slice(0, -1), text.slice(-1)];
  }
  return [text, ""];
}
