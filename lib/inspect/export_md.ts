/**
 * Markdown rendering of a {@linkcode Conversation}, for pasting into an issue:
 * a facts table, the family, then each request with user text quoted,
 * thinking and tool outputs in `<details>` blocks, and tool arguments as JSON.
 *
 * @module
 */
import type { Conversation, ConvItem, LineItem } from "./conversation.ts";
import { formatDuration, formatTokens } from "../display/numbers.ts";
import {
  abortLabel,
  approvalLabel,
  compactionBeginLabel,
  compactionEndLabel,
  failedRequestLabel,
} from "../display/labels.ts";
import { argumentsBody, formatClock, formatTime, lineCount } from "./format.ts";
import { joinPieces, type Piece } from "./_pieces.ts";

/** The longest run of backticks in `text`. */
function longestBackticks(text: string): number {
  let longest = 0;
  for (let at = text.indexOf("`"); at !== -1; at = text.indexOf("`", at)) {
    const from = at;
    while (text.charCodeAt(at) === 0x60) at++;
    longest = Math.max(longest, at - from);
  }
  return longest;
}

/** `text` in a code fence longer than any backtick run in it. */
function fence(text: string, lang = ""): Piece[] {
  const f = "`".repeat(Math.max(3, longestBackticks(text) + 1));
  return [`${f}${lang}\n`, text, text.endsWith("\n") ? "" : "\n", `${f}\n`];
}

function escHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function inlineCode(text: string): string {
  const t = text.replace(/\n/g, " ");
  const ticks = t.includes("`") ? "``" : "`";
  return `${ticks}${ticks.length > 1 ? " " : ""}${t}${ticks.length > 1 ? " " : ""}${ticks}`;
}

function details(summary: string, body: Piece[]): Piece[] {
  return [`<details><summary>${escHtml(summary)}</summary>\n\n`, ...body, "\n</details>\n"];
}

/** Each line of a slice of a text after its first quoted (its first gets `> ` before it). */
const quoteLines = (slice: string) => slice.replaceAll("\n", "\n> ");

/** The Markdown of one timeline item. */
export function markdownItem(it: ConvItem): string {
  return joinPieces(markdownItemPieces(it));
}

/** The Markdown of one timeline item in pieces, a long text among them whole (see ./_pieces.ts). */
export function markdownItemPieces(it: ConvItem): Piece[] {
  switch (it.kind) {
    case "user": {
      const who = it.sender ? `User (${it.sender})` : "User";
      return [`**${who}:**\n\n> `, { text: it.text, map: quoteLines }, "\n"];
    }
    case "assistant":
      return [
        `**Assistant:**${
          it.stop_reason !== "completed" ? ` _(ended: ${it.stop_reason})_` : ""
        }\n\n`,
        it.text,
        "\n",
      ];
    case "thinking":
      return it.text === ""
        ? ["_(thinking: encrypted or empty)_\n"]
        : details(`Thinking (${lineCount(it.text)} lines)`, fence(it.text, "text"));
    case "tool_call": {
      const { body, json } = argumentsBody(it.arguments);
      const status = it.stop_reason !== "completed" ? ` _(not dispatched: ${it.stop_reason})_` : "";
      return [
        `**Tool call #${it.n}** ${inlineCode(it.preview)}${status}\n\n`,
        ...fence(body, json ? "json" : "text"),
      ];
    }
    case "tool_output": {
      const images = it.images.length > 0 ? `, ${it.images.length} image(s)` : "";
      return details(
        `Output of #${it.n} ${it.name} (${lineCount(it.output)} lines, ${it.stop_reason}${images})`,
        fence(it.output, "text"),
      );
    }
    default:
      return [markdownLine(it)];
  }
}

/** The Markdown of an item without a long text of its own. */
function markdownLine(it: LineItem): string {
  switch (it.kind) {
    case "approval":
      return `${escHtml(approvalLabel(it.decision))} (#${it.n})\n`;
    case "request_begin":
      return `### Request ${it.request} · ${formatClock(it.time)}\n`;
    case "request_end": {
      const took = it.latency_ms !== null ? ` · ${formatDuration(it.latency_ms)}` : "";
      if (it.status === "completed") return `_request ${it.request} completed${took}_\n`;
      return `**⚠ request ${it.request}** ${escHtml(failedRequestLabel(it))}${took}\n`;
    }
    case "abort":
      return `${escHtml(abortLabel(it))}\n`;
    case "compaction_begin":
      return `${escHtml(compactionBeginLabel(it))}\n`;
    case "compaction_end":
      return `${escHtml(compactionEndLabel(it))}\n`;
    case "subagent":
      return `**[subagent]** ${inlineCode(it.session_id)}\n`;
    case "image":
      return `[image] ${
        inlineCode(it.url.startsWith("data:") ? `${it.url.slice(0, 40)}…` : it.url)
      }\n`;
    case "data":
      return `[inline data: ${it.mime_type}, ${it.chars} base64 chars]\n`;
    case "tools":
      return `_tools: ${it.names.join(", ")}_\n`;
    case "context":
      return `---\n\n_new context after compaction: ${inlineCode(it.file)}_\n`;
    case "event":
      return `_[${it.type}]_ ${inlineCode(JSON.stringify(it.payload))}\n`;
  }
}

/**
 * The Markdown document's head for `conv`: the facts table and the family,
 * up to the first item. The document is this, then the items
 * ({@linkcode markdownItem}) joined by a blank line, then each subagent as
 * `\n\n---\n\n` and its own document, its heading "## Subagent session".
 */
export function markdownHead(conv: Conversation): string {
  const s = conv.session;
  const tokens = conv.requests.reduce(
    (acc, r) => {
      if (r.tokens) {
        acc.cr += r.tokens.cache_read;
        acc.cw += r.tokens.cache_write;
        acc.o += r.tokens.output;
        acc.t += r.tokens.total;
      }
      return acc;
    },
    { cr: 0, cw: 0, o: 0, t: 0 },
  );
  const rows: [string, string][] = [
    ["Model", inlineCode(`${s.provider}/${s.model_id}`)],
    ["Workspace", inlineCode(s.workspace ?? "?")],
    ["Started", s.started ? formatTime(s.started) : "?"],
    ["Ended", s.ended ? formatTime(s.ended) : "?"],
    [
      "Requests",
      `${conv.requests.length} · tokens ${
        formatTokens(tokens.t)
      } (cached ${tokens.cr}, uncached ${tokens.cw}, output ${tokens.o})`,
    ],
    ["Files", s.files.map((f) => inlineCode(f)).join("<br>")],
  ];
  if (s.source) rows.push(["Source", s.source]);
  let out = `# Session ${inlineCode(s.session_id)}\n\n| | |\n|---|---|\n`;
  out += rows.map(([k, v]) => `| ${k} | ${v.replace(/\|/g, "\\|")} |`).join("\n") + "\n\n";
  const fam = conv.family;
  const famLines: string[] = [];
  if (fam.parent) {
    famLines.push(`- ${s.lineage?.kind ?? "fork"} of ${inlineCode(fam.parent.session_id)}`);
  }
  for (const f of fam.forks) famLines.push(`- ${f.relation}: ${inlineCode(f.session_id)}`);
  for (const c of fam.children) famLines.push(`- subagent: ${inlineCode(c.session_id)}`);
  if (fam.more_children) famLines.push(`- and ${fam.more_children} more subagent pointer(s)`);
  if (famLines.length > 0) out += `**Family**\n\n${famLines.join("\n")}\n\n`;
  return out + "---\n\n";
}

/** The heading of a subagent's document (see {@linkcode markdownHead}). */
export function subagentHeading(head: string): string {
  return head.replace(/^# Session /, "## Subagent session ");
}

/** The Markdown document for `conv`. */
export function renderMarkdown(conv: Conversation): string {
  let out = markdownHead(conv) + conv.items.map(markdownItem).join("\n");
  // The subagent children come along, one section each.
  for (const sub of conv.subagents ?? []) {
    out += "\n\n---\n\n" + subagentHeading(renderMarkdown(sub));
  }
  return out;
}
