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
import { inside } from "./_paths.ts";

/**
 * A shell word, or a separator. `word` is the word with its quotes and
 * backslashes removed and `$'…'` decoded; `words` what bash reads it as
 * (its unquoted braces expanded), then what it would be with every brace
 * expanded; `spellings` every other name a shell could mean by it (the word
 * literal, braces unexpanded; as written, quotes and backslashes kept;
 * trailing blanks such as a CRLF line's `\r` cut off).
 */
type Token = { word: string; words: string[]; spellings: string[] } | { sep: string };

/**
 * Private-use characters standing for a quoted `{`, `,` and `}` while braces
 * are expanded: bash expands only unquoted ones (`q{'a,b'}.sh`,
 * `"$HOME/qd{a,b}.sh"`, `e\{c,d\}.sh` are literal names).
 */
const QUOTED_BRACE: Record<string, string> = { "{": "\uE000", ",": "\uE001", "}": "\uE002" };
const UNQUOTED_BRACE: Record<string, string> = { "\uE000": "{", "\uE001": ",", "\uE002": "}" };

/** The words of a lexed word: see {@linkcode Token}. */
function wordToken(word: string, marked: string, raw: string): Token {
  const exact = expandBraces(marked).map((w) =>
    w.replace(/[\uE000-\uE002]/g, (c) => UNQUOTED_BRACE[c]!)
  );
  const words = [...new Set([...exact, ...expandBraces(word)])];
  const spellings = new Set([word, raw]);
  for (const w of words) spellings.add(w.replace(/\s+$/, ""));
  spellings.add(word.replace(/\s+$/, ""));
  return { word, words, spellings: [...spellings] };
}

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

/** A word being lexed: its text, the same with quoted braces marked, and where it starts. */
interface Building {
  word: string;
  marked: string;
  from: number;
}

/** Add `s` to the word, quoted (its braces marked, see {@linkcode QUOTED_BRACE}) or not. */
function put(b: Building, s: string, quoted: boolean): void {
  b.word += s;
  b.marked += quoted ? s.replace(/[{,}]/g, (c) => QUOTED_BRACE[c]!) : s;
}

/** bash's blanks: only a space and a tab end a word (`\r`, `\v`, `\f` belong to it). */
const isBlank = (c: string) => c === " " || c === "\t";

/**
 * The words and separators of `text`: quotes and backslashes removed,
 * `\` + newline joined away (outside single quotes, as bash does), `${…}`
 * kept whole, and comments set apart (`#` is a plain character when
 * `comments` is false).
 */
function lex(text: string, comments = true): Lexed {
  // Long because: one loop over the characters, one branch per quoting form.
  const tokens: Token[] = [];
  const commentTexts: string[] = [];
  let b: Building = { word: "", marked: "", from: 0 };
  let inWord = false;
  const begin = (i: number) => {
    if (!inWord) b.from = i;
    inWord = true;
  };
  const end = (i: number) => {
    if (inWord) tokens.push(wordToken(b.word, b.marked, text.slice(b.from, i)));
    b = { word: "", marked: "", from: i };
    inWord = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\") {
      if (text[i + 1] === "\n") {
        i++; // a line continuation: both characters go
        continue;
      }
      begin(i);
      if (i + 1 < text.length) put(b, text[++i]!, true);
    } else if (c === "#" && !inWord && comments) {
      const close = text.indexOf("\n", i);
      const stop = close < 0 ? text.length : close;
      commentTexts.push(text.slice(i + 1, stop));
      i = stop - 1;
    } else if (c === "'") {
      begin(i);
      const close = text.indexOf("'", i + 1);
      const stop = close < 0 ? text.length : close;
      put(b, text.slice(i + 1, stop), true);
      i = stop;
    } else if (c === '"') {
      begin(i);
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\" && text[j + 1] === "\n") {
          j++;
          continue;
        }
        if (text[j] === "\\" && j + 1 < text.length && '$`"\\'.includes(text[j + 1]!)) j++;
        put(b, text[j]!, true);
      }
      i = j;
    } else if (c === "$" && text[i + 1] === "'") {
      begin(i);
      const { value, end: close } = decodeAnsiC(text, i);
      put(b, value, true);
      i = close;
    } else if (c === "$" && text[i + 1] === '"') {
      begin(i);
      continue; // `$"…"`: a translated string, read as `"…"`
    } else if (c === "$" && text[i + 1] === "{") {
      begin(i);
      const close = text.indexOf("}", i);
      const stop = close < 0 ? text.length - 1 : close;
      put(b, text.slice(i, stop + 1), false);
      i = stop;
    } else if (c === "$" && text[i + 1] === "(") {
      begin(i);
      put(b, "$(", false);
      end(i + 1);
      tokens.push({ sep: "(" });
      i++;
    } else if (isBlank(c)) {
      end(i);
    } else if (
      SEPARATORS.has(c) ||
      (!inWord && (c === "}" || (c === "{" && /^\s?$/.test(text[i + 1] ?? ""))))
    ) {
      end(i);
      tokens.push({ sep: c });
    } else {
      begin(i);
      put(b, c, false);
    }
  }
  end(text.length);
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

/**
 * `word` as an absolute path with `~` and `$HOME` ({@linkcode HOME_REF})
 * expanded, or undefined when it is not one; joined as text (`a/../b` as
 * `b`). A spelling with a `..` step goes to `dotted` too, as written.
 */
function expand(word: string, home: string, dotted?: Set<string>): string | undefined {
  const p = word.replace(/^~(?=\/|$)/, home).replace(HOME_REF, home);
  if (!p.startsWith("/") || /[$*?[`]/.test(p)) return undefined;
  noteDotted(p, dotted);
  return join(p);
}

/**
 * Add the absolute path `p` to `dotted` as written (empty and `.` steps
 * dropped) when it has a `..` step: the kernel takes `..` after following
 * what comes before it, which joining it as text does not (`sub/../x`,
 * `sub` a link).
 */
function noteDotted(p: string, dotted: Set<string> | undefined): void {
  const parts = p.split("/").filter((c) => c !== "" && c !== ".");
  if (dotted === undefined || !parts.includes("..") || dotted.size >= MAX_NAMED_PER_FILE) return;
  dotted.add("/" + parts.join("/"));
}

/** Characters that end a path inside a word (a `PATH`-like list, `$(cat ~/x)`, `a=~/x`). */
const PATH_ENDS = /[\s:;=,|&<>()'"`{}]/;

/** The longest path looked at from one place a home reference starts. */
const MAX_PATH = 1024;

/**
 * At most this many paths named per file, and in all the files read: each is
 * looked at on the disk, and a missing one is held by a stand-in.
 */
export const MAX_NAMED_PER_FILE = 2048;
export const MAX_NAMED = 8192;

/**
 * The paths strictly under `base` (the home, or another directory named
 * with its absolute path) that `word` names anywhere in it: from
 * each place the home starts, up to the next such place (at most
 * {@linkcode MAX_PATH} characters), and to each {@linkcode PATH_ENDS}
 * character before that. Paths holding another variable or a glob are
 * left out.
 */
function homePathsInWord(
  word: string,
  home: string,
  add: (p: string) => void,
  dotted: Set<string>,
  base = home,
): void {
  const expanded = expandHome(word, home);
  const prefix = base.endsWith("/") ? base : `${base}/`;
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
      if (!p.startsWith(prefix) || p.length <= prefix.length) continue;
      add(p);
      noteDotted(c, dotted);
    }
    at = next;
  }
}

/** True for a word starting with `-` (an option of `command`, `exec`…). */
function isOption(t: Token | undefined): boolean {
  return t !== undefined && "word" in t && t.word.startsWith("-");
}

/** True for the separator token `c`. */
function isSep(t: Token | undefined, c: string): boolean {
  return t !== undefined && "sep" in t && t.sep === c;
}

/**
 * `tokens` without their redirections (`2>/dev/null`, `</dev/null`,
 * `&>>log`, `>&2`, `{fd}<x`), which may stand anywhere in a command, its
 * start too (`2>/dev/null . ~/x`): the operator, the word it reads or writes
 * and a file-descriptor word before it go. `<(` stays (a process
 * substitution).
 */
function withoutRedirections(tokens: readonly Token[]): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const redirect = isSep(t, "<") || isSep(t, ">") || (isSep(t, "&") && isSep(tokens[i + 1], ">"));
    if (!redirect || isSep(tokens[i + 1], "(")) {
      out.push(t);
      continue;
    }
    const before = out[out.length - 1];
    if (before && "word" in before && /^(?:\d+|\{[A-Za-z_][A-Za-z0-9_]*\})$/.test(before.word)) {
      out.pop();
    }
    while (isSep(tokens[i + 1], "<") || isSep(tokens[i + 1], ">") || isSep(tokens[i + 1], "&")) i++;
    if (tokens[i + 1] && "word" in tokens[i + 1]!) i++; // the file (or `-`, a descriptor)
  }
  return out;
}

/** The absolute paths that `tokens` source with `.` or `source` at a command's start. */
function sourcedIn(all: readonly Token[], home: string, dotted?: Set<string>): string[] {
  const tokens = withoutRedirections(all);
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
      const p = expand(w, home, dotted);
      if (p !== undefined && !out.includes(p)) out.push(p);
    }
  }
  return out;
}

/** What a startup file's text pulls in: see the module's documentation. */
export interface StartupTextPaths {
  /** Absolute paths sourced with `.` or `source`. */
  sourced: string[];
  /** Paths strictly under the home (or a directory of `within`) named anywhere, in every spelling. */
  named: string[];
  /** The paths of `named` that are whole words as bash reads them (in strings run later too). */
  exact: string[];
  /**
   * The sourced and named paths spelled with a `..` step, as written: the
   * kernel resolves what comes before each `..` first (`~/sub/../x`, `sub`
   * a link, is not `~/x`), so both readings are protected.
   */
  dotted: string[];
  /** True when the text names more than {@linkcode MAX_NAMED_PER_FILE} paths (`named` stops there). */
  overflow: boolean;
}

/** How deep a word's text is read again as shell text (a string run later, in a string). */
const MAX_RELEX_DEPTH = 2;

/** A word that may be shell text bash runs later (`PROMPT_COMMAND`, `trap`, `alias`, `eval`). */
const SHELL_TEXT = /[\s'"\\;&|<>()`{]/;

/**
 * Add what the words of `tokens` name under `home`, in every spelling, and
 * what each word that is shell text itself names (read again, up to
 * {@linkcode MAX_RELEX_DEPTH} deep): a string bash runs later may quote,
 * escape, brace or source in its own way.
 */
function namedIn(
  tokens: readonly Token[],
  home: string,
  within: readonly string[],
  add: (p: string) => void,
  exact: Set<string>,
  depth: number,
  dotted: Set<string>,
): void {
  const bases = [home, ...within];
  const strictlyIn = (p: string) => bases.some((b) => inside(p, b) && p !== b);
  for (const t of tokens) {
    if (!("word" in t)) continue;
    for (const w of new Set([...t.words, ...t.spellings])) {
      for (const b of bases) homePathsInWord(w, home, add, dotted, b);
    }
    for (const w of t.words) {
      const p = expand(w, home, dotted);
      if (p !== undefined && strictlyIn(p) && exact.size < MAX_NAMED_PER_FILE) exact.add(p);
    }
    if (depth < MAX_RELEX_DEPTH && SHELL_TEXT.test(t.word)) {
      const inner = lex(t.word);
      namedIn(inner.tokens, home, within, add, exact, depth + 1, dotted);
      for (const c of inner.comments) {
        namedIn(lex(c, false).tokens, home, within, add, exact, depth + 1, dotted);
      }
    }
  }
}

/** zsh's startup files in `$ZDOTDIR`. */
const ZSH_FILES = [".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout"];

/** Variables of one file followed at most. */
const MAX_VARIABLES = 64;

/**
 * The variables `text` sets to an absolute path (`~`, `$HOME` and the ones set before expanded):
 * `B=~/.config/bash; . "$B/init.sh"` sources `~/.config/bash/init.sh` (attack round 32 u04). The
 * last value of each; `HOME` and `PATH` are not taken.
 */
function pathVariables(text: string, home: string): Map<string, string> {
  const vars = new Map<string, string>();
  const re =
    /(?:^|[\s;&|(])(?:export\s+|local\s+|declare\s+(?:-\w+\s+)*|typeset\s+(?:-\w+\s+)*)?([A-Za-z_][A-Za-z0-9_]*)=("[^"\n]*"|'[^'\n]*'|[^\s;&|()`'"]+)/g;
  for (const m of text.matchAll(re)) {
    const name = m[1]!;
    if (name === "HOME" || name === "PATH" || (!vars.has(name) && vars.size >= MAX_VARIABLES)) {
      continue;
    }
    const raw = m[2]!.replace(/^(["'])(.*)\1$/s, "$2");
    const value = expandHome(withVariables(raw, vars), home);
    if (value.startsWith("/") && !/[$`*?[]/.test(value)) vars.set(name, join(value));
  }
  return vars;
}

/** `text` with `$NAME` and `${NAME}` of `vars` replaced by their values. */
function withVariables(text: string, vars: ReadonlyMap<string, string>): string {
  if (vars.size === 0) return text;
  return text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (m, a?: string, b?: string) => vars.get((a ?? b)!) ?? m,
  );
}

/**
 * The directories whose files a glob in the last component of a word names (`~/x/*.sh`), when
 * what comes before it is an absolute path.
 */
function globDirs(tokens: readonly Token[], home: string): string[] {
  const out: string[] = [];
  for (const t of tokens) {
    if (!("word" in t)) continue;
    for (const w of t.words) {
      const p = expandHome(w, home);
      const slash = p.lastIndexOf("/");
      if (slash <= 0 || !/[*?[]/.test(p.slice(slash + 1))) continue;
      const dir = p.slice(0, slash);
      if (!dir.startsWith("/") || /[$*?[`]/.test(dir) || out.length >= MAX_NAMED_PER_FILE) continue;
      if (!out.includes(join(dir))) out.push(join(dir));
    }
  }
  return out;
}

/**
 * The paths the startup file text `text` sources and names (at most
 * {@linkcode MAX_NAMED_PER_FILE} named), `~`/`$HOME`/`${HOME}` standing for
 * `home`. Named are the paths strictly under `home`, and strictly under each
 * directory of `within` (the writable roots of a sandbox, named by their
 * absolute paths).
 */
export function startupTextPaths(
  text: string,
  home: string,
  within: readonly string[] = [],
): StartupTextPaths {
  const named = new Set<string>();
  let overflow = false;
  const add = (p: string) => {
    if (named.size < MAX_NAMED_PER_FILE) named.add(p);
    else if (!named.has(p)) overflow = true;
  };
  const exact = new Set<string>();
  const dotted = new Set<string>();
  const vars = pathVariables(text, home);
  const { tokens, comments } = lex(withVariables(text, vars));
  namedIn(tokens, home, within, add, exact, 0, dotted);
  // Commented-out lines are read too: a path they name is the user's all the same.
  for (const c of comments) namedIn(lex(c, false).tokens, home, within, add, exact, 0, dotted);
  const sourced = sourcedIn(tokens, home, dotted);
  // A glob's directory (`for f in ~/.config/bashrc.d/*.sh`, `source ~/x/*.sh`): every file in it,
  // and zsh's files in a `ZDOTDIR` the text sets (attack round 32 u04, w08).
  // Only under the home or a root: a system directory's many files would take the reading's budget.
  for (const dir of globDirs(tokens, home)) {
    if (![home, ...within].some((b) => inside(dir, b)) || sourced.includes(dir)) continue;
    sourced.push(dir);
  }
  const zdot = vars.get("ZDOTDIR");
  if (zdot !== undefined) {
    for (const f of ZSH_FILES) if (!sourced.includes(join(zdot, f))) sourced.push(join(zdot, f));
  }
  const exactNamed = [...exact].filter((p) => named.has(p));
  return { sourced, named: [...named], exact: exactNamed, dotted: [...dotted], overflow };
}

/**
 * The absolute paths that `line` (one line of a startup file) sources,
 * `~`/`$HOME`/`${HOME}` standing for `home`.
 */
export function sourcedOnLine(line: string, home: string): string[] {
  return sourcedIn(lex(line).tokens, home);
}
