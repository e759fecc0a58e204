/**
 * Whether a run of letters and digits looks random (a token) rather than
 * made of words and numbers: the shape judgement shared by the MCP URL
 * rule (lib/state/mcp_inline_secrets.ts) and the login environment's value
 * rule (lib/sandbox/login_env_values.ts). Callers remove the separators
 * first, so a token cut by `-`, `:`, `/`, `+` or `~` is judged whole.
 *
 * @module
 */

/** The pieces of a run: a capitalized or lower-case word, an upper-case word, a number. */
const SEGMENT = /[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+/g;

/**
 * The segments of `run` that are too short to be a word or a number: one
 * or two letters, or a single digit (`Qz7Wm` gives `Qz`, `7`, `Wm`).
 */
function shortSegments(run: string): { short: number; all: number } {
  const segs = run.match(SEGMENT) ?? [];
  const short = segs.filter((s) => /\d/.test(s) ? s.length === 1 : s.length <= 2).length;
  return { short, all: segs.length };
}

/**
 * True when letters-and-digits run `run` looks random: at least 8
 * characters of which 5 or more segments (case changes and digit groups,
 * see `shortSegments`) are short and make up half the segments or more
 * (`Qz7WmXkRvTpLsNb`, `k9tq2lm7rv4w`, `RtYuIoPa3sDfGh`); or 12 or more hex
 * digits in a row holding 3 or more digits and 3 or more letters.
 * `x8664linuxgnu`, `DFORTIFYSOURCE2`, `i686w64mingw32`, `getElementById`,
 * `useast1prod01`, `ec2541234567` are not random-looking.
 */
export function randomLookingRun(run: string): boolean {
  const { short, all } = shortSegments(run);
  if (run.length >= 8 && short >= 5 && short * 2 >= all) return true;
  return (run.match(/[0-9a-f]{12,}/gi) ?? []).some((h) =>
    h.replace(/\D/g, "").length >= 3 && h.replace(/\d/g, "").length >= 3
  );
}

/**
 * True for a long concatenation of runs (a whole value with its words
 * joined) that looks random: 10 or more short segments making up two
 * thirds of the segments or more, a token cut into short words.
 */
export function randomLookingJoined(run: string): boolean {
  const { short, all } = shortSegments(run);
  return short >= 10 && short * 3 >= all * 2;
}

/**
 * True for a run of 16 or more letters (no digit) with fewer than one vowel
 * (`aeiou`) in four: random letters have about one in five, words about two
 * in five (`qzxkvbnmwrtplhjgfdsayc` is random-looking; `githubusercontent`,
 * `digitaloceanspaces` are not). A heuristic: about a third of random
 * 16-letter runs have more vowels and pass.
 */
export function fewVowels(letters: string): boolean {
  if (letters.length < 16 || !/^[A-Za-z]+$/.test(letters)) return false;
  return (letters.match(/[aeiou]/gi) ?? []).length * 4 < letters.length;
}

/**
 * True when `pieces` (host name labels, URL path segments, the `.`/`-` parts
 * of a word), joined with their separators removed, make a run of 16 or more
 * characters that looks random: by {@linkcode randomLookingRun}'s short
 * segments, by its hex rule on a run of 16 or more hex digits (a shorter
 * one can be made by the join: `ec2-54-123-45-67.compute-1`), or its letters
 * (digits dropped) 16 or more with fewer than one vowel in five (stricter
 * than {@linkcode fewVowels}: joined words such as `fstack-protector-strong`
 * have about one in four). A
 * token cut into pieces each too short to judge is judged whole this way
 * (`nolchkwnfzck.fdtgdjxwwcbz`, `wr7vwb/ngwgyp/yniwt2`).
 */
export function randomLookingPieces(pieces: readonly string[]): boolean {
  const run = pieces.join("").replace(/[^A-Za-z0-9]/g, "");
  if (run.length < 16) return false;
  const { short, all } = shortSegments(run);
  if (short >= 5 && short * 2 >= all) return true;
  const hex = (run.match(/[0-9a-f]{16,}/gi) ?? []).some((h) =>
    h.replace(/\D/g, "").length >= 3 && h.replace(/\d/g, "").length >= 3
  );
  const letters = run.replace(/\d/g, "");
  return hex ||
    (letters.length >= 16 && (letters.match(/[aeiou]/gi) ?? []).length * 5 < letters.length);
}

/**
 * The indexes of `pieces` that belong to a window of two or more
 * consecutive pieces judged random-looking together
 * ({@linkcode randomLookingPieces}), smallest windows first; a window that
 * holds a piece already found (by `found`, or in a smaller window) is not
 * judged, so a plain piece next to a token is kept (`mcp` in
 * `nolchkwnfzck.fdtgdjxwwcbz.mcp`).
 */
export function randomLookingWindows(
  pieces: readonly string[],
  found: ReadonlySet<number> = new Set(),
): Set<number> {
  const out = new Set<number>();
  for (let len = 2; len <= pieces.length; len++) {
    for (let i = 0; i + len <= pieces.length; i++) {
      const idx = Array.from({ length: len }, (_, k) => i + k);
      if (idx.some((k) => found.has(k) || out.has(k))) continue;
      if (randomLookingPieces(idx.map((k) => pieces[k]!))) idx.forEach((k) => out.add(k));
    }
  }
  return out;
}
