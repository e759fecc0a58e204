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
