/**
 * The model's Markdown as sanitized HTML, for the HTML export. `marked`'s
 * lexer parses (./markdown.ts); this module writes every element itself from
 * a fixed allowlist, so nothing from the model reaches the page as markup:
 *
 * - every piece of text is escaped (after its character references are
 *   decoded, so `&amp;` shows as `&`, and `&lt;script&gt;` as text);
 * - raw HTML in the Markdown (`<script>`, `<img onerror=…>`) is shown as
 *   escaped text, never as an element;
 * - no attribute comes from the model except a link's `href`, and only an
 *   `http:`, `https:` or `mailto:` one (or a `#fragment`); any other link
 *   (`javascript:`, `data:`, relative) is shown as its text and address;
 * - images are never loaded: they show as `[image: alt]` and their address;
 * - code (blocks and spans) is in `<code>`, literal (references stay as
 *   written), styled monospace by the page.
 *
 * A text over {@linkcode MARKDOWN_MAX_CHARS}, or one `marked` fails on (its
 * paragraph regex overflows V8's regexp stack on megabytes of short lines),
 * is shown as escaped plain text in a `<pre>`, so one answer never stops the
 * export.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import { esc } from "./_chart.ts";
import { decodeEntities, lexBlocks, type Token, type Tokens } from "./markdown.ts";
import { joinPieces, type Piece } from "./_pieces.ts";

/** Escaped text of a token: references decoded first, then escaped once. */
const text = (s: string) => esc(decodeEntities(s));

const SAFE_HREF = /^(?:https?:\/\/|mailto:|#)/i;

/** The href to keep for a link, or null when it may not be a link. */
function safeHref(raw: string): string | null {
  const href = decodeEntities(raw).trim();
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x20\x7f-\x9f]/.test(href)) return null;
  return SAFE_HREF.test(href) ? href : null;
}

function inline(tokens: readonly Token[] | undefined): string {
  let out = "";
  for (const t of tokens ?? []) out += inlineToken(t);
  return out;
}

function inlineToken(t: Token): string {
  switch (t.type) {
    case "strong":
      return `<strong>${inline((t as Tokens.Strong).tokens)}</strong>`;
    case "em":
      return `<em>${inline((t as Tokens.Em).tokens)}</em>`;
    case "del":
      return `<del>${inline((t as Tokens.Del).tokens)}</del>`;
    case "codespan":
      return `<code>${esc((t as Tokens.Codespan).text)}</code>`; // code is literal
    case "br":
      return "<br>";
    case "link": {
      const l = t as Tokens.Link;
      const href = safeHref(l.href);
      const body = inline(l.tokens);
      return href === null
        ? `${body} <span class="md-url">(${text(l.href)})</span>`
        : `<a href="${
          esc(href)
        }" rel="noopener noreferrer nofollow" referrerpolicy="no-referrer">${body}</a>`;
    }
    case "image": {
      const i = t as Tokens.Image;
      return `<span class="md-img">[image: ${text(i.text)}]</span> <span class="md-url">(${
        text(i.href)
      })</span>`;
    }
    case "text": {
      const x = t as Tokens.Text;
      return x.tokens ? inline(x.tokens) : text(x.text);
    }
    case "escape":
      return text((t as Tokens.Escape).text);
    case "html":
      return `<code class="md-html">${text((t as Tokens.HTML).text)}</code>`;
    default:
      return "raw" in t && typeof t.raw === "string" ? text(t.raw) : "";
  }
}

const ALIGN = new Set(["left", "right", "center"]);

function cellTag(
  tag: "th" | "td",
  cell: Tokens.TableCell,
  align: string | null | undefined,
): string {
  const cls = align && ALIGN.has(align) ? ` class="al-${align}"` : "";
  return `<${tag}${cls}>${inline(cell.tokens)}</${tag}>`;
}

function block(t: Token): string {
  switch (t.type) {
    case "space":
      return "";
    case "heading": {
      const h = t as Tokens.Heading;
      const n = Math.min(6, Math.max(1, Math.floor(h.depth)));
      return `<h${n}>${inline(h.tokens)}</h${n}>`;
    }
    case "paragraph":
      return `<p>${inline((t as Tokens.Paragraph).tokens)}</p>`;
    case "text": {
      const x = t as Tokens.Text;
      return x.tokens ? inline(x.tokens) : text(x.text);
    }
    case "code": {
      const c = t as Tokens.Code;
      const lang = c.lang ? ` data-lang="${text(c.lang.split(/\s/)[0] ?? "")}"` : "";
      return `<pre class="md-code"${lang}><code>${esc(c.text)}</code></pre>`;
    }
    case "blockquote":
      return `<blockquote>${blocks((t as Tokens.Blockquote).tokens)}</blockquote>`;
    case "list": {
      const l = t as Tokens.List;
      const start = l.ordered && typeof l.start === "number" && l.start !== 1
        ? ` start="${Math.floor(l.start)}"`
        : "";
      const items = l.items.map((it) => {
        const box = it.task ? (it.checked ? "☑ " : "☐ ") : "";
        return `<li>${box}${blocks(it.tokens.filter((x) => x.type !== "checkbox"))}</li>`;
      }).join("");
      return l.ordered ? `<ol${start}>${items}</ol>` : `<ul>${items}</ul>`;
    }
    case "table": {
      const tb = t as Tokens.Table;
      const head = tb.header.map((c, i) => cellTag("th", c, tb.align[i])).join("");
      const rows = tb.rows.map((r) =>
        `<tr>${r.map((c, i) => cellTag("td", c, tb.align[i])).join("")}</tr>`
      ).join("");
      return `<table class="md-table"><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`;
    }
    case "hr":
      return "<hr>";
    case "html":
      return `<pre class="md-html"><code>${text((t as Tokens.HTML).text)}</code></pre>`;
    case "def":
      return `<p>${text(t.raw)}</p>`;
    default:
      return "raw" in t && typeof t.raw === "string" ? `<p>${text(t.raw)}</p>` : "";
  }
}

function blocks(tokens: readonly Token[]): string {
  return tokens.map(block).join("");
}

/** Longest text rendered as Markdown; a longer one is shown as plain text. */
export const MARKDOWN_MAX_CHARS = 512 * 1024;

/** `markdown` as sanitized HTML, or as escaped plain text when too long or unparsable (see the module doc). */
export function markdownToHtml(markdown: string): string {
  return joinPieces(markdownHtmlPieces(markdown));
}

/**
 * {@linkcode markdownToHtml} in pieces: a text too long for Markdown is its
 * plain text escaped slice by slice when written (see ./_pieces.ts), never
 * escaped whole.
 */
export function markdownHtmlPieces(markdown: string): Piece[] {
  if (markdown.length > MARKDOWN_MAX_CHARS) return plainPieces(markdown);
  return [markdownHtmlShort(markdown)];
}

/** `text` as escaped plain text, in pieces. */
function plainPieces(text: string): Piece[] {
  return [`<pre class="md-plain">`, { text, map: esc }, "</pre>"];
}

/** `markdown` (at most {@linkcode MARKDOWN_MAX_CHARS}) as sanitized HTML. */
function markdownHtmlShort(markdown: string): string {
  try {
    return blocks(lexBlocks(markdown));
  } catch (err) {
    if (err instanceof PenguinError) throw err; // the lexer not loaded: penguin's own mistake
    return joinPieces(plainPieces(markdown));
  }
}
