/**
 * The files one line of a shell startup file pulls in with `source` or `.`:
 * a small shell lexer (quotes, backslashes, `${…}`, command separators), so
 * the forms startup files really use are seen: `. f`, `source f`, `\. f`
 * (nvm), `builtin source f`, `command . f`, `source -- f`, `. "$HOME"/f`,
 * `. "${HOME}/f"`, `[ -s f ] && . f`, `if …; then . f; fi`. `~`, `$HOME`,
 * `${HOME}` and `${HOME<operator>…}` (`${HOME%/}`, `${HOME:?}`, `${HOME:-x}`:
 * taken as the home) are expanded (in quotes too); a path built from any
 * other variable, a glob or a command substitution is not seen.
 *
 * @module
 */
import { join } from "node:path";

/** A shell word (quotes and backslashes removed) or a separator. */
type Token = { word: string } | { sep: string };

/** Characters that end a word and a command outside quotes. */
const SEPARATORS = new Set([";", "&", "|", "(", ")", "{", "}", "`", "<", ">", "\n"]);

/** Words after which a new command starts. */
const KEYWORDS = new Set(["then", "do", "else", "elif", "if", "while", "until", "!", "time"]);

/** Prefix commands that run the next word as a builtin or command. */
const PREFIXES = new Set(["builtin", "command", "exec", "eval"]);

/** The words and separators of `line`: quotes and backslashes removed, `${…}` kept whole. */
function lex(line: string): Token[] {
  const out: Token[] = [];
  let word = "";
  let inWord = false;
  const end = () => {
    if (inWord) out.push({ word });
    word = "";
    inWord = false;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "\\") {
      if (i + 1 < line.length) word += line[++i];
      inWord = true;
    } else if (c === "'") {
      const close = line.indexOf("'", i + 1);
      const stop = close < 0 ? line.length : close;
      word += line.slice(i + 1, stop);
      i = stop;
      inWord = true;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === "\\" && j + 1 < line.length && '$`"\\'.includes(line[j + 1]!)) j++;
        word += line[j];
      }
      i = j;
      inWord = true;
    } else if (c === "$" && line[i + 1] === "{") {
      const close = line.indexOf("}", i);
      const stop = close < 0 ? line.length - 1 : close;
      word += line.slice(i, stop + 1);
      i = stop;
      inWord = true;
    } else if (c === "$" && line[i + 1] === "(") {
      word += "$(";
      inWord = true;
      end();
      out.push({ sep: "(" });
      i++;
    } else if (/\s/.test(c)) {
      end();
    } else if (SEPARATORS.has(c)) {
      end();
      out.push({ sep: c });
    } else {
      word += c;
      inWord = true;
    }
  }
  end();
  return out;
}

/**
 * `$HOME`, `${HOME}`, and `${HOME` with any parameter-expansion operator
 * (`%/`, `:?`, `:-x`, `#x`…): each read as the home.
 */
const HOME_REF = /\$\{HOME(?:[^A-Za-z0-9_}][^}]*)?\}|\$HOME(?![A-Za-z0-9_])/g;

/** `word` as an absolute path with `~` and `$HOME` ({@linkcode HOME_REF}) expanded, or undefined when it is not one. */
function expand(word: string, home: string): string | undefined {
  let p = word.replace(/^~(?=\/|$)/, home).replace(HOME_REF, home);
  if (!p.startsWith("/") || /[$*?[`]/.test(p)) return undefined;
  p = join(p);
  return p;
}

/** True for a word starting with `-` (an option of `command`, `exec`…). */
function isOption(t: Token | undefined): boolean {
  return t !== undefined && "word" in t && t.word.startsWith("-");
}

/**
 * The absolute paths that `line` (one line of a startup file, comments
 * already removed) sources, `~`/`$HOME`/`${HOME}` standing for `home`.
 */
export function sourcedOnLine(line: string, home: string): string[] {
  const tokens = lex(line);
  const out: string[] = [];
  let start = true;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if ("sep" in t) {
      start = true;
      continue;
    }
    if (!start) continue;
    if (KEYWORDS.has(t.word) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(t.word)) continue;
    if (PREFIXES.has(t.word)) {
      // `command -p . f`: the prefix's own options.
      while (isOption(tokens[i + 1])) i++;
      continue;
    }
    start = false;
    if (t.word !== "." && t.word !== "source") continue;
    let next = tokens[i + 1];
    if (next && "word" in next && next.word === "--") next = tokens[i + 2];
    if (!next || !("word" in next)) continue;
    const p = expand(next.word, home);
    if (p !== undefined && !out.includes(p)) out.push(p);
  }
  return out;
}
