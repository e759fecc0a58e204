/**
 * A parser of git's configuration file syntax, read the way git reads it
 * (git-config(1), "CONFIGURATION FILE"), without running git: a hostile
 * configuration can make git run code, so penguin never asks git itself.
 *
 * - `[section]`, `[section "subsection"]` (in the quotes `\"` and `\\`; any
 *   other escaped character stands for itself) and the legacy
 *   `[section.subsection]` (subsection lower-cased). Section and variable
 *   names are case-insensitive and returned lower-cased; subsections keep
 *   their case. A variable may follow the header on the same line.
 * - `name = value`, or `name` alone (a boolean true: value `null`).
 * - Values: leading and trailing whitespace dropped, each inner whitespace
 *   character kept as one space, `"…"` keeps whitespace and comment
 *   characters, escapes `\n` `\t` `\b` `\\` `\"`, and `\` at the end of a
 *   line continues the value on the next one.
 * - `#` and `;` start a comment outside quotes.
 * - A NUL byte: git keeps it inside a subsection or a value, then uses the
 *   key and the value as C strings, so both end at the first NUL
 *   (`[core "fsmonitor\0"] x = ./p` is `core.fsmonitor = ./p` to git).
 *   Keys and values are cut there as git cuts them, and the file is reported
 *   in `errors` as well: text that reads as one thing and runs as another is
 *   never taken as plain (attack round 28 f01).
 *
 * A line git would reject is reported in `errors` and skipped; parsing goes on
 * at the next line (git refuses to run with such a file, so what follows can
 * only ever add protection).
 *
 * @module
 */

/** One variable assignment of a configuration file. */
export interface ConfigEntry {
  /** `section.name` or `section.subsection.name` (section and name lower-cased). */
  key: string;
  /** The value; `null` for a bare `name` (git reads it as true). */
  value: string | null;
  /** The file it was read from (as given to the parser). */
  file: string;
  /** 1-based line of the variable's name. */
  line: number;
}

/** What {@linkcode parseGitConfig} found. */
export interface ParsedConfig {
  entries: ConfigEntry[];
  /** Lines git would refuse, with why (`<file>:<line>: …`). */
  errors: string[];
}

const NAME_START = /[A-Za-z]/;
const NAME_CHAR = /[A-Za-z0-9-]/;
const SECTION_CHAR = /[A-Za-z0-9.-]/;

class Cursor {
  pos = 0;
  line = 1;
  constructor(readonly text: string) {}
  peek(): string | undefined {
    return this.text[this.pos];
  }
  next(): string | undefined {
    const c = this.text[this.pos++];
    if (c === "\n") this.line++;
    return c;
  }
  skipBlanks(): void {
    while (this.peek() === " " || this.peek() === "\t" || this.peek() === "\r") this.pos++;
  }
  /** Skip to just after the end of the current line. */
  skipLine(): void {
    while (this.pos < this.text.length && this.next() !== "\n");
  }
}

class SyntaxError_ extends Error {}

/** `[section]`, `[section "sub"]` or `[section.sub]`, cursor just after `[`: the key prefix. */
function parseHeader(c: Cursor): string {
  let name = "";
  while (c.peek() !== undefined && SECTION_CHAR.test(c.peek()!)) name += c.next();
  if (c.peek() === "]") {
    c.next();
    if (name === "") throw new SyntaxError_("empty section name");
    // Legacy [section.subsection]: both lower-cased.
    return name.toLowerCase();
  }
  // git's isspace: a CR or even a newline separates the name from its subsection too (a header
  // `[filter\r"x"]` that penguin refused, git read, attack round 20 concgit R1).
  const space = (ch: string | undefined) => ch === " " || ch === "\t" || ch === "\r" || ch === "\n";
  if (!space(c.peek())) throw new SyntaxError_("bad section header");
  while (space(c.peek())) c.next();
  if (c.next() !== '"') throw new SyntaxError_("bad section header (expected a quoted subsection)");
  let sub = "";
  for (;;) {
    const ch = c.next();
    if (ch === undefined || ch === "\n") throw new SyntaxError_("unterminated subsection");
    if (ch === '"') break;
    if (ch === "\\") {
      const esc = c.next();
      if (esc === undefined || esc === "\n") throw new SyntaxError_("unterminated subsection");
      sub += esc;
    } else sub += ch;
  }
  if (c.next() !== "]") throw new SyntaxError_("bad section header (expected ])");
  if (name === "" || name.includes(".")) throw new SyntaxError_("bad section name");
  return `${name.toLowerCase()}.${sub}`;
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", b: "\b", "\\": "\\", '"': '"' };

/** A value, cursor just after `=`; consumes through the end of its (last) line. */
function parseValue(c: Cursor): string {
  let out = "";
  let quoted = false;
  let spaces = 0;
  c.skipBlanks();
  for (;;) {
    const ch = c.next();
    if (ch === undefined || ch === "\n") {
      if (quoted) throw new SyntaxError_("unterminated quoted value");
      return out;
    }
    if (!quoted && (ch === "#" || ch === ";")) {
      c.skipLine();
      return out;
    }
    if (!quoted && (ch === " " || ch === "\t" || ch === "\r")) {
      if (out !== "") spaces++;
      continue;
    }
    out += " ".repeat(spaces);
    spaces = 0;
    if (ch === '"') {
      quoted = !quoted;
      continue;
    }
    if (ch === "\\") {
      const esc = c.next();
      if (esc === "\n") continue;
      if (esc === "\r" && c.peek() === "\n") {
        c.next();
        continue;
      }
      if (esc === undefined || !(esc in ESCAPES)) {
        throw new SyntaxError_(`bad escape "\\${esc ?? ""}" in a value`);
      }
      out += ESCAPES[esc];
      continue;
    }
    out += ch;
  }
}

/**
 * Parse `text`, the content of the configuration file `file`. Never throws:
 * lines git would reject land in `errors`.
 */
export function parseGitConfig(text: string, file: string): ParsedConfig {
  const c = new Cursor(text.startsWith("\ufeff") ? text.slice(1) : text);
  const entries: ConfigEntry[] = [];
  const errors: string[] = [];
  const nul = c.text.indexOf("\0");
  if (nul >= 0) {
    const line = c.text.slice(0, nul).split("\n").length;
    errors.push(
      `${file}:${line}: a NUL byte, where git ends the key or value it is in (what git reads ` +
        `there is not what the text says)`,
    );
  }
  let section: string | undefined;
  while (c.pos < c.text.length) {
    const line = c.line;
    try {
      c.skipBlanks();
      const ch = c.peek();
      if (ch === undefined) break;
      if (ch === "\n") {
        c.next();
        continue;
      }
      if (ch === "#" || ch === ";") {
        c.skipLine();
        continue;
      }
      if (ch === "[") {
        c.next();
        section = undefined;
        section = parseHeader(c);
        continue; // a variable may follow on the same line
      }
      if (!NAME_START.test(ch)) throw new SyntaxError_("bad config line");
      if (section === undefined) throw new SyntaxError_("variable outside any section");
      let name = "";
      while (c.peek() !== undefined && NAME_CHAR.test(c.peek()!)) name += c.next();
      c.skipBlanks();
      const after = c.peek();
      let value: string | null = null;
      if (after === "=") {
        c.next();
        value = parseValue(c);
      } else if (after === undefined || after === "\n") {
        c.next();
      } else if (after === "#" || after === ";") {
        c.skipLine();
      } else throw new SyntaxError_("bad variable name");
      const key = cutAtNul(`${section}.${name.toLowerCase()}`);
      entries.push({ key, value: value === null ? null : cutAtNul(value), file, line });
    } catch (err) {
      if (!(err instanceof SyntaxError_)) throw err;
      errors.push(`${file}:${line}: ${err.message}`);
      if (c.line === line) c.skipLine();
    }
  }
  return { entries, errors };
}

/** `s` up to its first NUL, as git's C strings end there. */
function cutAtNul(s: string): string {
  const at = s.indexOf("\0");
  return at < 0 ? s : s.slice(0, at);
}

/** Git's reading of a boolean value, or undefined when it is not one. */
export function gitBoolean(value: string | null): boolean | undefined {
  if (value === null) return true;
  const v = value.trim().toLowerCase();
  if (["true", "yes", "on", "1"].includes(v)) return true;
  if (["false", "no", "off", "0", ""].includes(v)) return false;
  return undefined;
}
