/**
 * The merged batch report as one self-contained HTML page: inline CSS, no
 * script, no external resource (a Content-Security-Policy forbids any),
 * every string from the results files escaped (a task's reason may quote
 * the model).
 *
 * @module
 */
import type { BatchReport } from "./report.ts";
import { formatDuration, formatTokens, formatUsd } from "../display/numbers.ts";

const CSP = "default-src 'none'; style-src 'unsafe-inline'";

function esc(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

const STYLE = `body{font:14px system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}
th{background:#f4f4f4}td.n{text-align:right}.completed{color:#14710f}.failed,.started{color:#b00020}
.aborted{color:#a65e00}`;

function row(cells: string[], cls = ""): string {
  return `<tr${cls ? ` class="${cls}"` : ""}>${cells.join("")}</tr>`;
}

/** The report as an HTML page. */
export function reportHtml(r: BatchReport): string {
  const n = (x: number | string) => `<td class="n">${esc(String(x))}</td>`;
  const t = (x: string) => `<td>${esc(x)}</td>`;
  const counts = [
    ["completed", r.completed],
    ["failed", r.failed],
    ["aborted", r.aborted],
    ["interrupted", r.interrupted],
  ].map(([k, v]) => row([t(String(k)), n(v!)], String(k))).join("");
  const failures = r.failures.map((f) => row([n(f.count), t(f.reason), t(f.ids.join(", "))]))
    .join("");
  const tasks = r.by_task.map((k) =>
    row([
      t(k.id),
      `<td class="${esc(k.outcome)}">${esc(k.outcome)}</td>`,
      n(k.attempts),
      n(k.turns),
      n(formatTokens(k.tokens)),
      n(k.cost === null ? "-" : formatUsd(k.cost)),
      n(formatDuration(k.wall_ms)),
      t(k.session_id ?? ""),
      t(k.reason ?? ""),
    ])
  ).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="generator" content="penguin batch report">
<title>penguin batch report</title><style>${STYLE}</style></head><body>
<h1>Batch report</h1>
<p id="summary">${r.tasks} task(s) from ${r.files} results file(s) · tokens ${
    formatTokens(r.tokens.total)
  } · cost ${r.cost === null ? "unknown" : formatUsd(r.cost)} · wall time p50 ${
    formatDuration(r.wall_ms.p50)
  }, p95 ${formatDuration(r.wall_ms.p95)}</p>
<table id="counts"><tr><th>outcome</th><th>tasks</th></tr>${counts}</table>
${
    failures
      ? `<h2>Not completed, by reason</h2><table id="failures"><tr><th>tasks</th><th>reason</th><th>ids</th></tr>${failures}</table>`
      : ""
  }
<h2>Tasks</h2>
<table id="tasks"><tr><th>id</th><th>outcome</th><th>attempts</th><th>turns</th><th>tokens</th><th>cost</th><th>wall time</th><th>session</th><th>reason</th></tr>${tasks}</table>
</body></html>
`;
}
