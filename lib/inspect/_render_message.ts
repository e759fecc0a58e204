/**
 * The lines of one `model_msg` record in `trace show` / `trace follow`: user
 * text prefixed `> `, dim thinking, tool calls with their preview and
 * arguments, tool outputs collapsed to their first and last 4 lines, images
 * and inline data as one line each.
 *
 * A record may hold tens of megabytes (an imported trace's lines go up to 64
 * MiB), so a text is never split whole: at most {@linkcode SHOWN_LINES}
 * lines (and {@linkcode SHOWN_CHARS} characters) of one text are sanitized
 * and shown, then one line says how many more were left out; the rest is
 * only counted. `trace show --json` and `trace export` show it whole.
 *
 * @module
 */
import type {
  ModelMsgEnvelope,
  ToolCallMessage,
  ToolCallOutputMessage,
} from "../protocol/types.ts";
import { collapseText, elidedLabel, HEAD_LINES, TAIL_LINES } from "../display/collapse.ts";
import type { Style } from "../display/palette.ts";
import { createSafeTextStream, escapeControls, safeText } from "../display/terminal_text.ts";
import { parseToolArgs, toolCallPreview } from "../display/tool_preview.ts";
import { builtinToolPreviews } from "../agent/tool_previews.ts";
import { MAX_NUMBERED_IDS } from "../display/call_numbers.ts";
import { forgetOldest } from "../protocol/forget_oldest.ts";
import { cutText } from "../protocol/short_text.ts";

/** How `trace show` says to see a collapsed output whole. */
export const FULL_HINT = "--verbose";

/** Longest tool-call preview line offline. */
const PREVIEW_MAX = 120;

/** Lines of one text (a message, thinking, an output shown whole) shown at most. */
export const SHOWN_LINES = 2000;
/** Characters of one text shown at most (the most text penguin records of one response). */
export const SHOWN_CHARS = 8 * 1024 * 1024;
/** Characters sanitized at a time (what one piece's sanitized text may cost stays small). */
const PIECE = 64 * 1024;

/** Length of the line break at `i` of `s` (`\n`, `\r\n`, a lone `\r`, as safeText reads them), else 0. */
function breakAt(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === 10) return 1;
  if (c === 13) return s.charCodeAt(i + 1) === 10 ? 2 : 1;
  return 0;
}

/** Lines of `s` from `from` on (one more than its line breaks), counted without splitting. */
function linesFrom(s: string, from: number): number {
  let n = 1;
  for (let i = from; i < s.length; i++) {
    const b = breakAt(s, i);
    if (b > 0) {
      n++;
      i += b - 1;
    }
  }
  return n;
}

/**
 * The raw start of `text` holding at most `lines` lines and `chars`
 * characters, and how many lines of `text` it leaves out (a line cut by
 * `chars` counts as left out); `text` itself is never split.
 */
function headOf(text: string, lines: number, chars: number): { head: string; more: number } {
  let n = 1;
  for (let i = 0; i < text.length; i++) {
    const b = breakAt(text, i);
    if (b === 0) {
      if (i < chars) continue;
      return { head: text.slice(0, i), more: linesFrom(text, i) };
    }
    if (n === lines) {
      const rest = i + b;
      return rest >= text.length
        ? { head: text, more: 0 }
        : { head: text.slice(0, i), more: linesFrom(text, rest) };
    }
    n++;
    i += b - 1;
  }
  return { head: text, more: 0 };
}

/** The raw end of `text`: its last `lines` lines, at most `chars` characters (a final break left off). */
function tailOf(text: string, lines: number, chars: number): string {
  let end = text.length;
  if (text.endsWith("\r\n")) end -= 2;
  else if (text.endsWith("\n") || text.endsWith("\r")) end -= 1;
  let n = 0;
  let i = end - 1;
  for (; i >= 0 && end - i <= chars; i--) {
    const c = text.charCodeAt(i);
    if ((c === 10 || c === 13) && ++n === lines) break;
    if (c === 10 && text.charCodeAt(i - 1) === 13) i--; // \r\n is one break
  }
  return text.slice(i + 1, end);
}

/**
 * `safeText(raw).split("\n")`, sanitized a piece at a time: the text built
 * for a piece is split before the next, so millions of replaced characters
 * never make one string of millions of parts.
 */
function safeLines(raw: string): string[] {
  const stream = createSafeTextStream();
  const lines: string[] = [];
  let partial: string[] = [];
  const take = (out: string) => {
    let from = 0;
    for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n", from)) {
      partial.push(out.slice(from, nl));
      lines.push(partial.join(""));
      partial = [];
      from = nl + 1;
    }
    if (from < out.length) partial.push(out.slice(from));
  };
  for (let i = 0; i < raw.length; i += PIECE) take(stream.push(raw.slice(i, i + PIECE)));
  take(stream.end());
  lines.push(partial.join(""));
  return lines;
}

/** The line saying how many lines of a text were left out. */
function leftOut(more: number, style: Style): string {
  return style.dim(`… ${more} more lines not shown (trace export or --json shows them)`);
}

/** The sanitized lines of `text`, bounded as the module doc says. */
function boundedLines(text: string, style: Style): string[] {
  const { head, more } = headOf(text, SHOWN_LINES, SHOWN_CHARS);
  const lines = safeLines(head);
  if (more > 0) lines.push(leftOut(more, style));
  return lines;
}

/**
 * A collapsed or whole (`full`) text as lines, as {@linkcode collapseText}
 * does for a sanitized text, within the bounds of the module doc; `lines`
 * counts all of `text` (a final line break counts one more, as before).
 */
function collapsedLines(
  text: string,
  full: boolean,
  style: Style,
  split: (raw: string) => string[] = safeLines,
): { body: string[]; lines: number } {
  const fits = full ? SHOWN_LINES : HEAD_LINES + TAIL_LINES + 1;
  const { head, more } = headOf(text, fits, SHOWN_CHARS);
  if (more === 0) {
    const all = split(head);
    const lines = all.length;
    if (all.length > 1 && all[all.length - 1] === "") all.pop();
    return { body: all, lines };
  }
  if (full) return { body: [...split(head), leftOut(more, style)], lines: linesFrom(text, 0) };
  const first = split(headOf(head, HEAD_LINES, SHOWN_CHARS).head);
  const last = split(tailOf(text, TAIL_LINES, SHOWN_CHARS)).slice(-TAIL_LINES);
  const lines = linesFrom(text, 0);
  const ended = breakAt(text, text.length - 1) > 0 ? 1 : 0; // the empty line after it is not shown
  const hidden = Math.max(0, lines - ended - first.length - last.length);
  return { body: [...first, elidedLabel(hidden, FULL_HINT), ...last], lines };
}

/** What rendering a message needs from the session renderer. */
export interface MessageContext {
  /** Colours. */
  style: Style;
  /** Show outputs and multi-line arguments whole. */
  full: boolean;
  /** Tool names by call id (filled by tool calls, read by their outputs). */
  names: Map<string, string>;
  /** The pairing tag of a call id. */
  tag(id: string): string;
}

/** Arguments up to this length are split whole (as they always were); longer ones are bounded. */
const ARGS_SPLIT_WHOLE = 1024 * 1024;

/** An argument's lines, raw (escaped by the caller, never cleaned). */
function rawLines(text: string, full: boolean, style: Style): string[] {
  if (text.length <= ARGS_SPLIT_WHOLE) return collapseText(text, full, FULL_HINT);
  return collapsedLines(text, full, style, (raw) => raw.split("\n")).body;
}

function argLines(args: string, full: boolean, style: Style): string[] {
  // Past ARGS_SPLIT_WHOLE the raw text, collapsed: not parsed into a copy of itself first.
  const a = args.length > ARGS_SPLIT_WHOLE ? null : parseToolArgs(args);
  if (!a) return rawLines(args, full, style);
  const out: string[] = [];
  for (const [k, v] of Object.entries(a)) {
    // A value of many lines, or one line past ARGS_SPLIT_WHOLE (shown whole, a 50 MB one took
    // `trace show` to 480 MB), is a block, collapsed unless shown in full.
    if (typeof v === "string" && (v.includes("\n") || v.length > ARGS_SPLIT_WHOLE)) {
      out.push(`${k}: |`);
      for (const l of rawLines(v, full, style)) out.push(`  ${l}`);
    } else {
      out.push(`${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
    }
  }
  return out;
}

/**
 * Characters of a tool's name or a call id a view keeps and shows (copied when cut): kept whole,
 * megabyte names took `trace show` to 881 MB (attack round 25 bounded C15).
 */
const SHOWN_NAME_CHARS = 256;

function toolCallLines(p: ToolCallMessage, c: MessageContext): string[] {
  const s = c.style;
  const id = cutText(p.tool_call_id, SHOWN_NAME_CHARS);
  c.names.set(id, escapeControls(cutText(p.name, SHOWN_NAME_CHARS)));
  // The oldest forgotten past a bound (attack round 24 bounded R9: `trace show` of 600,000
  // unanswered calls kept every name).
  forgetOldest(c.names, MAX_NUMBERED_IDS);
  // Arguments are shown, never cleaned: control characters in them appear as \xNN.
  const preview = toolCallPreview(cutText(p.name, SHOWN_NAME_CHARS), p.arguments, {
    final: true,
    max: PREVIEW_MAX,
    previews: builtinToolPreviews,
  });
  const lines = [
    s.cyan(`${c.tag(id)} ${preview}`),
    ...argLines(p.arguments, c.full, s).map((l) => s.dim(`  ${escapeControls(l)}`)),
  ];
  if (p.stop_reason !== "completed") lines.push(s.red(`  (call not dispatched: ${p.stop_reason})`));
  return lines;
}

function toolOutputLines(p: ToolCallOutputMessage, c: MessageContext): string[] {
  const s = c.style;
  const id = cutText(p.tool_call_id, SHOWN_NAME_CHARS);
  const name = c.names.get(id) ?? "?";
  const { body, lines } = collapsedLines(p.output, c.full, s);
  const status = p.stop_reason === "completed" ? "" : ` ${s.red(`[${p.stop_reason}]`)}`;
  const images = Array.isArray(p.images) && p.images.length > 0
    ? ` [${p.images.length} image(s)]`
    : "";
  const gutter = `${c.tag(id)} ${name} ->`;
  if (body.length <= 1) return [`${s.cyan(gutter)}${status}${images} ${body[0] ?? ""}`];
  const count = s.dim(`(${lines} lines)`);
  return [`${s.cyan(gutter)}${status}${images} ${count}`, ...body.map((l) => `  │ ${l}`)];
}

/** The lines of one `model_msg` record. */
export function messageLines(msg: ModelMsgEnvelope, c: MessageContext): string[] {
  const s = c.style;
  const p = msg.payload;
  switch (p.type) {
    case "text": {
      const lines = boundedLines(p.text, s);
      if (p.role === "user") {
        const who = p.sender ? `[${p.sender}] ` : "";
        return lines.map((l, i) => s.bold(i === 0 ? `> ${who}${l}` : `  ${l}`));
      }
      if (p.stop_reason !== "completed") lines.push(s.red(`[text ended: ${p.stop_reason}]`));
      return lines;
    }
    case "thinking": {
      const lines = boundedLines(p.thinking, s);
      if (lines.length === 1 && lines[0] === "") return [s.dim("(thinking: encrypted or empty)")];
      return lines.map((l) => s.dim(l));
    }
    case "inline_thinking":
      return [
        s.dim(`(inline thinking: ${p.mime_type}, ${p.data.length} base64 chars)`),
      ];
    case "tool_call":
      return toolCallLines(p, c);
    case "tool_call_output":
      return toolOutputLines(p, c);
    case "image_url": {
      const url = p.image_url;
      const shown = url.startsWith("data:")
        ? `${url.slice(0, url.indexOf(",") + 1)}… (${url.length} chars)`
        : url;
      return [`[image] ${safeText(shown)}`];
    }
    case "inline_data":
      return [`[inline data: ${p.mime_type}, ${p.data.length} base64 chars]`];
    default:
      return [s.dim(`[${safeText(String(p.type))}]`)];
  }
}
