/**
 * `trace export` written as it is read: a session of any size costs its
 * request summaries and one record at a time, never its whole text. Two
 * passes over the files: the outline ({@linkcode loadOutline}: the facts,
 * family and request summaries the page's head and chart need, items
 * dropped), then the items again, each rendered (and redacted) and handed to
 * `write` at once, in pieces: a long text slice by slice, escaped a slice at
 * a time (./_pieces.ts), never joined to its markup or copied whole. The
 * output is byte for byte what the whole-conversation renderers
 * (export_md.ts, export_html.ts, `JSON.stringify(conv, null, 2)`) make.
 *
 * @module
 */
import { basename } from "node:path";
import { type Conversation, type ConvItem, loadConversation } from "./conversation.ts";
import { htmlPage } from "./export_html.ts";
import { decodeEntities, loadMarkdownLexer } from "./markdown.ts";
import { MARKDOWN_MAX_CHARS, markdownToHtml } from "./markdown_html.ts";
import { maskedText } from "../protocol/record_mask.ts";
import { markdownHead, markdownItemPieces, subagentHeading } from "./export_md.ts";
import { type Piece, SLICE_CHARS, writePieces } from "./_pieces.ts";
import { redactConversation, redactItem } from "./redact.ts";
import type { OmniMessage } from "../protocol/types.ts";
import type { TraceProblem } from "../trace/reader.ts";
import { parseTraceFileName } from "../trace/paths.ts";
import { collectorEvery } from "../state/_gc.ts";
import type { SessionFiles } from "../trace/session_files.ts";

/** A format {@linkcode writeExport} writes. */
export type StreamFormat = "md" | "html" | "json";

/** The conversation of `session` (and of its subagents unless `children` is false) without items. */
export function loadOutline(
  session: SessionFiles,
  options: { children: boolean; onProblem?: (p: TraceProblem) => void; mask?: RecordMask },
): Promise<Conversation> {
  return loadConversation(session, {
    children: options.children,
    mask: options.mask,
    ...(options.onProblem ? { onProblem: options.onProblem } : {}),
    onItem: () => {},
  });
}

/** A transform of every record read (the current secrets masked). */
type RecordMask = ((message: OmniMessage) => OmniMessage) | undefined;

/** The masks of one export: secrets in records, and (unless `redact` is false) credentials in items. */
interface View {
  redact: boolean;
  mask?: RecordMask;
}

/** Read the items of `conv`'s files again, one by one (redacted unless `view.redact` is false). */
async function eachItem(
  conv: Conversation,
  view: View,
  fn: (it: ConvItem) => Promise<void>,
): Promise<void> {
  const redact = view.redact;
  const files = conv.session.files.map((path) => ({
    path,
    index: parseTraceFileName(basename(path))?.index ?? null,
  }));
  await loadConversation({ key: conv.session.session_id, files }, {
    family: false,
    children: false,
    mask: view.mask,
    onItem: (it) => fn(redact ? redactItem(it) : it),
  });
}

/**
 * The outline as it is rendered (redacted unless `redact` is false), its files' paths masked as
 * the records are: a file is named after its session's id, which may hold a value set as a secret
 * since (attack round 25 secrets B3). Only for what is shown: the items are read from `conv`.
 */
function shown(conv: Conversation, redact: boolean, mask?: RecordMask): Conversation {
  const out = redact ? redactConversation(conv) : conv;
  if (mask === undefined) return out;
  const files = out.session.files.map((f) => maskedText(mask, f));
  return files.every((f, i) => f === out.session.files[i])
    ? out
    : { ...out, session: { ...out.session, files } };
}

async function writeMarkdown(
  conv: Conversation,
  opts: View,
  write: (text: string) => Promise<void>,
  sub: boolean,
): Promise<void> {
  const head = markdownHead(shown(conv, opts.redact, opts.mask));
  await write(sub ? "\n\n---\n\n" + subagentHeading(head) : head);
  let first = true;
  await eachItem(conv, opts, async (it) => {
    if (!first) await write("\n");
    await writePieces(markdownItemPieces(it), write);
    first = false;
  });
  for (const child of conv.subagents ?? []) await writeMarkdown(child, opts, write, true);
}

async function writeHtml(
  conv: Conversation,
  opts: View,
  write: (text: string) => Promise<void>,
): Promise<void> {
  await loadMarkdownLexer();
  const view = shown(conv, opts.redact, opts.mask);
  await write(htmlPage.head(view));
  const main = htmlPage.timeline(view, "");
  const safe = (it: ConvItem) => rejoinedMasked(it, opts.mask);
  await eachItem(conv, opts, (it) => writePieces(main.itemPieces(safe(it)), write));
  await write(main.end() + "</main>");
  const subs = conv.subagents ?? [];
  for (const [i, sub] of subs.entries()) {
    const subView = shown(sub, opts.redact, opts.mask);
    await write(htmlPage.subagentHead(subView, i === 0));
    const t = htmlPage.timeline(subView, `${subView.session.session_id}-`);
    await eachItem(sub, opts, (it) => writePieces(t.itemPieces(safe(it)), write));
    await write(t.end() + htmlPage.subagentEnd());
  }
  await write(htmlPage.tail(view, subs.length > 0));
}

/**
 * `it` as the page may show it: an answer whose rendered text (its Markdown's
 * markup gone: `**`, backticks, links) holds a secret is shown as that text,
 * masked. Masked as written, the markup had kept pieces of a value apart,
 * each too short to mask, and the page joined them again (attack round 24
 * secrets B5: `Md7Zr2**Kx9Wc4**Lp8Tn3` showed and copied whole).
 */
function rejoinedMasked(it: ConvItem, mask: RecordMask): ConvItem {
  if (mask === undefined || it.kind !== "assistant") return it;
  // A text too long for Markdown shows as itself (escaped plain text): no markup to take off, and
  // no rendered copy of tens of MB made to find that out.
  const shownText = it.text.length > MARKDOWN_MAX_CHARS
    ? it.text
    : decodeEntities(markdownToHtml(it.text).replace(/<[^>]*>/g, ""));
  const masked = maskedText(mask, shownText);
  return masked === shownText ? it : { ...it, text: literalMarkdown(masked) };
}

/**
 * `text` as Markdown that shows exactly it: every ASCII punctuation mark
 * escaped. The shown text put back as Markdown made markup of what the
 * model had escaped (`\*\*`), which joined the pieces once more (attack
 * round 25 secrets B1).
 */
function literalMarkdown(text: string): string {
  return text.replace(/[!-/:-@[-`{-~]/g, "\\$&");
}

/** `conv` and its subagents, depth first, as JSON.stringify visits them. */
function preorder(conv: Conversation, out: Conversation[] = []): Conversation[] {
  out.push(conv);
  for (const c of conv.subagents ?? []) preorder(c, out);
  return out;
}

/** A slice of a string value as JSON writes it, without the quotes (character by character). */
const jsonEscaped = (slice: string) => JSON.stringify(slice).slice(1, -1);

/**
 * `value` as `JSON.stringify(value, null, 2)` writes it, in pieces: a string
 * longer than {@linkcode SLICE_CHARS} is escaped slice by slice as it is
 * written, not stringified whole (see ./_pieces.ts). In the document, such a
 * string is a marker no trace text can hold (a fresh nonce) until it is cut there.
 */
function jsonPieces(value: unknown): Piece[] {
  const nonce = crypto.randomUUID();
  const long: string[] = [];
  const text = JSON.stringify(
    value,
    (_key, v) =>
      typeof v === "string" && v.length > SLICE_CHARS
        ? `penguin-long-${nonce}-${long.push(v) - 1}`
        : v,
    2,
  );
  // Cut with the marker's number captured: the JSON around, then a number, and so on.
  const parts = text.split(new RegExp(`"penguin-long-${nonce}-(\\d+)"`));
  return parts.flatMap((part, i): Piece[] =>
    i % 2 === 0 ? [part] : ['"', { text: long[Number(part)]!, map: jsonEscaped }, '"']
  );
}

async function writeJson(
  conv: Conversation,
  opts: View,
  write: (text: string) => Promise<void>,
): Promise<void> {
  const nodes = preorder(conv);
  // Each node's items become a marker no trace text can hold (a fresh nonce), written in place.
  const nonce = crypto.randomUUID();
  const withMarks = (c: Conversation, at: { i: number }): Conversation => {
    const mark = `penguin-items-${nonce}-${at.i++}`;
    const subs = c.subagents?.map((s) => withMarks(s, at));
    return {
      ...shown(c, opts.redact, opts.mask),
      items: mark as unknown as ConvItem[],
      ...(subs ? { subagents: subs } : {}),
    };
  };
  const text = JSON.stringify(withMarks(conv, { i: 0 }), null, 2) + "\n";
  const parts = text.split(new RegExp(`"penguin-items-${nonce}-\\d+"`));
  for (const [i, node] of nodes.entries()) {
    const before = parts[i]!;
    await write(before);
    const indent = before.slice(before.lastIndexOf("\n") + 1).match(/^ */)![0];
    const inner = indent + "  ";
    let n = 0;
    const indented = (slice: string) => slice.replaceAll("\n", "\n" + inner);
    await eachItem(node, opts, async (it) => {
      // A long string's escaping holds no line break: only the JSON around it is indented.
      const json = jsonPieces(it).map((p) =>
        typeof p === "string" ? { text: p, map: indented } : p
      );
      await writePieces([`${n++ === 0 ? "[\n" : ",\n"}${inner}`, ...json], write);
    });
    await write(n === 0 ? "[]" : `\n${indent}]`);
  }
  await write(parts[nodes.length]!);
}

/**
 * Write the export of `outline` (from {@linkcode loadOutline}) in `format`
 * to `write`, piece by piece; credentials redacted unless `redact` is false,
 * every record transformed by `mask` (the current secrets masked).
 */
export async function writeExport(
  outline: Conversation,
  format: StreamFormat,
  options: View,
  write: (text: string) => Promise<void>,
): Promise<void> {
  // A record of tens of MB leaves its slices behind (escaped, encoded), which V8 frees only in a
  // full collection: one every 32 MiB written (attack round 23 bounded B9: one 60 MB record took
  // an export to 460 MB, two to 650 MB).
  const collected = collectorEvery(32 * 1024 * 1024);
  const counted = async (text: string) => {
    await write(text);
    collected(text.length);
  };
  if (format === "md") return await writeMarkdown(outline, options, counted, false);
  if (format === "html") return await writeHtml(outline, options, counted);
  return await writeJson(outline, options, counted);
}
