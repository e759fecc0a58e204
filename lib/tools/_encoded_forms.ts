/**
 * The hex and base64 forms of a secret, for secret masking (lib/tools/secret_mask.ts): a command
 * that can read a secret can print it as `xxd -p`, `od`, `base64` or `basenc --base64url` do, and
 * those forms are matched as literal text, each with the secret's own marker.
 *
 * - Hex: the secret's UTF-8 bytes, two digits each, in lower and in upper case. A piece of
 *   {@linkcode FRAGMENT_HEX_DIGITS} digits or more of it is masked (every piece of 8 characters
 *   or more of the secret is one).
 * - Base64: a base64 character is six bits of the byte stream, so which characters carry only the
 *   secret's bits depends on where the secret starts in its three-byte group (0, 1 or 2 bytes of
 *   other data before it). For each of the three alignments, the run of characters whose six bits
 *   all lie within the secret (the characters at its ends mix in the bytes around it) is a form,
 *   in the standard (`+/`) and the URL-safe (`-_`) alphabet; at alignment 0 the form goes on to
 *   the end of the secret alone's encoding with its padding (`…w==`). A piece of
 *   {@linkcode FRAGMENT_BASE64_CHARS} characters or more of a form is masked: every piece of 8
 *   characters or more of the secret, encoded where it starts, at any alignment, holds such a run
 *   (64 bits hold 10 whole six-bit characters at any of the three offsets).
 *
 * A value too short for pieces (under 12 characters) gets its forms masked only whole (the base64
 * run of its alignment whole, at least 8 characters). By chance, a run of 16 hex digits or 10
 * base64 characters of other text spells one of a secret's forms with a probability of 2^-64 or
 * 2^-60 per window of the form: negligible however much text is masked.
 *
 * @module
 */
import { hexOf } from "../protocol/hex.ts";

/** Fewest hex digits of a secret's hex that are masked (8 bytes). */
export const FRAGMENT_HEX_DIGITS = 16;

/** Fewest characters of a secret's base64 form that are masked (60 bits). */
export const FRAGMENT_BASE64_CHARS = 10;

/**
 * One encoded form: its text, the fewest characters of it that are masked, and where in it a
 * masked piece ends at the earliest (past the encoding of the secret's public prefix, see
 * lib/tools/_public_prefix.ts).
 */
export interface EncodedForm {
  value: string;
  least: number;
  reach: number;
}

/** The UTF-8 bytes of `s` as a binary string (one character a byte). */
function binary(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += String.fromCharCode(b);
  return out;
}

/**
 * The base64 runs of `bytes` at alignments 0, 1 and 2 that depend only on them, with how many
 * of their first characters hold a bit of the first `known` bytes.
 */
function base64Runs(
  bytes: Uint8Array,
  known: number,
): { run: string; stable: number; public: number }[] {
  const n = bytes.length;
  const runs: { run: string; stable: number; public: number }[] = [];
  for (let a = 0; a < 3; a++) {
    const enc = btoa("\0".repeat(a) + binary(bytes));
    // Character c holds bits [6c, 6c + 6) of the stream, the secret bits [8a, 8a + 8n).
    const first = Math.ceil((8 * a) / 6);
    const end = Math.floor((8 * a + 8 * n) / 6);
    // Alone (alignment 0, nothing after it), the rest of the encoding and its padding are its too.
    const publicChars = known === 0 ? 0 : Math.ceil((8 * a + 8 * known) / 6) - first;
    runs.push({
      run: a === 0 ? enc : enc.slice(first, end),
      stable: end - first,
      public: publicChars,
    });
  }
  return runs;
}

/**
 * The hex and base64 forms of `secret`; with `pieces`, a piece of a form long enough is masked
 * too, otherwise only a form whole. A piece must go on past the encoding of the secret's first
 * `publicPrefix` characters by the piece's least (lib/tools/_public_prefix.ts).
 */
export function encodedForms(secret: string, pieces: boolean, publicPrefix = 0): EncodedForm[] {
  const bytes = new TextEncoder().encode(secret);
  const known = new TextEncoder().encode(secret.slice(0, publicPrefix)).length;
  const hex = hexOf(bytes);
  const out: EncodedForm[] = [];
  for (const value of [hex, hex.toUpperCase()]) {
    const least = pieces ? FRAGMENT_HEX_DIGITS : value.length;
    out.push({ value, least, reach: Math.min(2 * known + least, value.length) });
  }
  for (const { run, stable, public: publicChars } of base64Runs(bytes, known)) {
    const least = pieces ? FRAGMENT_BASE64_CHARS : stable;
    // Shorter than a window of the matcher: too short to tell from chance (a 6-byte value's
    // unaligned runs), left out.
    if (stable < 8) continue;
    const reach = Math.min(publicChars + least, stable);
    out.push({ value: run, least, reach });
    const urlSafe = run.replaceAll("+", "-").replaceAll("/", "_");
    if (urlSafe !== run) out.push({ value: urlSafe, least, reach });
  }
  return out;
}
