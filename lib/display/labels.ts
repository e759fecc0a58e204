/**
 * The one-line labels of trace events, shared by the live renderer and the
 * offline views (`trace show`, `trace follow`): pairing tags, approvals,
 * aborts, retries, compactions, MCP connects, goal rounds and workspace
 * moves. Everything from the model, a tool or a provider is made
 * terminal-safe here.
 *
 * @module
 */
import { escapeControls, safeText } from "./terminal_text.ts";
import { formatDuration, formatTokens, plural, signed } from "./numbers.ts";
import { failureCause, failureFix, readFailure, requestFailurePrefix } from "../models/failure.ts";
import type { GoalFinishedEvent, McpConnectResult } from "../protocol/types.ts";

/** The last three characters of an id: the on-screen pairing number. */
export function short3(id: string): string {
  return escapeControls(id.slice(-3));
}

/**
 * `✓ [approved]`, `× [denied]` or `× [forbidden by policy]`, then ` <tag>`
 * when given, then ` — <reason>` when one is known.
 */
export function approvalLabel(decision: string, reason?: unknown, tag?: string): string {
  const label = decision === "allow"
    ? "✓ [approved]"
    : decision === "forbidden"
    ? "× [forbidden by policy]"
    : "× [denied]";
  const tagged = tag === undefined ? label : `${label} ${tag}`;
  const why = decision !== "allow" && typeof reason === "string"
    ? safeText(reason.trim()).replace(/\s+/g, " ")
    : "";
  return why === "" ? tagged : `${tagged} — ${why}`;
}

/**
 * `[abort]: <reason>` (or bare `[abort]` when no reason was given). When the
 * model request failed, the line ends with what to do: `… — <fix>`.
 */
export function abortLabel(p: { reason?: unknown }): string {
  const reason = typeof p.reason === "string" ? safeText(p.reason.trim()) : "";
  if (reason === "") return "[abort]";
  const prefix = requestFailurePrefix(reason);
  if (prefix === undefined) return `[abort]: ${reason}`;
  const facts = readFailure(undefined, reason);
  if (facts.class === "other") return `[abort]: ${reason}`;
  return `[abort]: ${prefix}: ${safeText(failureCause(facts))} — ${safeText(failureFix(facts))}`;
}

/**
 * `[retry] <cause>; retry #<n> in <wait>…` when the failed request ends (the
 * cause names the class, the host and the provider's message), or
 * `[retry] <cause>; sending retry #<n>…` when the wait is not known.
 */
export function retryLabel(
  status: string,
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

/** `[request <status>]: <error> (attempt N)`: a failed request the engine did not retry. */
export function requestFailedLabel(
  status: string,
  errorMessage?: unknown,
  attempt?: unknown,
): string {
  const err = typeof errorMessage === "string" && errorMessage !== ""
    ? `: ${safeText(errorMessage)}`
    : "";
  const n = attempt !== undefined ? ` (attempt ${attempt})` : "";
  return `[request ${safeText(status)}]${err}${n}`;
}

/** The fields of a failed `request_end` the labels read. */
export interface FailedRequest {
  /** Its status. */
  status: string;
  /** The provider's or penguin's error text. */
  error_message?: string | undefined;
  /** Its attempt number (1-based). */
  attempt?: number | undefined;
  /** Set when the engine retries after this wait. */
  retry_in_ms?: number | undefined;
}

/**
 * The line of a failed request: {@linkcode retryLabel} when the engine
 * retried it (the retry number is its attempt, else `retries`), else
 * {@linkcode requestFailedLabel}.
 */
export function failedRequestLabel(e: FailedRequest, retries = 1): string {
  return e.retry_in_ms !== undefined
    ? retryLabel(e.status, e.attempt ?? retries, e.error_message, e.retry_in_ms)
    : requestFailedLabel(e.status, e.error_message, e.attempt);
}

/** `[compaction] summarizing|discarding context (<reason>)…`. */
export function compactionBeginLabel(p: { mode: string; reason: string }): string {
  const verb = p.mode === "discard" ? "discarding" : "summarizing";
  return `[compaction] ${verb} context (${safeText(p.reason)})…`;
}

/** The compaction outcome line, with ` · tokens <total> (+<used>)` when it used tokens. */
export function compactionEndLabel(
  p: { mode: string; status: string; error_message?: string | undefined },
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
    const err = p.error_message ? ` (${safeText(p.error_message)})` : "";
    line = `[compaction] ${safeText(p.status)}${err}; keeping the current context`;
  }
  if (tokens && tokens.used > 0) {
    line += ` · tokens ${formatTokens(tokens.total)} (${signed(formatTokens(tokens.used))})`;
  }
  return line;
}

/** `[mcp] connecting MCP servers (a, b)…`. */
export function mcpBeginLabel(servers: readonly string[]): string {
  return `[mcp] connecting MCP servers (${safeText(servers.join(", "))})…`;
}

/** `[mcp] connected in 1.2s[; unavailable: name (error), …]`, or the interrupted form. */
export function mcpEndLabel(
  status: string,
  results: readonly Pick<McpConnectResult, "server" | "status" | "error">[],
  elapsedMs: number,
): string {
  if (status === "aborted") return "[mcp] connect interrupted — reconnects on the next run";
  const secs = (Math.max(0, elapsedMs) / 1000).toFixed(1);
  const failed = results.filter((r) => r.status !== "completed");
  const tail = failed.length === 0
    ? ""
    : `; unavailable: ${failed.map((r) => `${r.server} (${r.error ?? r.status})`).join(", ")}`;
  return `[mcp] connected in ${secs}s${safeText(tail)}`;
}

/** `[goal] round N`. */
export function goalRoundLabel(round: number): string {
  return `[goal] round ${round}`;
}

/** Why a goal ended, as its last line says it. */
function goalEndWords(e: Pick<GoalFinishedEvent, "outcome" | "reason" | "max_rounds">): string {
  switch (e.outcome) {
    case "complete":
      return "completed";
    case "blocked":
      return "blocked (see the final reply for what it needs)";
    case "budget_limited":
      return "stopped: token budget exhausted";
  }
  switch (e.reason) {
    case "round_cap":
      return e.max_rounds !== undefined
        ? `stopped: round cap of ${e.max_rounds} reached`
        : "stopped: round cap reached";
    case "interrupted":
      return "aborted: interrupted";
    case "max_turns":
      return "aborted: a round hit max turns";
    case "round_failed":
      return "aborted: a round failed";
    default:
      return "interrupted";
  }
}

/** `[goal] <why it ended> · N rounds · tokens X`. */
export function goalFinishedLabel(
  e: Pick<GoalFinishedEvent, "outcome" | "rounds" | "tokens_used" | "reason" | "max_rounds">,
): string {
  return `[goal] ${goalEndWords(e)} · ${plural(e.rounds, "round")} · tokens ${
    formatTokens(e.tokens_used)
  }`;
}

/**
 * The first line of a goal run: its round cap and token budget (`[goal] up to
 * 10 rounds · budget 500k tokens`), the tokens a continued goal already used,
 * and `hint` (how to change them) when given.
 */
export function goalStartLabel(
  o: { maxRounds: number; budget: number | undefined; used: number; hint?: string },
): string {
  const rounds = o.maxRounds > 0 ? `up to ${plural(o.maxRounds, "round")}` : "no round cap";
  const budget = o.budget !== undefined
    ? `budget ${formatTokens(o.budget)} tokens`
    : "no token budget";
  const used = o.used > 0 ? ` (${formatTokens(o.used)} used so far)` : "";
  const hint = o.hint !== undefined ? ` · ${o.hint}` : "";
  return `[goal] ${rounds} · ${budget}${used}${hint}`;
}

/** `[model switched] <model-id> (<provider>) → <model-id> (<provider>)`. */
export function modelSwitchedLabel(
  from: { provider: string; model_id: string },
  to: { provider: string; model_id: string },
): string {
  const pair = (p: { provider: string; model_id: string }) =>
    `${safeText(p.model_id)} (${safeText(p.provider)})`;
  return `[model switched] ${pair(from)} → ${pair(to)}`;
}

/** `[workspace moved] <from> → <to>`. */
export function workspaceMovedLabel(from: string, to: string): string {
  return `[workspace moved] ${safeText(from)} → ${safeText(to)}`;
}
