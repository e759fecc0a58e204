/**
 * Formatting helpers of the inspect views only: timestamps and one-line
 * cuts. Numbers, the palette, output collapsing and event labels are shared
 * with the live renderer and live in lib/display.
 *
 * @module
 */
import { parseToolArgs } from "../display/tool_preview.ts";

/**
 * How many lines `text` holds: its line breaks, and one more for a last line
 * without one (0 for ""). Counted in place: a text of millions of lines is
 * not split into as many strings.
 */
export function lineCount(text: string): number {
  if (text === "") return 0;
  let breaks = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) breaks++;
  return text.endsWith("\n") ? breaks : breaks + 1;
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

/** The first line of `text`, cut to `max` characters with an ellipsis. */
export function firstLine(text: string, max = 120): string {
  const nl = text.indexOf("\n");
  const line = nl < 0 ? text : text.slice(0, nl);
  if (line.length > max) return line.slice(0, max - 1) + "…";
  return nl < 0 ? line : line + " …";
}

/** `text` on one line with its newlines shown as `⏎`, cut to `max` characters. */
export function breaksMarked(text: string, max = 120): string {
  const flat = text.replace(/\r?\n/g, " ⏎ ");
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

/** Arguments longer than this are shown as they came, not parsed and indented again. */
export const INDENT_ARGUMENTS_MAX = 1024 * 1024;

/**
 * A tool call's arguments as an export shows them: indented JSON when they parse, else as they
 * came; past {@linkcode INDENT_ARGUMENTS_MAX} characters as they came (the parse and the indented
 * copy of 50 MB of arguments took an export past 300 MB).
 */
export function argumentsBody(raw: string): { body: string; json: boolean } {
  if (raw.length > INDENT_ARGUMENTS_MAX) return { body: raw, json: false };
  const args = parseToolArgs(raw);
  return args ? { body: JSON.stringify(args, null, 2), json: true } : { body: raw, json: false };
}
