/**
 * Static rendering of complete messages (the history re-rendered on
 * `chat --resume`), in the same look as the live stream: `> ` user input,
 * dim thinking, cyan tool calls, `->` output gutters (collapsed on request),
 * and a dim ` [<stop_reason>]` marker on segments that did not complete.
 *
 * @module
 */
import { goalRoundOf } from "../../protocol/goal_round_marker.ts";
import type { OmniMessage } from "../../protocol/types.ts";
import { abortLabel, approvalLabel, goalRoundLabel } from "../../display/labels.ts";
import { type CallNumbers, callNumberTag, createCallNumbers } from "../../display/call_numbers.ts";
import { paint, type Palette } from "../../display/palette.ts";
import { collapseLines, elidedLabel } from "../../display/collapse.ts";
import { escapeControls, safeText } from "../../display/terminal_text.ts";
import { toolCallPreview, type ToolPreviews } from "../../display/tool_preview.ts";
import { type MarkdownOptions, renderMarkdown } from "./markdown.ts";
import { GUTTER, gutterLine, isDiffTool } from "./_gutter.ts";

/** Options of {@linkcode renderHistory}. */
export interface HistoryOptions {
  /** Colours (use `paletteFor(false)` for none). */
  palette: Palette;
  /** Collapse long tool outputs to head + marker + tail. */
  collapse: boolean;
  /** Render the model's answers as Markdown for a colour terminal (default: raw text). */
  markdown?: MarkdownOptions;
  /** How the tools' calls show (the tools' own previews; others the generic form). */
  toolPreviews: ToolPreviews;
  /**
   * The session's call numbers, given on in the order the calls appear
   * (default: a fresh numbering); the live renderer passes its own, so the
   * calls after the history go on from there.
   */
  numbers?: CallNumbers;
  /** How a collapsed output's marker says to see it whole (default `/verbose`). */
  fullOutputHint?: (id: string) => string | undefined;
  /** Told of each output shown collapsed, with its full text (to expand it later). */
  onCollapsed?: (output: CollapsedOutput) => void;
}

/** A tool output the history showed collapsed. */
export interface CollapsedOutput {
  /** Its call id. */
  id: string;
  /** Its header: `[#n] <tool>`. */
  label: string;
  /** The output whole. */
  text: string;
  /** Its lines are a diff (coloured). */
  diff: boolean;
}

/** The body of a `[user_steering]` block, or null when `text` is not one. */
export function steeringBody(text: string): string | null {
  const m = /^\[user_steering\]\n([\s\S]*?)\n?\[\/user_steering\]\s*$/.exec(text);
  return m ? m[1]! : null;
}

/** The round number of a goal-round input, or null when `text` is not one. */
export const goalRound: (text: string) => number | null = goalRoundOf;

/** The `↪ user: ` lines of a delivered steering message. */
export function steeringLines(body: string, p: Palette): string {
  return safeText(body).split("\n").map((l) => `${paint(p.magenta, `↪ user: ${l}`, p)}\n`).join("");
}

/**
 * The lines of a complete output under its call: behind the gutter (diff
 * lines coloured when `diff`), after a `<label> ->` header unless `under`
 * (its call line is right above), collapsed on request.
 */
export function outputLines(
  output: string,
  images: number,
  label: string,
  collapse: boolean,
  p: Palette,
  opts: { under?: boolean; diff?: boolean; hint?: string; onCollapsed?: () => void } = {},
): string {
  let lines = safeText(output).split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines = lines.slice(0, -1);
  const c = collapse ? collapseLines(lines) : { head: lines, hidden: 0, tail: [] };
  const diff = opts.diff ?? false;
  let out = opts.under ? "" : `${paint(p.dim, `${label} ->`, p)}\n`;
  out += c.head.map((l) => `${gutterLine(l, p, diff)}\n`).join("");
  if (c.hidden > 0) {
    out += `${paint(p.dim, `${GUTTER}${elidedLabel(c.hidden, opts.hint)}`, p)}\n`;
    opts.onCollapsed?.();
  }
  out += c.tail.map((l) => `${gutterLine(l, p, diff)}\n`).join("");
  for (let i = 0; i < images; i++) out += `${paint(p.dim, `${GUTTER}[image]`, p)}\n`;
  return out;
}

/** Render complete messages (partials and child messages are skipped) as text. */
export function renderHistory(messages: readonly OmniMessage[], opts: HistoryOptions): string {
  const p = opts.palette;
  const names = new Map<string, string>();
  const numbers = opts.numbers ?? createCallNumbers();
  const tagOf = (id: string) => callNumberTag(numbers.of(id));
  let out = "";
  /** The call whose line was drawn last (approval lines do not count): its output needs no header. */
  let lastCall: string | null = null;
  for (const msg of messages) {
    if (msg.origin && msg.origin.length > 0) continue;
    if (msg.type === "event_msg") {
      const e = msg.payload;
      if (e.type === "abort") out += `${paint(p.dim, abortLabel(e), p)}\n`;
      else if (e.type === "approval_decision" && (e.decision !== "allow" || e.by === "user")) {
        // An allow is worth a line only when a person gave it.
        out += `${
          paint(e.decision === "allow" ? p.green : p.red, approvalLabel(e.decision, e.reason), p)
        }\n`;
      }
      continue;
    }
    if (msg.type !== "model_msg") continue;
    const m = msg.payload;
    const marker = m.stop_reason !== "completed" ? paint(p.dim, ` [${m.stop_reason}]`, p) : "";
    switch (m.type) {
      case "text": {
        if (m.role === "assistant") {
          out += opts.markdown && m.text.trim() !== ""
            ? `${renderMarkdown(m.text, opts.markdown).replace(/\n$/, "")}${marker}\n`
            : `${safeText(m.text)}${marker}\n`;
          break;
        }
        const steer = steeringBody(m.text);
        const round = goalRound(m.text);
        if (steer !== null) out += steeringLines(steer, p);
        else if (round !== null) out += `${paint(p.dim, goalRoundLabel(round), p)}\n`;
        else if (m.sender === undefined) {
          out += `> ${safeText(m.text).split("\n").join("\n  ")}\n`;
        }
        break;
      }
      case "image_url":
        out += `> ${paint(p.dim, "[image]", p)}\n`;
        break;
      case "thinking":
        if (m.thinking !== "") out += `${paint(p.dim, safeText(m.thinking), p)}${marker}\n`;
        break;
      case "tool_call": {
        names.set(m.tool_call_id, escapeControls(m.name));
        const preview = toolCallPreview(m.name, m.arguments, {
          final: true,
          previews: opts.toolPreviews,
        }) ?? m.name;
        out += `${paint(p.cyan, `${tagOf(m.tool_call_id)} ${preview}`, p)}${marker}\n`;
        lastCall = m.tool_call_id;
        continue;
      }
      case "tool_call_output": {
        const name = names.get(m.tool_call_id);
        const tag = tagOf(m.tool_call_id);
        const label = name ? `${tag} ${name}` : tag;
        const diff = isDiffTool(names.get(m.tool_call_id));
        const output = m.output;
        const id = m.tool_call_id;
        out += outputLines(output, m.images?.length ?? 0, label, opts.collapse, p, {
          under: lastCall === id,
          diff,
          ...(opts.fullOutputHint?.(id) !== undefined ? { hint: opts.fullOutputHint(id)! } : {}),
          onCollapsed: () => opts.onCollapsed?.({ id, label, text: output, diff }),
        });
        lastCall = m.tool_call_id;
        continue;
      }
      default:
        break;
    }
    lastCall = null;
  }
  return out;
}
