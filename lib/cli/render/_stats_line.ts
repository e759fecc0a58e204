/**
 * The `[stats]` lines of the live renderer (`penguin chat`'s session figures,
 * `penguin run`'s task totals). Numbers, the palette and every other label
 * come from lib/display, shared with the offline views.
 *
 * @module
 */
import { formatDuration, formatTokens, formatUsd, signed } from "../../display/numbers.ts";

/** Figures of one `[stats]` line. */
export interface StatsFigures {
  /** Context size now (last main request total). */
  context: number;
  /** Change of the context size over the task (may be negative). */
  contextDelta: number;
  /** Session token total (children included). */
  tokens: number;
  /** Tokens this task used. */
  tokensDelta: number;
  /** Session elapsed time (sum of task times), ms. */
  elapsedMs: number;
  /** This task's elapsed time, ms. */
  elapsedDeltaMs: number;
}

/** `[stats] context 1.2k (+300) · tokens 5k (+1.2k) · 1m3s (+2.3s)`. */
export function statsLine(f: StatsFigures): string {
  return `[stats] context ${formatTokens(f.context)} (${signed(formatTokens(f.contextDelta))})` +
    ` · tokens ${formatTokens(f.tokens)} (${signed(formatTokens(f.tokensDelta))})` +
    ` · ${formatDuration(f.elapsedMs)} (${signed(formatDuration(f.elapsedDeltaMs))})`;
}

/** Figures of one `[stats]` totals line (`penguin run`). */
export interface TotalsFigures {
  /** Completed model requests of the main session. */
  turns: number;
  /** Input tokens (cached and uncached), subagents included. */
  input: number;
  /** Of `input`, served from the provider cache. */
  cached: number;
  /** Output tokens, subagents included. */
  output: number;
  /** Wall time of the task, ms. */
  elapsedMs: number;
  /** USD cost, when a price is known. */
  costUsd?: number;
  /** The cost covers only the main session (subagents used tokens too). */
  costPartial?: boolean;
}

/** `[stats] 3 turns · in 12.3k (8k cached) · out 450 · 4.2s · $0.0021`. */
export function totalsLine(f: TotalsFigures): string {
  let line = `[stats] ${f.turns} turn${f.turns === 1 ? "" : "s"} · in ${formatTokens(f.input)}` +
    (f.cached > 0 ? ` (${formatTokens(f.cached)} cached)` : "") +
    ` · out ${formatTokens(f.output)} · ${formatDuration(f.elapsedMs)}`;
  if (f.costUsd !== undefined) {
    line += ` · ${formatUsd(f.costUsd)}${
      f.costPartial ? " (main session; subagents unpriced)" : ""
    }`;
  }
  return line;
}
