/**
 * Markdown parsing shared by the terminal renderer and the HTML export:
 * `marked`'s lexer (GitHub-flavoured: tables, strikethrough) produces the
 * tokens; penguin's own renderers turn them into ANSI text or sanitized HTML.
 * No `marked` renderer is used, so raw HTML in the model's text is only ever
 * shown as text.
 *
 * `marked` loads on first use, not with this module (a `run` whose output is
 * not a colour terminal never renders Markdown): {@linkcode loadMarkdownLexer}
 * must have finished before the first {@linkcode lexBlocks} or
 * {@linkcode lexInline}.
 *
 * @module
 */
import type { Lexer, Token, Tokens } from "marked";
import { PenguinError } from "../protocol/errors.ts";

export type { Token, Tokens };

let lexerClass: typeof Lexer | undefined;

/** Load `marked`'s lexer (once); the lexing functions need it loaded. */
export async function loadMarkdownLexer(): Promise<void> {
  lexerClass ??= (await import("marked")).Lexer;
}

function gfmLexer(): Lexer {
  if (lexerClass === undefined) {
    throw new PenguinError(
      "runtime",
      "Cannot lex Markdown: marked's lexer is not loaded (call loadMarkdownLexer() first)",
    );
  }
  return new lexerClass({ gfm: true });
}

/** Block tokens of `text` (GFM). */
export function lexBlocks(text: string): Token[] {
  return gfmLexer().lex(text);
}

/** Inline tokens of one line of text (GFM). */
export function lexInline(text: string): Token[] {
  return gfmLexer().inlineTokens(text);
}

const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
};

/**
 * Decode the character references a token's text may hold (`&amp;`,
 * `&#39;`, `&#x27;`, and a few named ones); anything else stays as written.
 * The result is as untrusted as the input: sanitize or escape it afterwards.
 */
export function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,6});/g, (all, ref) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X"
        ? parseInt(ref.slice(2), 16)
        : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
        ? String.fromCodePoint(code)
        : all;
    }
    return NAMED[ref] ?? all;
  });
}
