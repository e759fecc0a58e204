/**
 * The two spellings of a startup file's words that bash rewrites before it
 * reads a path: ANSI-C quoting (`$'\x61'`, decoded by
 * {@linkcode decodeAnsiC}) and brace expansion (`br{ace,}.sh`,
 * `x{1..3}`, by {@linkcode expandBraces}). Used by `_source_lines.ts`.
 *
 * @module
 */

/** At most this many words one word's braces expand to (the rest are dropped). */
export const MAX_BRACE_WORDS = 64;

/** The one-letter escapes of `$'…'` and the characters they stand for. */
const SIMPLE: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** The code point `hex` stands for, or the empty string when it is none. */
function codePoint(n: number): string {
  return Number.isInteger(n) && n >= 0 && n <= 0x10ffff ? String.fromCodePoint(n) : "";
}

/**
 * The text of a `$'…'` string starting at `text[start]` (the `$`), decoded
 * as bash does (`\n`, `\xHH`, octal `\NNN`, `\uHHHH`, `\UHHHHHHHH`,
 * `\cX`), and the index of its closing quote (the text's end when none).
 */
export function decodeAnsiC(text: string, start: number): { value: string; end: number } {
  let value = "";
  let i = start + 2;
  for (; i < text.length && text[i] !== "'"; i++) {
    const c = text[i]!;
    if (c !== "\\" || i + 1 >= text.length) {
      value += c;
      continue;
    }
    const e = text[++i]!;
    const run = (re: RegExp) => text.slice(i + 1).match(re)?.[0] ?? "";
    if (e in SIMPLE) value += SIMPLE[e];
    else if (/[0-7]/.test(e)) {
      const digits = e + run(/^[0-7]{0,2}/);
      value += codePoint(parseInt(digits, 8) & 0xff);
      i += digits.length - 1;
    } else if (e === "x" || e === "u" || e === "U") {
      const digits = run(
        e === "x" ? /^[0-9A-Fa-f]{1,2}/ : e === "u" ? /^[0-9A-Fa-f]{1,4}/ : /^[0-9A-Fa-f]{1,8}/,
      );
      value += digits === "" ? `\\${e}` : codePoint(parseInt(digits, 16));
      i += digits.length;
    } else if (e === "c" && i + 1 < text.length) {
      value += String.fromCharCode(text.charCodeAt(++i) & 0x1f);
    } else value += `\\${e}`;
  }
  return { value, end: i };
}

/** Words longer than this are not brace-expanded (a bound on the work per word). */
const MAX_BRACE_WORD = 4096;

/** Brace groups deeper than this (one inside or after another) are left as written. */
const MAX_BRACE_DEPTH = 32;

/** For each `{` of `word`, the index of its `}` (-1 when unclosed), in one pass. */
function pairs(word: string): Map<number, number> {
  const out = new Map<number, number>();
  const open: number[] = [];
  for (let i = 0; i < word.length; i++) {
    if (word[i] === "{") {
      open.push(i);
      out.set(i, -1);
    } else if (word[i] === "}" && open.length > 0) out.set(open.pop()!, i);
  }
  return out;
}

/** The parts of `body` split at its top-level commas (`${…}` and nested braces kept whole). */
function splitCommas(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < body.length; i++) {
    if (body[i] === "{") depth++;
    else if (body[i] === "}") depth--;
    else if (body[i] === "," && depth === 0) {
      parts.push(body.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(body.slice(from));
  return parts;
}

/** The words of a sequence `a..b` or `a..b..step` (numbers, or single letters), or undefined. */
function sequence(body: string, limit: number): string[] | undefined {
  const m = body.match(/^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/);
  if (!m) return undefined;
  const a = m[1]!;
  const b = m[2]!;
  const numeric = /\d/.test(a);
  if (numeric !== /\d/.test(b)) return undefined;
  const from = numeric ? parseInt(a, 10) : a.charCodeAt(0);
  const to = numeric ? parseInt(b, 10) : b.charCodeAt(0);
  const step = (Math.abs(parseInt(m[3] ?? "1", 10)) || 1) * (from <= to ? 1 : -1);
  // `{01..10}`: a leading zero pads every word to the longer end's width.
  const width = /^-?0\d/.test(a) || /^-?0\d/.test(b) ? Math.max(a.length, b.length) : 0;
  const out: string[] = [];
  for (let v = from; step > 0 ? v <= to : v >= to; v += step) {
    if (out.length >= limit) break;
    out.push(numeric ? String(v).padStart(width, "0") : String.fromCharCode(v));
  }
  return out;
}

/** {@linkcode expandBraces} without the final de-duplication; `depth` counts the groups expanded. */
function expandFrom(word: string, limit: number, depth: number): string[] {
  if (limit <= 0) return [];
  if (depth > MAX_BRACE_DEPTH || word.length > MAX_BRACE_WORD) return [word];
  const closeOf = pairs(word);
  for (let open = word.indexOf("{"); open >= 0; open = word.indexOf("{", open + 1)) {
    const close = closeOf.get(open)!;
    if (close < 0) break;
    if (word[open - 1] === "$") {
      open = close; // `${…}`: a parameter, not a list
      continue;
    }
    const body = word.slice(open + 1, close);
    const parts = splitCommas(body);
    const items = parts.length > 1 ? parts : sequence(body, limit);
    if (items === undefined) continue;
    const head = word.slice(0, open);
    const tail = word.slice(close + 1);
    const out: string[] = [];
    for (const item of items) {
      if (out.length >= limit) break;
      out.push(...expandFrom(head + item + tail, limit - out.length, depth + 1));
    }
    return out;
  }
  return [word];
}

/**
 * The words `word` expands to by brace expansion, as bash does it:
 * `a{b,c}d` to `abd acd`, `x{1..3}` to `x1 x2 x3`, `{a..c}`, `{01..10..2}`,
 * nested and several in a word; `${…}` and a brace without a comma or a
 * sequence stay as written. At most `limit` words (the first ones); a word
 * over 4,096 characters is left whole.
 */
export function expandBraces(word: string, limit = MAX_BRACE_WORDS): string[] {
  return [...new Set(expandFrom(word, limit, 0))];
}
