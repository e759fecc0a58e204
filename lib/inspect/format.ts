/**
 * Small formatting helpers shared by the inspect views: ANSI styles that
 * vanish when colour is off, token counts (`1.2k`), durations (`820ms`,
 * `2.3s`, `1m3s`), timestamps and the collapsed-output rule.
 *
 * @module
 */

/** ANSI styling, or identity functions when colour is off. */
export interface Style {
  /** Dim (thinking, metadata). */
  dim(s: string): string;
  /** Cyan (tool calls). */
  cyan(s: string): string;
  /** Green (approvals, success). */
  green(s: string): string;
  /** Red (denials, failures, aborts). */
  red(s: string): string;
  /** Yellow (retries, compaction, warnings). */
  yellow(s: string): string;
  /** Bold (headers). */
  bold(s: string): string;
}

const wrap = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;

/** A {@linkcode Style}: ANSI codes when `color` is true, plain text otherwise. */
export function makeStyle(color: boolean): Style {
  if (!color) {
    const id = (s: string) => s;
    return { dim: id, cyan: id, green: id, red: id, yellow: id, bold: id };
  }
  return {
    dim: wrap(2, 22),
    cyan: wrap(36, 39),
    green: wrap(32, 39),
    red: wrap(31, 39),
    yellow: wrap(33, 39),
    bold: wrap(1, 22),
  };
}

/** Token count in the CLI's short form: `950`, `1.2k`, `1.5M`. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1e6) return `${trim1(n / 1000)}k`;
  if (n < 1e9) return `${trim1(n / 1e6)}M`;
  return `${trim1(n / 1e9)}G`;
}

function trim1(x: number): string {
  const s = x >= 100 ? x.toFixed(0) : x.toFixed(1);
  return s.endsWith(".0") ? s.slice(0, -2) : s;
}

/** Duration in the CLI's short form: `820ms`, `2.3s`, `1m3s`, `2h5m`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return "-";
  if (ms < 0) ms = 0;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${trim1(ms / 1000)}s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60}s`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}

/** A USD amount: 4 decimals below $100, 2 above. */
export function formatUsd(usd: number): string {
  return `$${usd < 100 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

/** `2026-11-29 19:26:10Z` from an ISO timestamp (shown as given when unparseable). */
export function formatTime(iso: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z$/.exec(iso);
  return m ? `${m[1]} ${m[2]}Z` : iso;
}

/** `19:26:10.952` (time of day, UTC) from an ISO timestamp. */
export function formatClock(iso: string): string {
  const m = /T(\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?)/.exec(iso);
  return m ? m[1]! : iso;
}

/**
 * Parse an ISO-8601 timestamp to epoch milliseconds; the writer's canonical
 * `YYYY-MM-DDTHH:MM:SS.sssZ` form is parsed without `Date.parse`. NaN when
 * unparseable.
 */
export function parseTimestamp(s: string): number {
  if (
    s.length === 24 && s.charCodeAt(4) === 45 && s.charCodeAt(10) === 84 &&
    s.charCodeAt(19) === 46 && s.charCodeAt(23) === 90
  ) {
    const d = (i: number) => s.charCodeAt(i) - 48;
    const y = d(0) * 1000 + d(1) * 100 + d(2) * 10 + d(3);
    const mo = d(5) * 10 + d(6);
    const da = d(8) * 10 + d(9);
    const h = d(11) * 10 + d(12);
    const mi = d(14) * 10 + d(15);
    const se = d(17) * 10 + d(18);
    const ms = d(20) * 100 + d(21) * 10 + d(22);
    const t = Date.UTC(y, mo - 1, da, h, mi, se, ms);
    if (Number.isFinite(t)) return t;
  }
  return Date.parse(s);
}

/** Lines shown at each end of a collapsed output. */
export const COLLAPSE_KEEP = 4;

/**
 * Collapse `text` to its first 4 and last 4 lines with a `… (+N lines)`
 * marker in between; outputs of 9 lines or fewer are returned whole (never
 * hide fewer than 2 lines). Returns the lines to print.
 */
export function collapseLines(text: string, full: boolean): string[] {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  if (full || lines.length <= 2 * COLLAPSE_KEEP + 1) return lines;
  const hidden = lines.length - 2 * COLLAPSE_KEEP;
  return [
    ...lines.slice(0, COLLAPSE_KEEP),
    `… (+${hidden} lines)`,
    ...lines.slice(lines.length - COLLAPSE_KEEP),
  ];
}

/** The first line of `text`, cut to `max` characters with an ellipsis. */
export function firstLine(text: string, max = 120): string {
  const nl = text.indexOf("\n");
  const line = nl < 0 ? text : text.slice(0, nl);
  if (line.length > max) return line.slice(0, max - 1) + "…";
  return nl < 0 ? line : line + " …";
}

/** Cut `text` to `max` characters (one line: newlines shown as `⏎`). */
export function oneLine(text: string, max = 120): string {
  const flat = text.replace(/\r?\n/g, " ⏎ ");
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

// Terminal escape sequences and other control characters must not reach a
// terminal raw: one sanitizer serves the offline views and the live renderer.
export { escapeControls, safeText } from "./terminal_text.ts";

/** `n word(s)` with a plain plural. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
