// The accumulator behind `trace stats`: one Agg per row (session, group, total),
// updated record by record, and turned into a plain JSON row at the end.
import { costOf, type Price } from "./pricing.ts";
import { shortText } from "../protocol/short_text.ts";
import { type FailureClass, failureLabel, readFailure } from "../models/failure.ts";

/** Per tool. */
export interface ToolRow {
  /** Tool name. */
  name: string;
  /** Dispatched calls (complete tool_call with stop_reason completed). */
  calls: number;
  /** Outputs that ended failed, timeout, malformed or auth. */
  failed: number;
  /** Outputs that ended aborted (denied calls not included). */
  aborted: number;
  /** Calls the approval step denied or forbade. */
  denied: number;
}

/** One group of failed requests. */
export interface FailureRow {
  /** request_end status (a StopReason, as recorded). */
  status: string;
  /** The failure class read from the message (lib/models/failure.ts): `refused`, `dns`, `http`, … */
  class: FailureClass;
  /** Its short label: `connection refused`, `HTTP 503`, `DNS failure`, … (the status when unknown). */
  label: string;
  /** request_end error_message ("" when absent). */
  error_message: string;
  /** How many. */
  count: number;
  /** How many of them the engine retried (retry_in_ms present). */
  retried: number;
}

/** One finished stats row (also the JSON shape). */
export interface StatsRow {
  /** Row key: session id, day, provider/model, agent, tool, or "total". */
  key: string;
  /** Sessions that contributed. */
  sessions: number;
  /** Trace files that contributed. */
  files: number;
  /** Records counted. */
  records: number;
  /** First and last record time (ISO), null when none. */
  first: string | null;
  /** Last record time. */
  last: string | null;
  /** Sum over sessions of (last − first record time), ms. */
  wall_ms: number;
  /** request_begin count (every attempt, compaction requests included). */
  requests: number;
  /** Completed requests outside compactions (the turns the model took). */
  turns: number;
  /** Request latency from nearest-neighbour request_begin/request_end pairs, ms. */
  latency_ms: { count: number; p50: number; p95: number; max: number; sum: number } | null;
  /** Non-completed request_end records. */
  failures: {
    count: number;
    retried: number;
    /** Per failure label (`connection refused`, `HTTP 503`, …), most frequent first. */
    by_class: { label: string; class: FailureClass; count: number; retried: number }[];
    by: FailureRow[];
  };
  /** Tool calls. */
  tools: { calls: number; failed: number; aborted: number; denied: number; by: ToolRow[] };
  /** approval_decision counts. */
  approvals: { allow: number; deny: number; forbidden: number };
  /** abort events. */
  aborts: { count: number; reasons: { reason: string; count: number }[] };
  /** compaction_begin count and compaction_end statuses. */
  compactions: { count: number; completed: number; failed: number; aborted: number };
  /** subagent pointer events. */
  subagents: number;
  /** Sum of token_usage.request: cache_read, cache_write (uncached input), output, total. */
  tokens: { cache_read: number; cache_write: number; output: number; total: number };
  /** USD cost of the priced requests; `complete` false when some tokens had no price. */
  cost: {
    usd: number | null;
    complete: boolean;
    unpriced: { model: string; tokens: number; requests: number }[];
    prices: { model: string; source: "config" | "catalog" }[];
  };
  /** provider/model pairs seen. */
  models: string[];
}

const CAP = 200; // distinct failure messages / abort reasons kept per row

/** A mutable accumulator (plain data; update it with the functions below). */
export interface Agg {
  /** Row key. */
  key: string;
  sessions: number;
  files: number;
  records: number;
  first: number;
  last: number;
  wall: number;
  requests: number;
  turns: number;
  lat: Float64Array;
  latN: number;
  failures: Map<string, FailureRow>;
  tools: Map<string, ToolRow>;
  approvals: { allow: number; deny: number; forbidden: number };
  aborts: number;
  abortReasons: Map<string, number>;
  compactions: { count: number; completed: number; failed: number; aborted: number };
  subagents: number;
  tokens: { cache_read: number; cache_write: number; output: number; total: number };
  usd: number;
  unpriced: Map<string, { tokens: number; requests: number }>;
  prices: Map<string, "config" | "catalog">;
  models: Set<string>;
  /** Session / file the row was last touched in (to count each once). */
  sessionMark: number;
  fileMark: number;
  /** The stats run's pair number when this row last saw the current session's model. */
  pairMark: number;
  /** The current task's first and last working record time within this row (NaN: no task yet). */
  tStart: number;
  tLast: number;
}

/** A new accumulator for row `key`. */
export function newAgg(key: string): Agg {
  return {
    key,
    sessions: 0,
    files: 0,
    records: 0,
    first: Infinity,
    last: -Infinity,
    wall: 0,
    requests: 0,
    turns: 0,
    lat: new Float64Array(64),
    latN: 0,
    failures: new Map(),
    tools: new Map(),
    approvals: { allow: 0, deny: 0, forbidden: 0 },
    aborts: 0,
    abortReasons: new Map(),
    compactions: { count: 0, completed: 0, failed: 0, aborted: 0 },
    subagents: 0,
    tokens: { cache_read: 0, cache_write: 0, output: 0, total: 0 },
    usd: 0,
    unpriced: new Map(),
    prices: new Map(),
    models: new Set(),
    sessionMark: -1,
    fileMark: -1,
    pairMark: -1,
    tStart: NaN,
    tLast: NaN,
  };
}

/** Count one record at time `ts` (ms). */
export function aggSeen(a: Agg, ts: number): void {
  a.records++;
  if (!Number.isFinite(ts)) return;
  if (ts < a.first) a.first = ts;
  if (ts > a.last) a.last = ts;
}

/**
 * A task starts at `ts` (a prompt): the one before it ends at its last
 * working record, and its span counts as wall time. Wall time is active
 * time: the gaps between tasks (a person away, a session resumed days
 * later) are not in it.
 */
export function aggTaskStart(a: Agg, ts: number): void {
  if (!Number.isFinite(ts)) return;
  aggTaskEnd(a);
  a.tStart = a.tLast = ts;
}

/** A record of the current task's work at `ts` (it extends the task). */
export function aggWork(a: Agg, ts: number): void {
  if (Number.isFinite(a.tStart) && ts > a.tLast) a.tLast = ts;
}

function aggTaskEnd(a: Agg): void {
  if (Number.isFinite(a.tStart) && a.tLast >= a.tStart) a.wall += a.tLast - a.tStart;
  a.tStart = a.tLast = NaN;
}

/** Add one latency sample (ms). */
export function aggLatency(a: Agg, ms: number): void {
  if (a.latN === a.lat.length) {
    const grown = new Float64Array(a.lat.length * 2);
    grown.set(a.lat);
    a.lat = grown;
  }
  a.lat[a.latN++] = ms;
}

/**
 * The tool row for `name`; past {@linkcode CAP} tools of a row the others count as one, and a
 * name is kept to 200 characters (100,000 distinct names of a hostile trace took `trace stats` to
 * 659 MB: attack round 24 bounded R7).
 */
export function aggTool(a: Agg, name: string): ToolRow {
  if (name.length > 200) name = shortText(name, 200);
  if (!a.tools.has(name) && a.tools.size >= CAP) name = "(other tools)";
  let t = a.tools.get(name);
  if (!t) {
    t = { name, calls: 0, failed: 0, aborted: 0, denied: 0 };
    a.tools.set(name, t);
  }
  return t;
}

/** Count a non-completed request_end. */
export function aggFailure(a: Agg, status: string, message: string, retried: boolean): void {
  let k = `${status}\0${message}`;
  let f = a.failures.get(k);
  if (!f && a.failures.size >= CAP) {
    message = "(other messages)";
    k = `${status}\0${message}`;
    f = a.failures.get(k);
  }
  if (!f) {
    const facts = readFailure(status, message);
    const label = facts.class === "other" ? status : failureLabel(facts);
    f = { status, class: facts.class, label, error_message: message, count: 0, retried: 0 };
    a.failures.set(k, f);
  }
  f.count++;
  if (retried) f.retried++;
}

/** Count an abort. */
export function aggAbort(a: Agg, reason: string): void {
  a.aborts++;
  const k = a.abortReasons.has(reason) || a.abortReasons.size < CAP ? reason : "(other)";
  a.abortReasons.set(k, (a.abortReasons.get(k) ?? 0) + 1);
}

/** Add one request's token counts, priced at `price` (null = unknown) for `model`. */
export function aggUsage(
  a: Agg,
  t: { cache_read: number; cache_write: number; output: number; total: number },
  model: string,
  price: Price | null,
): void {
  a.tokens.cache_read += t.cache_read;
  a.tokens.cache_write += t.cache_write;
  a.tokens.output += t.output;
  a.tokens.total += t.total;
  if (price) {
    a.usd += costOf(t, price);
    a.prices.set(model, price.source);
  } else {
    const u = a.unpriced.get(model) ?? { tokens: 0, requests: 0 };
    u.tokens += t.total;
    u.requests++;
    a.unpriced.set(model, u);
  }
}

/** Fold the current session's open task into the wall time (at the end of a session). */
export function aggEndSession(a: Agg): void {
  aggTaskEnd(a);
}

/** The finished row. */
export function aggRow(a: Agg): StatsRow {
  const lat = a.lat.slice(0, a.latN).sort();
  const rank = (q: number) => lat[Math.max(0, Math.ceil(q * lat.length) - 1)]!;
  let latSum = 0;
  for (const v of lat) latSum += v;
  const failures = [...a.failures.values()].sort((x, y) => y.count - x.count);
  const byClass = new Map<
    string,
    { label: string; class: FailureClass; count: number; retried: number }
  >();
  for (const f of failures) {
    const c = byClass.get(f.label) ?? { label: f.label, class: f.class, count: 0, retried: 0 };
    c.count += f.count;
    c.retried += f.retried;
    byClass.set(f.label, c);
  }
  const tools = [...a.tools.values()].sort((x, y) =>
    y.calls - x.calls || (x.name < y.name ? -1 : 1)
  );
  const sum = (f: (t: ToolRow) => number) => tools.reduce((n, t) => n + f(t), 0);
  const unpriced = [...a.unpriced].map(([model, u]) => ({ model, ...u }));
  return {
    key: a.key,
    sessions: a.sessions,
    files: a.files,
    records: a.records,
    first: Number.isFinite(a.first) ? new Date(a.first).toISOString() : null,
    last: Number.isFinite(a.last) ? new Date(a.last).toISOString() : null,
    wall_ms: a.wall,
    requests: a.requests,
    turns: a.turns,
    latency_ms: lat.length === 0 ? null : {
      count: lat.length,
      p50: rank(0.5),
      p95: rank(0.95),
      max: lat[lat.length - 1]!,
      sum: latSum,
    },
    failures: {
      count: failures.reduce((n, f) => n + f.count, 0),
      retried: failures.reduce((n, f) => n + f.retried, 0),
      by_class: [...byClass.values()].sort((x, y) => y.count - x.count),
      by: failures,
    },
    tools: {
      calls: sum((t) => t.calls),
      failed: sum((t) => t.failed),
      aborted: sum((t) => t.aborted),
      denied: sum((t) => t.denied),
      by: tools,
    },
    approvals: { ...a.approvals },
    aborts: {
      count: a.aborts,
      reasons: [...a.abortReasons].map(([reason, count]) => ({ reason, count })),
    },
    compactions: { ...a.compactions },
    subagents: a.subagents,
    tokens: { ...a.tokens },
    cost: {
      usd: a.prices.size > 0 || unpriced.length === 0 ? a.usd : null,
      complete: unpriced.length === 0,
      unpriced,
      prices: [...a.prices].map(([model, source]) => ({ model, source })),
    },
    models: [...a.models].sort(),
  };
}
