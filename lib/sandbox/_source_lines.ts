/**
 * What the text of a shell startup file pulls in from the home: a small
 * shell lexer (quotes, backslashes, line continuations, comments, `${…}`,
 * command separators) over the whole file, giving two lists.
 *
 * Words are read as bash reads them before it opens a path: `$'…'` decoded
 * (`$'\x61'`, `$'\157'`, `$'\u0061'`, `$'\n'`), `$"…"` as `"…"`, and brace
 * lists and sequences expanded (`br{ace,}`, `x{1..3}`: at most 64 words
 * each, all of them taken).
 *
 * - Sourced: the word after `source` or `.` at the start of a command, in
 *   the forms startup files really use: `. f`, `source f`, `\. f` (nvm),
 *   `builtin source f`, `command . f`, `source -- f`, `. "$HOME"/f`,
 *   `[ -s f ] && . f`, `if …; then . f; fi`, and `. \` + newline + `f`.
 *   Any absolute path, in the home or not.
 * - Named: every path under the home that any word names, wherever it
 *   stands: after `source`, `.`, `cat`, `eval`, `<`, inside `<(…)`, `$(…)`,
 *   backticks, quotes (single ones too), assignments (`X=~/a:~/b`), and in
 *   comments. A path may be spelled `~/x`, `$HOME/x`, `${HOME}/x`,
 *   `${HOME<operator>…}/x` (`${HOME%/}`, `${HOME:?}`, `${HOME:-x}`: taken as
 *   the home), the home's absolute path, or `${VAR:-…}`/`${VAR-…}`/
 *   `${VAR:=…}` holding one of those (the default taken as the value).
 *
 * Not seen: a path built from any other variable (`$DOTFILES/x`,
 * `~/$NAME.sh`), a glob (`~/env/*.sh`), `~user/x`, a path assembled by
 * commands (`$(dirname …)/x`, `printf`), and what a sourced program reads on
 * its own.
 *
 * @module
 */
import { join } from "node:path";
import { decodeAnsiC, expandBraces } from "./_shell_expand.ts";

/**
 * A shell word (quotes and backslashes removed, `$'…'` decoded) with the
 * words its braces expand to, or a separator.
 */
type Token = { word: string; words: string[] } | { sep: string };

/** Characters that end a word and a command outside quotes (`{` and `}` only as words of their own). */
const SEPARATORS = new Set([";", "&", "|", "(", ")", "`", "<", ">", "\n"]);

/** Words after which a new command starts. */
const KEYWORDS = new Set(["then", "do", "else", "elif", "if", "while", "until", "!", "time"]);

/** Prefix commands that run the next word as a builtin or command. */
const PREFIXES = new Set(["builtin", "command", "exec", "eval"]);

/** What {@linkcode lex} finds: the tokens, and the comments' text (lexed apart). */
interface Lexed {
  tokens: Token[];
  comments: string[];
}

/**
 * The words and separators of `text`: quotes and backslashes removed,
 * `\` + newline joined away (outside single quotes, as bash does), `${…}`
 * kept whole, and comments set apart (`#` is a plain character when
 * `comments` is false).
 */
// Long because: one loop over the characters, one branch per quoting form.
function lex(text: string, comments = true): Lexed {
  const tokens: Token[] = [];
  const commentTexts: string[] = [];
  let word = "";
  let inWord = false;
  const end = () => {
    if (inWord) tokens.push({ word, words: expandBraces(word) });
    word = "";
    inWord = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\") {
      if (text[i + 1] === "\n") {
        i++; // a line continuation: both characters go
        continue;
      }
      if (i + 1 < text.length) word += text[++i];
      inWord = true;
    } else if (c === "#" && !inWord && comments) {
      const close = text.indexOf("\n", i);
      const stop = close < 0 ? text.length : close;
      commentTexts.push(text.slice(i + 1, stop));
      i = stop - 1;
    } else if (c === "'") {
      const close = text.indexOf("'", i + 1);
      const stop = close < 0 ? text.length : close;
      word += text.slice(i + 1, stop);
      i = stop;
      inWord = true;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\" && text[j + 1] === "\n") {
          j++;
          continue;
        }
        if (text[j] === "\\" && j + 1 < text.length && '$`"\\'.includes(text[j + 1]!)) j++;
        word += text[j];
      }
      i = j;
      inWord = true;
    } else if (c === "$" && text[i + 1] === "'") {
      const { value, end: close } = decodeAnsiC(text, i);
      word += value;
      i = close;
      inWord = true;
    } else if (c === "$" && text[i + 1] === '"') {
      continue; // `$"…"`: a translated string, read as `"…"`
    } else if (c === "$" && text[i + 1] === "{") {
      const close = text.indexOf("}", i);
      const stop = close < 0 ? text.length - 1 : close;
      word += text.slice(i, stop + 1);
      i = stop;
      inWord = true;
    } else if (c === "$" && text[i + 1] === "(") {
      word += "$(";
      inWord = true;
      end();
      tokens.push({ sep: "(" });
      i++;
    } else if (/\s/.test(c) && c !== "\n") {
      end();
    } else if (
      SEPARATORS.has(c) ||
      (!inWord && (c === "}" || (c === "{" && /^\s?$/.test(text[i + 1] ?? ""))))
    ) {
      end();
      tokens.push({ sep: c });
    } else {
      word += c;
      inWord = true;
    }
  }
  end();
  return { tokens, comments: commentTexts };
}

/**
 * `$HOME`, `${HOME}`, and `${HOME` with any parameter-expansion operator
 * (`%/`, `:?`, `:-x`, `#x`…), and `@{HOME}` (`~/.pam_environment`): each
 * read as the home.
 */
const HOME_REF = /\$\{HOME(?:[^A-Za-z0-9_}][^}]*)?\}|\$HOME(?![A-Za-z0-9_])|@\{HOME\}/g;

/** `${VAR:-word}`, `${VAR-word}`, `${VAR:=word}`, `${VAR=word}`: read as `word`. */
const DEFAULT_REF = /\$\{[A-Za-z_][A-Za-z0-9_]*:?[-=]([^}]*)\}/g;

/** `~` where the shell (or a later `eval`) would read it as the home: a word's start, after `=` or `:`. */
const TILDE = /(?<=^|[\s=:(<>`;|&"'])~(?=\/|$)/g;

/** `word` with `~` and the home's references ({@linkcode HOME_REF}) replaced by `home`. */
function expandHome(word: string, home: string): string {
  return word.replace(TILDE, home).replace(HOME_REF, home).replace(DEFAULT_REF, "$1");
}

/** `word` as an absolute path with `~` and `$HOME` ({@linkcode HOME_REF}) expanded, or undefined when it is not one. */
function expand(word: string, home: string): string | undefined {
  const p = word.replace(/^~(?=\/|$)/, home).replace(HOME_REF, home);
  if (!p.startsWith("/") || /[$*?[`]/.test(p)) return undefined;
  return join(p);
}

/** Characters that end a path inside a word (a `PATH`-like list, `$(cat ~/x)`, `a=~/x`). */
const PATH_ENDS = /[\s:;=,|&<>()'"`{}]/;

/** The longest path looked at from one place a home reference starts. */
const MAX_PATH = 1024;

/** At most this many paths named per text: the files named are each looked at on the disk. */
export const MAX_NAMED = 4096;

/**
 * The paths strictly under `home` that `word` names anywhere in it: from
 * each place the home starts, up to the next such place (at most
 * {@linkcode MAX_PATH} characters), and to each {@linkcode PATH_ENDS}
 * character before that. Paths holding another variable or a glob are
 * left out.
 */
function homePathsInWord(word: string, home: string, add: (p: string) => void): void {
  const expanded = expandHome(word, home);
  const prefix = home.endsWith("/") ? home : `${home}/`;
  let at = expanded.indexOf(prefix);
  while (at >= 0) {
    const next = expanded.indexOf(prefix, at + 1);
    const stop = Math.min(next < 0 ? expanded.length : next, at + MAX_PATH);
    const candidates = [expanded.slice(at, stop)];
    for (let i = at + prefix.length; i < stop; i++) {
      if (PATH_ENDS.test(expanded[i]!)) candidates.push(expanded.slice(at, i));
    }
    for (const c of candidates) {
      if (/[$*?[`]/.test(c)) continue;
      const p = join(c);
      if (p.startsWith(prefix) && p.length > prefix.length) add(p);
    }
    at = next;
  }
}

/** True for a word starting with `-` (an option of `command`, `exec`…). */
function isOption(t: Token | undefined): boolean {
  return t !== undefined && "word" in t && t.word.startsWith("-");
}

/** The absolute paths that `tokens` source with `.` or `source` at a command's start. */
function sourcedIn(tokens: readonly Token[], home: string): string[] {
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
    // `. ~/a{b,c}` sources `~/ab` with the argument `~/ac`: both are taken (over-hiding is safe).
    for (const w of next.words) {
      const p = expand(w, home);
      if (p !== undefined && !out.includes(p)) out.push(p);
    }
  }
  return out;
}

/** What a startup file's text pulls in: see the module's documentation. */
export interface StartupTextPaths {
  /** Absolute paths sourced with `.` or `source`. */
  sourced: string[];
  /** Paths strictly under the home named anywhere (the sourced ones in it too). */
  named: string[];
}

/**
 * The paths the startup file text `text` sources and names (at most
 * {@linkcode MAX_NAMED}), `~`/`$HOME`/`${HOME}` standing for `home`.
 */
export function startupTextPaths(text: string, home: string): StartupTextPaths {
  const named = new Set<string>();
  const add = (p: string) => {
    if (named.size < MAX_NAMED) named.add(p);
  };
  const { tokens, comments } = lex(text);
  for (const t of tokens) {
    if ("word" in t) {
      for (const w of t.words) homePathsInWord(w, home, add);
    }
  }
  // Commented-out lines are read too: a path they name is the user's all the same.
  for (const c of comments) {
    for (const t of lex(c, false).tokens) {
      if ("word" in t) { for (const w of t.words) homePathsInWord(w, home, add); }
    }
  }
  return { sourced: sourcedIn(tokens, home), named: [...named] };
}

/**
 * The absolute paths that `line` (one line of a startup file) sources,
 * `~`/`$HOME`/`${HOME}` standing for `home`.
 */
export function sourcedOnLine(line: string, home: string): string[] {
  return sourcedIn(lex(line).tokens, home);
}
