/**
 * Text and CSV renderings of a {@linkcode StatsReport}.
 *
 * @module
 */
import type { StatsReport, StatsRow } from "./stats.ts";
import { formatDuration, formatTokens, formatUsd } from "../display/numbers.ts";
import type { Style } from "../display/palette.ts";
import { formatTime } from "./format.ts";

/** The cost of a row in words: `$0.1234`, `unknown (no price for a/b)`, or both. */
export function describeCost(row: StatsRow): string {
  const { usd, complete, unpriced } = row.cost;
  const missing = unpriced.map((u) => u.model).join(", ");
  if (complete) return formatUsd(usd ?? 0);
  if (usd === null) return `unknown (no price for ${missing})`;
  const tokens = unpriced.reduce((n, u) => n + u.tokens, 0);
  return `${formatUsd(usd)} + unknown (no price for ${missing}: ${tokens} tokens)`;
}

function shortCost(row: StatsRow): string {
  const { usd, complete } = row.cost;
  if (usd === null) return "unknown";
  return complete ? formatUsd(usd) : `${formatUsd(usd)}+?`;
}

function table(header: string[], rows: string[][], rightFrom: number): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) =>
    r.map((c, i) => (i >= rightFrom ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ")
      .trimEnd();
  return [fmt(header), ...rows.map(fmt)].join("\n") + "\n";
}

/** One table row per group, then the total block. */
export function renderStatsText(report: StatsReport, style: Style): string {
  let out = "";
  const rows = report.rows;
  if (report.by === "tool") {
    out += table(
      ["TOOL", "CALLS", "FAILED", "ABORTED", "DENIED"],
      rows.map((r) => [
        r.key,
        String(r.tools.calls),
        String(r.tools.failed),
        String(r.tools.aborted),
        String(r.tools.denied),
      ]),
      1,
    );
  } else if (rows.length > 0) {
    const first = report.by === "session" ? ["SESSION", "MODEL"] : [report.by.toUpperCase()];
    out += table(
      [...first, "SESSIONS", "REQ", "TURNS", "TOOLS", "FAILED", "TOKENS", "COST", "WALL"].filter((
        h,
      ) => !(report.by === "session" && h === "SESSIONS")),
      rows.map((r) => [
        r.key,
        ...(report.by === "session" ? [r.models.join(",")] : [String(r.sessions)]),
        String(r.requests),
        String(r.turns),
        String(r.tools.calls),
        String(r.failures.count + r.tools.failed),
        formatTokens(r.tokens.total),
        shortCost(r),
        formatDuration(r.wall_ms),
      ]),
      report.by === "session" ? 2 : 1,
    );
  }
  if (rows.length > 0) out += "\n";
  out += renderTotal(report.total, style);
  if (report.skipped > 0) out += `  skipped: ${report.skipped} malformed line(s)\n`;
  if (report.pointersNotFollowed > 0) {
    out += `  not followed: the children of ${report.pointersNotFollowed} subagent pointer(s) ` +
      `past the first 1000 of a session\n`;
  }
  return out;
}

/** The detailed block of one row. */
export function renderTotal(t: StatsRow, style: Style): string {
  const lines: string[] = [];
  const span = t.first && t.last ? ` · ${formatTime(t.first)} → ${formatTime(t.last)}` : "";
  lines.push(
    style.bold(
      `${t.key}: ${t.sessions} session(s) · ${t.files} file(s) · ${t.records} record(s)${span}`,
    ),
  );
  const lat = t.latency_ms;
  lines.push(
    `  requests: ${t.requests} · turns ${t.turns}` +
      (lat
        ? ` · latency p50 ${formatDuration(lat.p50)} · p95 ${formatDuration(lat.p95)} · max ${
          formatDuration(lat.max)
        }`
        : ""),
  );
  const classes = t.failures.by_class.map((c) => ` · ${c.label} × ${c.count}`).join("");
  lines.push(
    `  request failures: ${t.failures.count} (${t.failures.retried} retried)${classes}`,
  );
  for (const f of t.failures.by) {
    lines.push(
      `    ${f.label} × ${f.count}${f.retried ? ` (${f.retried} retried)` : ""}${
        f.error_message ? `: ${f.error_message}` : ""
      }`,
    );
  }
  const tl = t.tools;
  lines.push(
    `  tool calls: ${tl.calls} · failed ${tl.failed} · aborted ${tl.aborted} · denied ${tl.denied}`,
  );
  for (const x of tl.by) {
    lines.push(
      `    ${x.name}: ${x.calls} call(s), ${x.failed} failed, ${x.aborted} aborted, ${x.denied} denied`,
    );
  }
  const ap = t.approvals;
  lines.push(`  approvals: allow ${ap.allow} · deny ${ap.deny} · forbidden ${ap.forbidden}`);
  lines.push(`  aborts: ${t.aborts.count}`);
  for (const a of t.aborts.reasons) lines.push(`    ${a.reason} × ${a.count}`);
  const c = t.compactions;
  lines.push(
    `  compactions: ${c.count} (completed ${c.completed}, failed ${c.failed}, aborted ${c.aborted})`,
  );
  lines.push(`  subagents: ${t.subagents}`);
  const k = t.tokens;
  lines.push(
    `  tokens: cache read ${k.cache_read} · cache write (uncached input) ${k.cache_write} · output ${k.output} · total ${k.total}`,
  );
  const cost = describeCost(t);
  lines.push(`  cost: ${t.cost.complete ? cost : style.yellow(cost)}`);
  const busy = lat ? ` (in requests ${formatDuration(lat.sum)})` : "";
  lines.push(`  wall time: ${formatDuration(t.wall_ms)}${busy}`);
  return lines.join("\n") + "\n";
}

const CSV_COLUMNS = [
  "key",
  "sessions",
  "files",
  "records",
  "first",
  "last",
  "wall_ms",
  "requests",
  "turns",
  "failed_requests",
  "retried_requests",
  "tool_calls",
  "tool_failed",
  "tool_aborted",
  "tool_denied",
  "approvals_allow",
  "approvals_deny",
  "approvals_forbidden",
  "aborts",
  "compactions",
  "compactions_completed",
  "subagents",
  "cache_read",
  "cache_write",
  "output_tokens",
  "total_tokens",
  "cost_usd",
  "cost_complete",
  "unpriced_models",
  "latency_p50_ms",
  "latency_p95_ms",
  "latency_max_ms",
  "models",
];

function csvField(v: unknown): string {
  const s = v === null || v === undefined ? "" : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

function csvRow(r: StatsRow): string {
  const values = [
    r.key,
    r.sessions,
    r.files,
    r.records,
    r.first,
    r.last,
    r.wall_ms,
    r.requests,
    r.turns,
    r.failures.count,
    r.failures.retried,
    r.tools.calls,
    r.tools.failed,
    r.tools.aborted,
    r.tools.denied,
    r.approvals.allow,
    r.approvals.deny,
    r.approvals.forbidden,
    r.aborts.count,
    r.compactions.count,
    r.compactions.completed,
    r.subagents,
    r.tokens.cache_read,
    r.tokens.cache_write,
    r.tokens.output,
    r.tokens.total,
    r.cost.usd,
    r.cost.complete,
    r.cost.unpriced.map((u) => u.model).join(" "),
    r.latency_ms?.p50,
    r.latency_ms?.p95,
    r.latency_ms?.max,
    r.models.join(" "),
  ];
  return values.map(csvField).join(",");
}

/** CSV: a header, one line per row, then the `total` line. */
export function renderStatsCsv(report: StatsReport): string {
  return [CSV_COLUMNS.join(","), ...report.rows.map(csvRow), csvRow(report.total)].join("\n") +
    "\n";
}
