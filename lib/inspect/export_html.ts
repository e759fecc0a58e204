/**
 * A self-contained HTML page for a {@linkcode Conversation}: inline CSS and
 * JS, no external resource (a Content-Security-Policy forbids any), every
 * trace string escaped; the model's answers rendered from Markdown by an
 * allowlist renderer (./markdown_html.ts: no raw HTML, no script, no event
 * handler, only http(s)/mailto links, images never loaded). It shows the
 * session facts, its family, a per-request token and latency chart (inline
 * SVG) and the conversation, with tool outputs and thinking in collapsed
 * `<details>`.
 *
 * @module
 */
import { esc, requestChart } from "./_chart.ts";
import type { Conversation, ConvItem, LineItem, Relative } from "./conversation.ts";
import { formatDuration, formatTokens } from "../display/numbers.ts";
import {
  abortLabel,
  approvalLabel,
  compactionBeginLabel,
  compactionEndLabel,
  failedRequestLabel,
} from "../display/labels.ts";
import { argumentsBody, formatClock, formatTime, lineCount } from "./format.ts";
import { markdownHtmlPieces } from "./markdown_html.ts";
import { joinPieces, type MappedText, type Piece } from "./_pieces.ts";

const CSS = `
:root{--bg:#fff;--fg:#1d1d1f;--mute:#6e6e73;--line:#e3e3e8;--user:#f0f6ff;--tool:#f6f6f8;--bad:#c62828;--ok:#2e7d32;--warn:#b26a00}
@media (prefers-color-scheme:dark){:root{--bg:#161618;--fg:#e8e8ed;--mute:#9a9aa0;--line:#2c2c30;--user:#1c2533;--tool:#1f1f23}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 system-ui,-apple-system,Segoe UI,sans-serif}
header,main,section,nav{max-width:1100px;margin:0 auto;padding:0 20px}
h1{font-size:20px;margin:20px 0 8px;word-break:break-all}h2{font-size:15px;margin:20px 0 8px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}dt{color:var(--mute)}dd{margin:0;word-break:break-all}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace}
.request{border-top:1px solid var(--line);padding:8px 0}.rhead{color:var(--mute);font-size:12px;margin:4px 0}
.rhead.bad{color:var(--bad)}.msg{margin:6px 0;padding:6px 10px;border-radius:6px}
.user{background:var(--user)}.who{font-size:11px;color:var(--mute);text-transform:uppercase;letter-spacing:.04em}
.text{white-space:pre-wrap;word-break:break-word}.call{background:var(--tool);padding:6px 10px;border-radius:6px;margin:6px 0}
.call .name{font-family:ui-monospace,monospace;font-weight:600}.args{color:var(--mute)}
details{margin:4px 0}summary{cursor:pointer;color:var(--mute);font-size:12.5px}details.out{border-left:3px solid var(--line);padding-left:8px}
details.out.bad{border-left-color:var(--bad)}.note{font-size:12.5px;margin:4px 0}.ok{color:var(--ok)}.bad{color:var(--bad)}.warn{color:var(--warn)}
.thinking pre{color:var(--mute)}.chart-wrap{overflow-x:auto}.chart .axis{stroke:var(--mute)}.chart .lbl{fill:var(--mute);font-size:10px}
.chart .hit{fill:transparent}.chart .bar:hover .hit{fill:rgba(127,127,127,.12)}.chart .failed{fill:var(--bad)}
.chart .latency{fill:none;stroke:var(--fg);stroke-width:1.2;opacity:.6}.chart .latency-dot{fill:var(--fg);opacity:.6}
.tools{display:flex;gap:8px;margin:10px 0}button{font:inherit;font-size:12px;padding:3px 10px;border:1px solid var(--line);background:var(--tool);color:var(--fg);border-radius:5px;cursor:pointer}
.md{word-break:break-word}.md>:first-child{margin-top:0}.md>:last-child{margin-bottom:0}.md p{margin:6px 0}
.md h1,.md h2,.md h3,.md h4,.md h5,.md h6{margin:10px 0 6px;line-height:1.3}.md h1{font-size:19px}.md h2{font-size:17px}.md h3{font-size:15px}.md h4,.md h5,.md h6{font-size:14px}
.md code,.md pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono","DejaVu Sans Mono",monospace;font-size:12.5px}
.md code{background:var(--tool);padding:1px 4px;border-radius:4px}.md pre{background:var(--tool);padding:8px 10px;border-radius:6px;overflow-x:auto;white-space:pre}.md pre code{background:none;padding:0}.md pre.md-plain{background:none;padding:0;white-space:pre-wrap}
.md blockquote{margin:6px 0;padding:2px 12px;border-left:3px solid var(--line);color:var(--mute)}
.md table{border-collapse:collapse;margin:6px 0}.md th,.md td{border:1px solid var(--line);padding:3px 8px}.md th{background:var(--tool)}
.md .al-right{text-align:right}.md .al-center{text-align:center}.md .al-left{text-align:left}.md .md-url,.md .md-img{color:var(--mute)}
img.shot{max-width:100%;border:1px solid var(--line);margin:4px 0}footer{max-width:1100px;margin:30px auto;padding:0 20px;color:var(--mute);font-size:12px}
`;

const JS = `
(function(){
  function all(open){document.querySelectorAll('main details').forEach(function(d){d.open=open;});}
  document.getElementById('expand-all').addEventListener('click',function(){all(true);});
  document.getElementById('collapse-all').addEventListener('click',function(){all(false);});
})();
`;

const CSP =
  "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

const IMAGE_DATA = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$/;

function statusClass(s: string): string {
  return s === "completed" ? "ok" : "bad";
}

/** `text` escaped, slice by slice when written (see ./_pieces.ts). */
function escaped(text: string): MappedText {
  return { text, map: esc };
}

/** The HTML of one item in pieces, a long text among them whole (see ./_pieces.ts). */
function renderItemPieces(it: ConvItem): Piece[] {
  switch (it.kind) {
    case "user":
      return [
        `<div class="msg user"><div class="who">user${
          it.sender ? ` · ${esc(it.sender)}` : ""
        }</div><div class="text">`,
        escaped(it.text),
        "</div></div>",
      ];
    case "assistant":
      return [
        `<div class="msg assistant"><div class="who">assistant${
          it.stop_reason !== "completed" ? ` · <span class="bad">${esc(it.stop_reason)}</span>` : ""
        }</div><div class="md">`,
        ...markdownHtmlPieces(it.text),
        "</div></div>",
      ];
    case "thinking":
      return it.text === "" ? [`<div class="note">(thinking: encrypted or empty)</div>`] : [
        `<details class="thinking"><summary>thinking · ${lineCount(it.text)} lines</summary><pre>`,
        escaped(it.text),
        "</pre></details>",
      ];
    case "tool_call": {
      const { body } = argumentsBody(it.arguments);
      return [
        `<div class="call" id="call-${esc(it.id)}"><span class="name">${esc(it.name)}</span> ${
          esc(it.preview.slice(it.name.length))
        } <span class="note">· #${it.n}${
          it.stop_reason !== "completed"
            ? ` · <span class="bad">not dispatched: ${esc(it.stop_reason)}</span>`
            : ""
        }</span><pre class="args">`,
        escaped(body),
        "</pre></div>",
      ];
    }
    case "tool_output": {
      const imgs = it.images.map((u) =>
        IMAGE_DATA.test(u)
          ? `<img class="shot" alt="tool output image" src="${esc(u)}">`
          : `<div class="note">[image ${esc(u.slice(0, 60))}…]</div>`
      ).join("");
      return [
        `<details class="out${it.stop_reason === "completed" ? "" : " bad"}" data-call="${
          esc(it.id)
        }"><summary>#${it.n} ${esc(it.name)} output · ${
          lineCount(it.output)
        } lines · <span class="${statusClass(it.stop_reason)}">${esc(it.stop_reason)}</span>${
          it.images.length ? ` · ${it.images.length} image(s)` : ""
        }</summary><pre>`,
        escaped(it.output),
        `</pre>${imgs}</details>`,
      ];
    }
    default:
      return [renderLine(it)];
  }
}

/** The HTML of an item without a long text of its own. */
function renderLine(it: LineItem): string {
  switch (it.kind) {
    case "approval":
      return `<div class="note ${it.decision === "allow" ? "ok" : "bad"}">${
        esc(approvalLabel(it.decision))
      } · #${it.n}</div>`;
    case "request_begin":
      return "";
    case "request_end": {
      const took = it.latency_ms !== null ? ` · ${formatDuration(it.latency_ms)}` : "";
      if (it.status === "completed") {
        return `<div class="note">request ${it.request} completed${took}</div>`;
      }
      return `<div class="note warn">request ${it.request} · ${
        esc(failedRequestLabel(it))
      }${took}</div>`;
    }
    case "abort":
      return `<div class="note bad">${esc(abortLabel(it))}</div>`;
    case "compaction_begin":
      return `<div class="note warn">${esc(compactionBeginLabel(it))}</div>`;
    case "compaction_end":
      return `<div class="note warn">${esc(compactionEndLabel(it))}</div>`;
    case "subagent":
      return `<div class="note">[subagent] <a href="#family">${esc(it.session_id)}</a></div>`;
    case "image":
      return `<div class="note">[image] ${
        esc(it.url.startsWith("data:") ? `${it.url.slice(0, 40)}…` : it.url)
      }</div>`;
    case "data":
      return `<div class="note">[inline data: ${
        esc(it.mime_type)
      }, ${it.chars} base64 chars]</div>`;
    case "tools":
      return `<div class="note">tools: ${esc(it.names.join(", "))}</div>`;
    case "context":
      return `<div class="note warn">new context after compaction · ${esc(it.file)}</div>`;
    case "event":
      return `<div class="note">[${esc(it.type)}] ${esc(JSON.stringify(it.payload))}</div>`;
  }
}

function relative(r: Relative): string {
  const where = r.files.length > 0
    ? r.files.map((f) => `<code>${esc(f)}</code>`).join(", ")
    : "<span class='note'>trace not found next to this one</span>";
  const id = `<code>${esc(r.session_id)}</code>`;
  const name = r.relation === "subagent" && r.files.length > 0
    ? `<a href="#subagent-${esc(r.session_id)}">${id}</a>`
    : id;
  return `<li>${esc(r.relation)}: ${name} — ${where}</li>`;
}

/** The facts and family entries of the page's header. */
function headerOf(conv: Conversation): { facts: [string, string][]; famItems: string[] } {
  const s = conv.session;
  const tok = { cr: 0, cw: 0, o: 0, t: 0 };
  for (const r of conv.requests) {
    if (!r.tokens) continue;
    tok.cr += r.tokens.cache_read;
    tok.cw += r.tokens.cache_write;
    tok.o += r.tokens.output;
    tok.t += r.tokens.total;
  }
  const facts: [string, string][] = [
    ["model", `${s.provider}/${s.model_id}`],
    ["workspace", s.workspace ?? "?"],
    ["started", s.started ? formatTime(s.started) : "?"],
    ["ended", s.ended ? formatTime(s.ended) : "?"],
    [
      "requests",
      `${conv.requests.length} · tokens ${
        formatTokens(tok.t)
      } (cache read ${tok.cr}, uncached ${tok.cw}, output ${tok.o})`,
    ],
    ["files", s.files.join("\n")],
  ];
  if (s.source) facts.push(["source", s.source]);
  if (s.imported_from) facts.push(["imported from", s.imported_from]);
  const fam = conv.family;
  const famItems = [
    ...(fam.parent ? [relative({ ...fam.parent, relation: "parent" })] : []),
    ...fam.forks.map(relative),
    ...fam.children.map(relative),
    ...(fam.more_children ? [`<li>and ${fam.more_children} more subagent pointer(s)</li>`] : []),
  ];
  return { facts, famItems };
}

/**
 * The page for `conv` in pieces, for writing it as its items are read:
 * `head` (everything before the first request section), then the
 * timeline's pieces (`timeline`), then for each subagent `subagentHead`,
 * its timeline and `subagentEnd`, then `tail`. Joined, they are
 * {@linkcode renderHtml}'s page.
 */
export const htmlPage = {
  head(conv: Conversation): string {
    const { facts, famItems } = headerOf(conv);
    return pageHead(conv, facts, famItems);
  },
  /** A timeline (ids `<prefix>req-<n>`): `item` (or `itemPieces`) per item in order, then `end`. */
  timeline(conv: Conversation, prefix: string): Timeline {
    return createTimeline(conv, prefix);
  },
  /** What goes between the main timeline and the first subagent (`first`), or between two. */
  subagentHead(sub: Conversation, first: boolean): string {
    return `${first ? `\n<div id="subagents">` : "\n"}<section class="subagent" id="subagent-${
      esc(sub.session.session_id)
    }"><h2>subagent session <code>${esc(sub.session.session_id)}</code></h2><p class="note">${
      esc(`${sub.session.provider}/${sub.session.model_id}`)
    } · ${sub.requests.length} request(s)</p>`;
  },
  subagentEnd(): string {
    return "</section>";
  },
  /** The end of the page (`subagents`: whether any subagent section was written). */
  tail(conv: Conversation, subagents: boolean): string {
    return `${subagents ? "</div>" : ""}
<footer>exported by penguin · ${conv.skipped_lines} malformed line(s) skipped</footer>
<script>${JS}</script>
</body></html>
`;
  },
};

/** The HTML page for `conv` (see the module doc). */
export function renderHtml(conv: Conversation): string {
  let out = htmlPage.head(conv);
  const main = htmlPage.timeline(conv, "");
  for (const it of conv.items) out += main.item(it);
  out += main.end() + "</main>";
  const subs = conv.subagents ?? [];
  subs.forEach((sub, i) => {
    out += htmlPage.subagentHead(sub, i === 0);
    const t = htmlPage.timeline(sub, `${sub.session.session_id}-`);
    for (const it of sub.items) out += t.item(it);
    out += t.end() + htmlPage.subagentEnd();
  });
  return out + htmlPage.tail(conv, subs.length > 0);
}

/** A timeline of a page, written item by item. */
interface Timeline {
  /** The HTML of the next item (and of the request section it opens). */
  item(it: ConvItem): string;
  /** The same in pieces, a long text among them whole (see ./_pieces.ts). */
  itemPieces(it: ConvItem): Piece[];
  /** What closes the timeline. */
  end(): string;
}

/** A timeline, one section per request (ids `<prefix>req-<n>`), in pieces. */
function createTimeline(conv: Conversation, prefix: string): Timeline {
  let cur = -1;
  let sections = 0;
  const open = (n: number): string => {
    const r = conv.requests[n - 1];
    // A request the outline has not seen (the file grew since) gets a bare heading.
    const head = n === 0
      ? "before the first request"
      : r === undefined
      ? `request ${n}`
      : `request ${n} · ${formatClock(r!.begin)}${
        r!.latency_ms !== null ? ` · ${formatDuration(r!.latency_ms)}` : ""
      }${r!.tokens ? ` · ${formatTokens(r!.tokens.total)} tokens` : ""}${
        r!.status && r!.status !== "completed" ? ` · ${r!.status}` : ""
      }${r!.compaction ? " · compaction" : ""}`;
    const bad = r && r.status !== null && r.status !== "completed" ? " bad" : "";
    return `${sections++ > 0 ? "\n" : ""}<section class="request" id="${
      esc(prefix)
    }req-${n}"><div class="rhead${bad}">${esc(head)}</div>`;
  };
  const itemPieces = (it: ConvItem): Piece[] => {
    let out = "";
    if (it.request !== cur) {
      if (cur >= 0) out += "</section>";
      cur = it.request;
      out += open(cur);
    }
    return [out, ...renderItemPieces(it)];
  };
  return {
    item: (it) => joinPieces(itemPieces(it)),
    itemPieces,
    end(): string {
      return cur >= 0 ? "</section>" : "";
    },
  };
}

function pageHead(
  conv: Conversation,
  facts: [string, string][],
  famItems: string[],
): string {
  const s = conv.session;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="penguin trace export">
<title>${esc(`penguin trace · ${s.session_id}`)}</title>
<style>${CSS}</style></head>
<body>
<header><h1>${esc(s.session_id)}</h1><dl class="facts">${
    facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v).replace(/\n/g, "<br>")}</dd>`).join("")
  }</dl></header>
<nav id="family"><h2>Session family</h2>${
    famItems.length
      ? `<ul>${famItems.join("")}</ul>`
      : "<p class='note'>no parent, forks or subagents</p>"
  }</nav>
<section id="chart"><h2>Requests</h2><div class="chart-wrap">${
    requestChart(conv.requests) || "<p class='note'>no requests</p>"
  }</div></section>
<section><details id="system-prompt"><summary>system prompt</summary><pre>${
    esc(s.system_prompt ?? "")
  }</pre></details>
<div class="tools"><button id="expand-all" type="button">expand all</button><button id="collapse-all" type="button">collapse all</button></div></section>
<main id="conversation">`;
}
