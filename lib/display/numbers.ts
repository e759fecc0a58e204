/**
 * Numbers for humans, one rule for every view (live renderer, `trace show`,
 * `trace stats`, `trace export`, `sessions list`): token counts, durations
 * and USD amounts.
 *
 * @module
 */

function oneDecimal(v: number): string {
  const s = v.toFixed(1);
  return s.endsWith(".0") ? s.slice(0, -2) : s;
}

const UNITS: readonly [number, string][] = [[1e3, "k"], [1e6, "M"], [1e9, "B"]];

/**
 * Token counts: `950`, `1.2k`, `999.9k`, `1.5M`, `1.2B` (one decimal, a
 * trailing `.0` dropped; a value that rounds up to 1000 of a unit moves to
 * the next unit: 999 950 → `1M`). Negative counts (deltas) keep their sign.
 */
export function formatTokens(n: number): string {
  const abs = Math.abs(n);
  if (abs < 1000) return `${n}`;
  const sign = n < 0 ? "-" : "";
  for (let i = 0; i < UNITS.length; i++) {
    const [size, unit] = UNITS[i]!;
    const shown = oneDecimal(abs / size);
    if (Number(shown) < 1000 || i === UNITS.length - 1) return `${sign}${shown}${unit}`;
  }
  return `${n}`; // unreachable: the last unit always returns
}

/** Durations: `820ms`, `2.3s`, `1m3s`, `2h5m`; `-` when not a finite number; negatives read 0. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return "-";
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 59_950) return `${oneDecimal(ms / 1000)}s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60}s`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}

/** USD: `$0`, `$0.0021` (two significant digits under a cent), `$1.23`, `$123`. */
export function formatUsd(usd: number): string {
  if (usd === 0) return "$0";
  if (usd < 0.01) return `$${usd.toPrecision(2)}`;
  return `$${usd.toFixed(Math.round(usd * 100) < 10_000 ? 2 : 0)}`;
}

/** Prefix a formatted delta with `+` unless it is already negative. */
export function signed(formatted: string): string {
  return formatted.startsWith("-") ? formatted : `+${formatted}`;
}

/** `n word(s)` with a plain plural. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
