/**
 * The counting half of the renderer: token and context figures, elapsed
 * time, pending retries, and the one-line texts of events that depend on
 * them (`[stats]`, `[retry]`, `[compaction]`, `[mcp]`, `[abort]`, `[goal]`).
 *
 * Elapsed time of a task = its wall time, from `beginTask` to `endTask`
 * (requests, tool runs and approval questions alike). Child-session usage counts toward tokens, never
 * toward the context size.
 *
 * @module
 */
import type { EventMsgEnvelope, OmniMessage, StopReason } from "../../protocol/types.ts";
import {
  abortLabel,
  compactionBeginLabel,
  compactionEndLabel,
  goalFinishedLabel,
  mcpBeginLabel,
  mcpEndLabel,
  modelSwitchedLabel,
  retryLabel,
  workspaceMovedLabel,
} from "../../display/labels.ts";
import { isRetryableStatus } from "../../models/retry.ts";
import { statsLine, totalsLine } from "./_stats_line.ts";
import { costOf, type Price } from "../../inspect/pricing.ts";

/** How the `[stats]` line reads. */
export type StatsStyle =
  /** Session figures with per-task deltas (`penguin chat`). */
  | { kind: "session" }
  /** Totals of the one task: turns, tokens in/out/cached, time, cost (`penguin run`). */
  | { kind: "totals"; price?: Price | null };

/** The renderer's counters. */
export interface Stats {
  /** A task starts. */
  beginTask(): void;
  /** Account for one rendered message (any session). */
  seen(msg: OmniMessage): void;
  /**
   * The `[retry]` line owed now, if any: at a `request_end` that plans a
   * retry (it knows the wait), else at the next `request_begin`.
   */
  retryToAnnounce(at: "end" | "begin"): string | null;
  /** The line for a main-session event that prints one, else null. */
  eventLine(msg: EventMsgEnvelope): string | null;
  /** The task ended: its `[stats]` line, or null when it saw no usage. */
  endTask(): string | null;
  /** Seed the session figures from history (resume). */
  seed(messages: readonly OmniMessage[]): void;
  /** The context size of the last main-session request (0 before any). */
  context(): number;
}

const tsOf = (msg: OmniMessage): number | null => {
  const t = Date.parse(msg.timestamp);
  return Number.isFinite(t) ? t : null;
};

/** Create the counters. */
export function createStats(now: () => number, style: StatsStyle = { kind: "session" }): Stats {
  // Long by design: one closure-based object whose methods share the counters; each
  // method is short, and the counters are listed once at the top.
  let sessionTotal = 0;
  let childTotal = 0;
  let contextNow = 0;
  let contextAtStart = 0;
  let sessionElapsed = 0;
  let taskTokens = 0;
  let hasUsage = false;
  let firstTs: number | null = null;
  let lastEndTs: number | null = null;
  let wallStart = now();
  let compacting = false;
  let compactionTokens = 0;
  let pendingCompaction = 0;
  let retry: { status: StopReason; n: number; error?: string; wait?: number } | null = null;
  let retries = 0;
  let mcpBeginTs: number | null = null;
  /** Totals of the task (style "totals"): all sessions, and the main session's own. */
  const all = { cache_read: 0, cache_write: 0, output: 0 };
  const main = { cache_read: 0, cache_write: 0, output: 0 };
  let turns = 0;
  let childUsage = false;
  const add = (to: typeof all, c: { cache_read: number; cache_write: number; output: number }) => {
    to.cache_read += c.cache_read;
    to.cache_write += c.cache_write;
    to.output += c.output;
  };

  const resetTask = () => {
    for (const t of [all, main]) t.cache_read = t.cache_write = t.output = 0;
    turns = 0;
    childUsage = false;
    taskTokens = 0;
    hasUsage = false;
    firstTs = null;
    lastEndTs = null;
    compacting = false;
    compactionTokens = 0;
    pendingCompaction = 0;
    retry = null;
    retries = 0;
  };

  return {
    context: () => contextNow,
    beginTask() {
      resetTask();
      wallStart = now();
    },
    seen(msg) {
      if (firstTs === null) firstTs = tsOf(msg);
      if (msg.type !== "event_msg") return;
      const e = msg.payload;
      const nested = msg.origin !== undefined && msg.origin.length > 0;
      if (e.type === "token_usage") {
        add(all, e.request);
        if (nested) childUsage = true;
        else add(main, e.request);
        if (nested) {
          hasUsage = true;
          taskTokens += e.request.total;
          childTotal += e.request.total;
        } else if (compacting) {
          sessionTotal = e.session.total;
          compactionTokens += e.request.total;
          pendingCompaction += e.request.total;
        } else {
          hasUsage = true;
          sessionTotal = e.session.total;
          taskTokens += e.request.total;
          contextNow = e.request.total;
        }
      } else if (e.type === "request_end" && !nested) {
        if (!compacting) {
          if (e.status === "completed") turns++;
          lastEndTs = tsOf(msg) ?? lastEndTs;
          if (pendingCompaction > 0) hasUsage = true;
          taskTokens += pendingCompaction;
          pendingCompaction = 0;
        }
        if (isRetryableStatus(e.status)) {
          retries++;
          retry = {
            status: e.status,
            n: e.attempt ?? retries,
            ...(e.error_message !== undefined ? { error: e.error_message } : {}),
            ...(e.retry_in_ms !== undefined ? { wait: e.retry_in_ms } : {}),
          };
        } else {
          retry = null;
          retries = 0;
        }
      }
    },
    retryToAnnounce(at) {
      if (retry === null || (at === "end" && retry.wait === undefined)) return null;
      const line = retryLabel(retry.status, retry.n, retry.error, retry.wait);
      retry = null;
      return line;
    },
    eventLine(msg) {
      const e = msg.payload;
      switch (e.type) {
        case "abort":
          retry = null;
          retries = 0;
          return abortLabel(e);
        case "compaction_begin":
          compacting = true;
          compactionTokens = 0;
          return compactionBeginLabel(e);
        case "compaction_end": {
          compacting = false;
          const used = compactionTokens;
          compactionTokens = 0;
          return compactionEndLabel(e, { total: sessionTotal + childTotal, used });
        }
        case "mcp_connect_begin":
          mcpBeginTs = tsOf(msg);
          return mcpBeginLabel(e.servers);
        case "mcp_connect_end": {
          const end = tsOf(msg);
          const fromResults = Math.max(0, ...e.results.map((r) => r.duration_ms));
          // Sources connect when the session opens, so the pair may be written at once:
          // the slowest server's own duration is then the better figure.
          const elapsed = Math.max(
            fromResults,
            end !== null && mcpBeginTs !== null ? end - mcpBeginTs : 0,
          );
          mcpBeginTs = null;
          return mcpEndLabel(e.status, e.results, elapsed);
        }
        case "goal_finished":
          return goalFinishedLabel(e);
        case "workspace_moved":
          return workspaceMovedLabel(e.from, e.to);
        case "model_switched":
          return modelSwitchedLabel(
            { provider: e.previous_provider, model_id: e.previous_model_id },
            e,
          );
        default:
          return null;
      }
    },
    endTask() {
      // The task's wall time: requests, tool runs and approval questions alike.
      const elapsed = Math.max(0, now() - wallStart);
      sessionElapsed += elapsed;
      let line: string | null = null;
      if (hasUsage && style.kind === "totals") {
        const price = style.price ?? null;
        line = totalsLine({
          turns,
          input: all.cache_read + all.cache_write,
          cached: all.cache_read,
          output: all.output,
          elapsedMs: elapsed,
          ...(price ? { costUsd: costOf(main, price), costPartial: childUsage } : {}),
        });
      } else if (hasUsage) {
        line = statsLine({
          context: contextNow,
          contextDelta: contextNow - contextAtStart,
          tokens: sessionTotal + childTotal,
          tokensDelta: taskTokens,
          elapsedMs: sessionElapsed,
          elapsedDeltaMs: elapsed,
        });
        contextAtStart = contextNow;
      }
      resetTask();
      return line;
    },
    seed(messages) {
      for (const m of messages) {
        if (m.origin && m.origin.length > 0) continue;
        if (m.type === "event_msg" && m.payload.type === "token_usage") {
          sessionTotal = m.payload.session.total;
          contextNow = m.payload.request.total;
        }
      }
      contextAtStart = contextNow;
    },
  };
}
