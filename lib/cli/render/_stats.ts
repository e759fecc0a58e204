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

type Tally = { cache_read: number; cache_write: number; output: number };

/** The counters the steps below share. */
interface StatsState {
  now: () => number;
  style: StatsStyle;
  sessionTotal: number;
  childTotal: number;
  contextNow: number;
  contextAtStart: number;
  sessionElapsed: number;
  taskTokens: number;
  hasUsage: boolean;
  firstTs: number | null;
  lastEndTs: number | null;
  wallStart: number;
  compacting: boolean;
  compactionTokens: number;
  pendingCompaction: number;
  retry: { status: StopReason; n: number; error?: string; wait?: number } | null;
  retries: number;
  mcpBeginTs: number | null;
  /** Totals of the task (style "totals"): all sessions, and the main session's own. */
  all: Tally;
  main: Tally;
  turns: number;
  childUsage: boolean;
}

function add(to: Tally, c: Tally) {
  to.cache_read += c.cache_read;
  to.cache_write += c.cache_write;
  to.output += c.output;
}

function resetTask(s: StatsState) {
  for (const t of [s.all, s.main]) t.cache_read = t.cache_write = t.output = 0;
  s.turns = 0;
  s.childUsage = false;
  s.taskTokens = 0;
  s.hasUsage = false;
  s.firstTs = null;
  s.lastEndTs = null;
  s.compacting = false;
  s.compactionTokens = 0;
  s.pendingCompaction = 0;
  s.retry = null;
  s.retries = 0;
}

type EventOf<T extends string> = Extract<EventMsgEnvelope["payload"], { type: T }>;

/** Count a `token_usage` event (any session). */
function seenUsage(s: StatsState, e: EventOf<"token_usage">, nested: boolean) {
  add(s.all, e.request);
  if (nested) s.childUsage = true;
  else add(s.main, e.request);
  if (nested) {
    s.hasUsage = true;
    s.taskTokens += e.request.total;
    s.childTotal += e.request.total;
  } else if (s.compacting) {
    s.sessionTotal = e.session.total;
    s.compactionTokens += e.request.total;
    s.pendingCompaction += e.request.total;
  } else {
    s.hasUsage = true;
    s.sessionTotal = e.session.total;
    s.taskTokens += e.request.total;
    s.contextNow = e.request.total;
  }
}

/** Count a main-session `request_end`: turns, pending compaction tokens, the retry owed. */
function seenRequestEnd(s: StatsState, e: EventOf<"request_end">, msg: OmniMessage) {
  if (!s.compacting) {
    if (e.status === "completed") s.turns++;
    s.lastEndTs = tsOf(msg) ?? s.lastEndTs;
    if (s.pendingCompaction > 0) s.hasUsage = true;
    s.taskTokens += s.pendingCompaction;
    s.pendingCompaction = 0;
  }
  if (isRetryableStatus(e.status)) {
    s.retries++;
    s.retry = {
      status: e.status,
      n: e.attempt ?? s.retries,
      ...(e.error_message !== undefined ? { error: e.error_message } : {}),
      ...(e.retry_in_ms !== undefined ? { wait: e.retry_in_ms } : {}),
    };
  } else {
    s.retry = null;
    s.retries = 0;
  }
}

/** Account for one rendered message (see `Stats.seen`). */
function seen(s: StatsState, msg: OmniMessage) {
  if (s.firstTs === null) s.firstTs = tsOf(msg);
  if (msg.type !== "event_msg") return;
  const e = msg.payload;
  const nested = msg.origin !== undefined && msg.origin.length > 0;
  if (e.type === "token_usage") seenUsage(s, e, nested);
  else if (e.type === "request_end" && !nested) seenRequestEnd(s, e, msg);
}

/** The `[mcp]` line at the end of connecting. */
function mcpEndLine(s: StatsState, e: EventOf<"mcp_connect_end">, msg: EventMsgEnvelope) {
  const end = tsOf(msg);
  const fromResults = Math.max(0, ...e.results.map((r) => r.duration_ms));
  // Sources connect when the session opens, so the pair may be written at once:
  // the slowest server's own duration is then the better figure.
  const elapsed = Math.max(
    fromResults,
    end !== null && s.mcpBeginTs !== null ? end - s.mcpBeginTs : 0,
  );
  s.mcpBeginTs = null;
  return mcpEndLabel(e.status, e.results, elapsed);
}

/** The line for a main-session event that prints one (see `Stats.eventLine`). */
function eventLine(s: StatsState, msg: EventMsgEnvelope): string | null {
  const e = msg.payload;
  switch (e.type) {
    case "abort":
      s.retry = null;
      s.retries = 0;
      return abortLabel(e);
    case "compaction_begin":
      s.compacting = true;
      s.compactionTokens = 0;
      return compactionBeginLabel(e);
    case "compaction_end": {
      s.compacting = false;
      const used = s.compactionTokens;
      s.compactionTokens = 0;
      return compactionEndLabel(e, { total: s.sessionTotal + s.childTotal, used });
    }
    case "mcp_connect_begin":
      s.mcpBeginTs = tsOf(msg);
      return mcpBeginLabel(e.servers);
    case "mcp_connect_end":
      return mcpEndLine(s, e, msg);
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
}

/** The task ended: its `[stats]` line, or null when it saw no usage (see `Stats.endTask`). */
function endTask(s: StatsState): string | null {
  // The task's wall time: requests, tool runs and approval questions alike.
  const elapsed = Math.max(0, s.now() - s.wallStart);
  s.sessionElapsed += elapsed;
  let line: string | null = null;
  if (s.hasUsage && s.style.kind === "totals") {
    const price = s.style.price ?? null;
    line = totalsLine({
      turns: s.turns,
      input: s.all.cache_read + s.all.cache_write,
      cached: s.all.cache_read,
      output: s.all.output,
      elapsedMs: elapsed,
      ...(price ? { costUsd: costOf(s.main, price), costPartial: s.childUsage } : {}),
    });
  } else if (s.hasUsage) {
    line = statsLine({
      context: s.contextNow,
      contextDelta: s.contextNow - s.contextAtStart,
      tokens: s.sessionTotal + s.childTotal,
      tokensDelta: s.taskTokens,
      elapsedMs: s.sessionElapsed,
      elapsedDeltaMs: elapsed,
    });
    s.contextAtStart = s.contextNow;
  }
  resetTask(s);
  return line;
}

/** Create the counters. */
export function createStats(now: () => number, style: StatsStyle = { kind: "session" }): Stats {
  const s: StatsState = {
    now,
    style,
    sessionTotal: 0,
    childTotal: 0,
    contextNow: 0,
    contextAtStart: 0,
    sessionElapsed: 0,
    taskTokens: 0,
    hasUsage: false,
    firstTs: null,
    lastEndTs: null,
    wallStart: now(),
    compacting: false,
    compactionTokens: 0,
    pendingCompaction: 0,
    retry: null,
    retries: 0,
    mcpBeginTs: null,
    all: { cache_read: 0, cache_write: 0, output: 0 },
    main: { cache_read: 0, cache_write: 0, output: 0 },
    turns: 0,
    childUsage: false,
  };
  return {
    context: () => s.contextNow,
    beginTask() {
      resetTask(s);
      s.wallStart = now();
    },
    seen: (msg) => seen(s, msg),
    retryToAnnounce(at) {
      const retry = s.retry;
      if (retry === null || (at === "end" && retry.wait === undefined)) return null;
      const line = retryLabel(retry.status, retry.n, retry.error, retry.wait);
      s.retry = null;
      return line;
    },
    eventLine: (msg) => eventLine(s, msg),
    endTask: () => endTask(s),
    seed(messages) {
      for (const m of messages) {
        if (m.origin && m.origin.length > 0) continue;
        if (m.type === "event_msg" && m.payload.type === "token_usage") {
          s.sessionTotal = m.payload.session.total;
          s.contextNow = m.payload.request.total;
        }
      }
      s.contextAtStart = s.contextNow;
    },
  };
}
