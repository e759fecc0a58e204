/**
 * Pure formatting helpers of the terminal renderer: number and duration
 * abbreviations, pairing tags, the palette, and every fixed line the renderer
 * prints.
 *
 * @module
 */
import { escapeControls, safeText } from "../../inspect/terminal_text.ts";
import {
  failureCause,
  failureFix,
  readFailure,
  requestFailurePrefix,
} from "../../models/failure.ts";
import type {
  AbortEvent,
  ApprovalDecision,
  CompactionBeginEvent,
  CompactionEndEvent,
  GoalOutcome,
  McpConnectResult,
  StopReason,
} from "../../protocol/types.ts";

/** ANSI codes the renderer uses; the plain palette maps each to "". */
export interface Palette {
  /** Dim (thinking, gutters, notices). */
  dim: string;
  /** Cyan (tool call lines). */
  cyan: string;
  /** Green (approved). */
  green: string;
  /** Red (denied, forbidden). */
  red: string;
  /** Magenta (user steering). */
  magenta: string;
  /** Reset all attributes. */
  reset: string;
}

const ANSI: Palette = {
  dim: "\x1b[2m",
  cyan: "\x1b[36m",
  green: "\x1b[32m",
  red: "\x1b[31m",
  magenta: "\x1b[35m",
  reset: "\x1b[0m",
};

const PLAIN: Palette = { dim: "", cyan: "", green: "", red: "", magenta: "", reset: "" };

/** The palette for `color` on or off. */
export function paletteFor(color: boolean): Palette {
  return color ? ANSI : PLAIN;
}

/** Wrap `text` in `code` … reset (no-op with the plain palette). */
export function paint(code: string, text: string, p: Palette): string {
  return code === "" ? text : `${code}${text}${p.reset}`;
}

function oneDecimal(v: number): string {
  const s = v.toFixed(1);
  return s.endsWith(".0") ? s.slice(0, -2) : s;
}

/** Token counts for humans: `950`, `1.2k`, `1.5M`, `2B`. */
export function formatTokens(n: number): string {
  const abs = Math.abs(n);
  if (abs < 1000) return `${n}`;
  if (abs < 1_000_000) return `${oneDecimal(n / 1000)}k`;
  if (abs < 1_000_000_000) return `${oneDecimal(n / 1_000_000)}M`;
  return `${oneDecimal(n / 1_000_000_000)}B`;
}

/** Durations for humans: `820ms`, `2.3s`, `1m3s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = ms / 1000;
  if (s < 60) return `${oneDecimal(s)}s`;
  const whole = Math.round(s);
  return `${Math.floor(whole / 60)}m${whole % 60}s`;
}

/** Prefix a formatted delta with `+` unless it is already negative. */
export function signed(formatted: string): string {
  return formatted.startsWith("-") ? formatted : `+${formatted}`;
}

/** The last three characters of an id: the on-screen pairing number. */
export function short3(id: string): string {
  return escapeControls(id.slice(-3));
}

/**
 * The pairing tag of a tool call and its output: `[tool-653]`, or for a call
 * forwarded from a child session `[agent-f2a-tool-653]` (f2a = the last three
 * characters of the innermost child session id).
 */
export function callTag(toolCallId: string, origin?: readonly string[]): string {
  const tool = `tool-${short3(toolCallId)}`;
  const child = origin && origin.length > 0 ? origin[origin.length - 1]! : undefined;
  return child === undefined ? `[${tool}]` : `[agent-${short3(child)}-${tool}]`;
}

/** `✓ [approved]`, `× [denied]` or `× [forbidden by policy]`, then ` — <reason>` when one is known. */
export function approvalLabel(decision: ApprovalDecision, reason?: unknown): string {
  if (decision === "allow") return "✓ [approved]";
  const label = decision === "forbidden" ? "× [forbidden by policy]" : "× [denied]";
  const why = typeof reason === "string" ? safeText(reason.trim()).replace(/\s+/g, " ") : "";
  return why === "" ? label : `${label} — ${why}`;
}

/**
 * `[abort]: <reason>` (or bare `[abort]` when no reason was given). When the
 * model request failed, the line ends with what to do: `… — <fix>`.
 */
export function abortLabel(p: AbortEvent): string {
  const reason = typeof p.reason === "string" ? safeText(p.reason.trim()) : "";
  if (reason === "") return "[abort]";
  const prefix = requestFailurePrefix(reason);
  if (prefix === undefined) return `[abort]: ${reason}`;
  const facts = readFailure(undefined, reason);
  if (facts.class === "other") return `[abort]: ${reason}`;
  return `[abort]: ${prefix}: ${safeText(failureCause(facts))} — ${safeText(failureFix(facts))}`;
}

/** Statuses after which the engine retries a request. */
export function isRetryStatus(status: StopReason): boolean {
  return status === "failed" || status === "timeout" || status === "malformed";
}

/**
 * `[retry] <cause>; retry #<n> in <wait>…` when the failed request ends (the
 * cause names the class, the host and the provider's message), or
 * `[retry] <cause>; sending retry #<n>…` when the wait is not known.
 */
export function retryLabel(
  status: StopReason,
  retry: number,
  errorMessage?: string,
  waitMs?: number,
): string {
  const facts = readFailure(status, errorMessage);
  const cause = facts.class !== "other"
    ? safeText(failureCause(facts))
    : status === "timeout"
    ? "connection timed out"
    : status === "malformed"
    ? "response incomplete or unparseable"
    : "the model provider returned an error";
  const said = facts.class === "other" && facts.detail ? `: ${safeText(facts.detail)}` : "";
  return waitMs === undefined
    ? `[retry] ${cause}${said}; sending retry #${retry}…`
    : `[retry] ${cause}${said}; retry #${retry} in ${formatDuration(waitMs)}…`;
}

/** `[compaction] summarizing|discarding context (<reason>)…`. */
export function compactionBeginLabel(p: CompactionBeginEvent): string {
  const verb = p.mode === "discard" ? "discarding" : "summarizing";
  return `[compaction] ${verb} context (${p.reason})…`;
}

/** The compaction outcome line, with ` · tokens <total> (+<used>)` when it used tokens. */
export function compactionEndLabel(
  p: CompactionEndEvent,
  tokens?: { total: number; used: number },
): string {
  let line: string;
  if (p.status === "completed") {
    line = p.mode === "discard"
      ? "[compaction] done; old context discarded"
      : "[compaction] done; continuing with the summarized context";
  } else if (p.status === "aborted") {
    line = "[compaction] aborted; keeping the current context";
  } else {
    const err = p.error_message ? ` (${p.error_message})` : "";
    line = `[compaction] ${p.status}${err}; keeping the current context`;
  }
  if (tokens && tokens.used > 0) {
    line += ` · tokens ${formatTokens(tokens.total)} (${signed(formatTokens(tokens.used))})`;
  }
  return line;
}

/** `[mcp] connecting MCP servers (a, b)…`. */
export function mcpBeginLabel(servers: readonly string[]): string {
  return `[mcp] connecting MCP servers (${servers.join(", ")})…`;
}

/** `[mcp] connected in 1.2s[; unavailable: name (error), …]`, or the interrupted form. */
export function mcpEndLabel(
  status: string,
  results: readonly McpConnectResult[],
  elapsedMs: number,
): string {
  if (status === "aborted") return "[mcp] connect interrupted — reconnects on the next run";
  const secs = (Math.max(0, elapsedMs) / 1000).toFixed(1);
  const failed = results.filter((r) => r.status !== "completed");
  const tail = failed.length === 0
    ? ""
    : `; unavailable: ${failed.map((r) => `${r.server} (${r.error ?? r.status})`).join(", ")}`;
  return `[mcp] connected in ${secs}s${tail}`;
}

/** `[goal] round N`. */
export function goalRoundLabel(round: number): string {
  return `[goal] round ${round}`;
}

/** `[goal] <label> · N rounds · tokens X`. */
export function goalFinishedLabel(outcome: GoalOutcome, rounds: number, tokens: number): string {
  const label = outcome === "complete"
    ? "completed"
    : outcome === "blocked"
    ? "blocked (see the final reply for what it needs)"
    : outcome === "budget_limited"
    ? "stopped: token budget exhausted"
    : "interrupted";
  return `[goal] ${label} · ${rounds} round${rounds === 1 ? "" : "s"} · tokens ${
    formatTokens(tokens)
  }`;
}

/** The elision marker of a collapsed tool output; `hint` says how to see everything. */
export function elidedLabel(hidden: number, hint = "/verbose"): string {
  return `… ${hidden} more lines (${hint} for full output)`;
}

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

/** USD for humans: `$0.0123`, `$1.23`. */
export function formatUsd(usd: number): string {
  if (usd === 0) return "$0";
  if (usd < 0.01) return `$${usd.toPrecision(2)}`;
  return `$${usd.toFixed(usd < 100 ? 2 : 0)}`;
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
