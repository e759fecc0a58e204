/**
 * Markdown for a colour terminal: the model's answers in `run` and `chat`.
 * `marked`'s lexer parses (lib/inspect/markdown.ts); this module draws the
 * tokens with ANSI attributes: bold (underlined for level 1 and 2) headings,
 * italic, bold, strikethrough, `•` / `1.` lists, quotes behind a dim `│ `
 * bar (never the `> ` of the user's own prompt), links as underlined text
 * with the address after it, box-drawn tables and code on a grey background.
 * Raw HTML is shown as text. Images are never fetched: `[image: alt] (url)`.
 *
 * Everything it is given is made terminal-safe first (lib/display/terminal_text.ts),
 * and every piece of text is again after entity decoding, so model text can
 * never carry an escape sequence through; the only escape codes in the
 * output are penguin's own.
 *
 * {@linkcode createMarkdownStream} draws streamed text: a line is drawn raw
 * while it arrives and redrawn rendered once its newline comes (the raw
 * preview is erased by counting the rows it took), code fences are followed
 * across lines, and a table is redrawn as a whole when it ends.
 *
 * @module
 */
import {
  decodeEntities,
  lexBlocks,
  lexInline,
  loadMarkdownLexer,
  type Token,
  type Tokens,
} from "../../inspect/markdown.ts";
import { safeText } from "../../display/terminal_text.ts";
import { displayWidth } from "../_line_editor.ts";

const BOLD = ["\x1b[1m", "\x1b[22m"] as const;
const DIM = ["\x1b[2m", "\x1b[22m"] as const;
const ITALIC = ["\x1b[3m", "\x1b[23m"] as const;
const UNDER = ["\x1b[4m", "\x1b[24m"] as const;
const STRIKE = ["\x1b[9m", "\x1b[29m"] as const;
const LINK = ["\x1b[4;34m", "\x1b[24;39m"] as const;
/** Light text on a dark grey background: readable on dark and light terminals. */
const CODE = ["\x1b[48;5;236;38;5;252m", "\x1b[39;49m"] as const;

const wrap = (s: readonly [string, string], text: string) => text === "" ? "" : s[0] + text + s[1];

// deno-lint-ignore no-control-regex
const OWN_CODES = /\x1b\[[0-9;]*m/g;

/** Display columns of rendered text (penguin's own attribute codes do not count). */
export function visibleWidth(text: string): number {
  return displayWidth(text.replace(OWN_CODES, ""));
}

/** Options of the terminal Markdown renderer. */
export interface MarkdownOptions {
  /** Terminal columns (code backgrounds and rules span them; default 80). */
  columns?: number;
  /** The session's secret masker (see {@linkcode guarded}). */
  mask?: (text: string) => string;
}

/**
 * `rendered`, or the text it shows masked and drawn plain when showing it
 * joins what masking kept apart: markup takes no cells on screen, so pieces
 * of a secret too short to mask each, separated by `**` in the text the
 * masker saw, showed as the whole value in bold (attack round 25 secrets
 * B6).
 */
function guarded(rendered: string, mask: ((text: string) => string) | undefined): string {
  if (!mask || rendered === "") return rendered;
  const shown = rendered.replace(OWN_CODES, "");
  const masked = mask(shown);
  return masked === shown ? rendered : masked;
}

/** Untrusted leaf text: references decoded, then made terminal-safe, tabs expanded. */
const leaf = (text: string) => safeText(decodeEntities(text)).replaceAll("\t", "    ");
/** Untrusted code: literal (no reference decoding), made terminal-safe, tabs expanded. */
const literal = (text: string) => safeText(text).replaceAll("\t", "    ");

function inline(tokens: readonly Token[] | undefined): string {
  let out = "";
  for (const t of tokens ?? []) out += inlineToken(t);
  return out;
}

function inlineToken(t: Token): string {
  switch (t.type) {
    case "strong":
      return wrap(BOLD, inline((t as Tokens.Strong).tokens));
    case "em":
      return wrap(ITALIC, inline((t as Tokens.Em).tokens));
    case "del":
      return wrap(STRIKE, inline((t as Tokens.Del).tokens));
    case "codespan":
      return wrap(CODE, literal((t as Tokens.Codespan).text));
    case "br":
      return "\n";
    case "link": {
      const l = t as Tokens.Link;
      const text = inline(l.tokens);
      const href = leaf(l.href);
      const shown = text.replace(OWN_CODES, "");
      return shown === href || `mailto:${shown}` === href
        ? wrap(LINK, text)
        : `${wrap(LINK, text)}${wrap(DIM, ` (${href})`)}`;
    }
    case "image": {
      const i = t as Tokens.Image;
      return wrap(DIM, `[image: ${leaf(i.text)}] (${leaf(i.href)})`);
    }
    case "text": {
      const x = t as Tokens.Text;
      return x.tokens ? inline(x.tokens) : leaf(x.text);
    }
    case "escape":
    case "html":
      return leaf((t as Tokens.Escape).text);
    default:
      return "raw" in t && typeof t.raw === "string" ? leaf(t.raw) : "";
  }
}

/** Prefix every line of `body` (which ends with a newline) with `first`, then `rest`. */
function indentLines(body: string, first: string, rest: string): string {
  const lines = body.replace(/\n$/, "").split("\n");
  return lines.map((l, i) => `${i === 0 ? first : rest}${l}\n`).join("");
}

function codeBlock(text: string, columns: number): string {
  const lines = literal(text).replace(/\n$/, "").split("\n");
  const width = Math.max(
    Math.min(columns, 100) - 1,
    ...lines.map((l) => displayWidth(l) + 2),
  );
  return lines.map((l) => codeLine(l, width)).join("");
}

function codeLine(line: string, width: number): string {
  const pad = Math.max(0, width - displayWidth(line) - 1);
  return `${CODE[0]} ${line}${" ".repeat(pad)}${CODE[1]}\n`;
}

function table(t: Tokens.Table): string {
  const head = t.header.map((c) => wrap(BOLD, inline(c.tokens)));
  const rows = t.rows.map((r) => r.map((c) => inline(c.tokens)));
  const n = head.length;
  const widths = Array.from(
    { length: n },
    (_, i) =>
      Math.max(1, visibleWidth(head[i] ?? ""), ...rows.map((r) => visibleWidth(r[i] ?? ""))),
  );
  const cell = (text: string, i: number) => {
    const gap = widths[i]! - visibleWidth(text);
    const align = t.align[i];
    if (align === "right") return " ".repeat(gap) + text;
    if (align === "center") {
      const left = Math.floor(gap / 2);
      return " ".repeat(left) + text + " ".repeat(gap - left);
    }
    return text + " ".repeat(gap);
  };
  const rule = (l: string, m: string, r: string) =>
    wrap(DIM, l + widths.map((w) => "─".repeat(w + 2)).join(m) + r) + "\n";
  const bar = wrap(DIM, "│");
  const row = (cells: string[]) =>
    `${bar} ${
      Array.from({ length: n }, (_, i) => cell(cells[i] ?? "", i)).join(` ${bar} `)
    } ${bar}\n`;
  return rule("┌", "┬", "┐") + row(head) + rule("├", "┼", "┤") + rows.map(row).join("") +
    rule("└", "┴", "┘");
}

function list(l: Tokens.List, columns: number): string {
  let out = "";
  let n = typeof l.start === "number" ? l.start : 1;
  for (const item of l.items) {
    const marker = l.ordered ? `${n++}.` : item.task ? (item.checked ? "☑" : "☐") : "•";
    const body = blocks(item.tokens.filter((t) => t.type !== "checkbox"), columns, true);
    const pad = " ".repeat(visibleWidth(marker) + 1);
    out += indentLines(body === "" ? "\n" : body, `${marker} `, pad);
  }
  return out;
}

function block(t: Token, columns: number, tight: boolean): string {
  switch (t.type) {
    case "space":
      return tight ? "" : "\n".repeat(Math.max(0, (t.raw.match(/\n/g)?.length ?? 1) - 1));
    case "heading": {
      const h = t as Tokens.Heading;
      const text = inline(h.tokens);
      return (h.depth <= 2 ? wrap(BOLD, wrap(UNDER, text)) : wrap(BOLD, text)) + "\n";
    }
    case "paragraph":
      return inline((t as Tokens.Paragraph).tokens) + "\n";
    case "text": {
      const x = t as Tokens.Text;
      return (x.tokens ? inline(x.tokens) : leaf(x.text)) + "\n";
    }
    case "code":
      return codeBlock((t as Tokens.Code).text, columns);
    case "blockquote": {
      const body = blocks((t as Tokens.Blockquote).tokens, columns - 2, false);
      const bar = wrap(DIM, "│ ");
      return indentLines(body === "" ? "\n" : body, bar, bar);
    }
    case "list":
      return list(t as Tokens.List, columns - 2);
    case "table":
      return table(t as Tokens.Table);
    case "hr":
      return wrap(DIM, "─".repeat(Math.max(3, Math.min(columns, 60)))) + "\n";
    case "html":
      return leaf((t as Tokens.HTML).text).replace(/\n?$/, "\n");
    case "def":
      return leaf(t.raw).replace(/\n?$/, "\n");
    default:
      return "raw" in t && typeof t.raw === "string" ? leaf(t.raw).replace(/\n?$/, "\n") : "";
  }
}

function blocks(tokens: readonly Token[], columns: number, tight: boolean): string {
  return tokens.map((t) => block(t, columns, tight)).join("");
}

/**
 * Render complete Markdown `text` for a colour terminal (output ends with a newline unless
 * empty). marked's lexer must be loaded ({@linkcode terminalMarkdown} loads it).
 */
export function renderMarkdown(text: string, opts: MarkdownOptions = {}): string {
  const clean = safeText(text);
  if (clean.trim() === "") return clean;
  const columns = opts.columns ?? 80;
  return lexBlocks(clean).map((t) => guarded(block(t, columns, false), opts.mask)).join("");
}

/** Streams Markdown to a terminal; see the module doc. */
export interface MarkdownStream {
  /** The next fragment; returns what to write. */
  push(chunk: string): string;
  /** The text ended: returns what finishes it (the last line ends with a newline). */
  end(): string;
  /** Something is drawn on the current line (the raw preview of an unfinished line). */
  midLine(): boolean;
}

/** Options of {@linkcode createMarkdownStream}. */
export interface MarkdownStreamOptions {
  /** Terminal columns now (default 80). */
  columns?: () => number;
  /** Terminal rows now: a table taller than this stays as written (default 24). */
  rows?: () => number;
  /** The session's secret masker: a block whose shown text it would mask is drawn masked, plain. */
  mask?: (text: string) => string;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})([^`]*)$/;
const TABLE_ROW = /^\s*\|/;

/**
 * A stream of Markdown lines for a colour terminal. The chunks must already
 * be terminal-safe (the screen's sanitizer runs first); tabs are shown as
 * four spaces. marked's lexer must be loaded ({@linkcode terminalMarkdown} loads it).
 */
export function createMarkdownStream(opts: MarkdownStreamOptions = {}): MarkdownStream {
  // Long by design: one closure-based object whose methods share the block state of
  // the stream; each method is short.
  const columns = () => Math.max(20, opts.columns?.() ?? 80);
  const maxRows = () => Math.max(4, (opts.rows?.() ?? 24) - 1);
  let partial = "";
  /** What of `partial` is drawn raw on the current line. */
  let shown = "";
  let fence: { char: string; len: number } | null = null;
  let codeWidth = 0;
  let tableLines: string[] = [];
  /** Rows the raw table preview takes, or -1 when it grew too tall to redraw. */
  let tableRows = 0;

  const rowsOf = (line: string) => Math.max(1, Math.ceil(displayWidth(line) / columns()));
  const erasePreview = () => {
    if (shown === "") return "";
    const up = rowsOf(shown) - 1;
    shown = "";
    return `\r${up > 0 ? `\x1b[${up}A` : ""}\x1b[J`;
  };

  const finishTable = (): string => {
    if (tableLines.length === 0) return "";
    const src = tableLines.join("\n") + "\n";
    const rows = tableRows;
    tableLines = [];
    tableRows = 0;
    if (rows < 0) return ""; // drawn raw, too tall to redraw
    const toks = lexBlocks(src);
    const drawn = guarded(blocks(toks, columns(), false), opts.mask);
    return `${rows > 0 ? `\x1b[${rows}A` : ""}\r\x1b[J${drawn}`;
  };

  const renderLine = (line: string): string => {
    if (fence) {
      const close = FENCE.exec(line);
      if (
        close && close[1]![0] === fence.char && close[1]!.length >= fence.len &&
        close[2]!.trim() === ""
      ) {
        fence = null;
        return "";
      }
      codeWidth = Math.max(codeWidth, Math.min(columns(), 100) - 1, displayWidth(line) + 2);
      return codeLine(line, codeWidth);
    }
    const open = FENCE.exec(line);
    if (open && !(open[1]![0] === "`" && open[2]!.includes("`"))) {
      fence = { char: open[1]![0]!, len: open[1]!.length };
      codeWidth = 0;
      return "";
    }
    if (line.trim() === "") return "\n";
    const indent = /^\s*/.exec(line)![0];
    const body = line.slice(indent.length);
    if (indent.length >= 2 && !/^([-*+]|\d{1,9}[.)])\s/.test(body)) {
      // A continuation line (of a list item, say): keep the indent, render inline.
      return indent + inline(lexInline(body)) + "\n";
    }
    return indent +
      blocks(lexBlocks(body), columns() - indent.length, true).replace(/\n(?=.)/g, `\n${indent}`);
  };

  const completeLine = (line: string): string => {
    let out = erasePreview();
    if (!fence && TABLE_ROW.test(line)) {
      tableLines.push(line);
      if (tableRows >= 0) {
        tableRows += rowsOf(line);
        if (tableRows > maxRows()) tableRows = -1;
      }
      return out + line + "\n";
    }
    out += finishTable();
    return out + guarded(renderLine(line), opts.mask);
  };

  return {
    push(chunk) {
      let out = "";
      let text = partial + chunk.replaceAll("\t", "    ");
      let nl: number;
      while ((nl = text.indexOf("\n")) >= 0) {
        out += completeLine(text.slice(0, nl));
        text = text.slice(nl + 1);
      }
      partial = text;
      if (partial !== "") {
        if (partial.startsWith(shown)) {
          out += partial.slice(shown.length);
        } else {
          out += erasePreview() + partial;
        }
        shown = partial;
      }
      return out;
    },
    end() {
      let out = "";
      if (partial !== "") out += completeLine(partial);
      partial = "";
      out += finishTable();
      fence = null;
      return out;
    },
    midLine: () => shown !== "",
  };
}

/**
 * Stream options measuring the real terminal (stdout), 80×24 when it cannot be measured;
 * resolved once `marked`'s lexer is loaded, so the renderer given them can draw.
 */
export async function terminalMarkdown(): Promise<MarkdownStreamOptions> {
  await loadMarkdownLexer();
  const size = () => {
    try {
      return Deno.consoleSize();
    } catch {
      return { columns: 80, rows: 24 };
    }
  };
  return { columns: () => size().columns, rows: () => size().rows };
}
