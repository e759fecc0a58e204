/**
 * The lines of one `model_msg` record in `trace show` / `trace follow`: user
 * text prefixed `> `, dim thinking, tool calls with their preview and
 * arguments, tool outputs collapsed to their first and last 4 lines, images
 * and inline data as one line each.
 *
 * @module
 */
import type {
  ModelMsgEnvelope,
  ToolCallMessage,
  ToolCallOutputMessage,
} from "../protocol/types.ts";
import { collapseText } from "../display/collapse.ts";
import type { Style } from "../display/palette.ts";
import { escapeControls, safeText } from "../display/terminal_text.ts";
import { parseToolArgs, toolCallPreview } from "../display/tool_preview.ts";
import { builtinToolPreviews } from "../agent/tool_previews.ts";

/** How `trace show` says to see a collapsed output whole. */
export const FULL_HINT = "--verbose";

/** Longest tool-call preview line offline. */
const PREVIEW_MAX = 120;

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

function argLines(args: string, full: boolean): string[] {
  const a = parseToolArgs(args);
  if (!a) return collapseText(args, full, FULL_HINT);
  const out: string[] = [];
  for (const [k, v] of Object.entries(a)) {
    if (typeof v === "string" && v.includes("\n")) {
      out.push(`${k}: |`);
      for (const l of collapseText(v, full, FULL_HINT)) out.push(`  ${l}`);
    } else {
      out.push(`${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
    }
  }
  return out;
}

function toolCallLines(p: ToolCallMessage, c: MessageContext): string[] {
  const s = c.style;
  const id = p.tool_call_id;
  c.names.set(id, escapeControls(p.name));
  // Arguments are shown, never cleaned: control characters in them appear as \xNN.
  const preview = toolCallPreview(p.name, p.arguments, {
    final: true,
    max: PREVIEW_MAX,
    previews: builtinToolPreviews,
  });
  const lines = [
    s.cyan(`${c.tag(id)} ${preview}`),
    ...argLines(p.arguments, c.full).map((l) => s.dim(`  ${escapeControls(l)}`)),
  ];
  if (p.stop_reason !== "completed") lines.push(s.red(`  (call not dispatched: ${p.stop_reason})`));
  return lines;
}

function toolOutputLines(p: ToolCallOutputMessage, c: MessageContext): string[] {
  const s = c.style;
  const id = p.tool_call_id;
  const name = c.names.get(id) ?? "?";
  const out = safeText(p.output);
  const body = collapseText(out, c.full, FULL_HINT);
  const status = p.stop_reason === "completed" ? "" : ` ${s.red(`[${p.stop_reason}]`)}`;
  const images = Array.isArray(p.images) && p.images.length > 0
    ? ` [${p.images.length} image(s)]`
    : "";
  const gutter = `${c.tag(id)} ${name} ->`;
  if (body.length <= 1) return [`${s.cyan(gutter)}${status}${images} ${body[0] ?? ""}`];
  const count = s.dim(`(${out.split("\n").length} lines)`);
  return [`${s.cyan(gutter)}${status}${images} ${count}`, ...body.map((l) => `  │ ${l}`)];
}

/** The lines of one `model_msg` record. */
export function messageLines(msg: ModelMsgEnvelope, c: MessageContext): string[] {
  const s = c.style;
  const p = msg.payload;
  switch (p.type) {
    case "text": {
      const lines = safeText(p.text).split("\n");
      if (p.role === "user") {
        const who = p.sender ? `[${p.sender}] ` : "";
        return lines.map((l, i) => s.bold(i === 0 ? `> ${who}${l}` : `  ${l}`));
      }
      if (p.stop_reason !== "completed") lines.push(s.red(`[text ended: ${p.stop_reason}]`));
      return lines;
    }
    case "thinking": {
      const t = safeText(p.thinking);
      if (t === "") return [s.dim("(thinking: encrypted or empty)")];
      return t.split("\n").map((l) => s.dim(l));
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
