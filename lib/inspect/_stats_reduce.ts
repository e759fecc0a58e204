/**
 * The `trace stats` reducer: folds one scanned record into the rows it
 * counts in (the total, its session, and its group when grouping by day,
 * model, agent or tool). The state it carries between records is explicit:
 * {@linkcode StatsRun} across the whole run, {@linkcode SessionScan} across
 * one session's files.
 *
 * @module
 */
import type { LiteRecord } from "./_scan_record.ts";
import { shortText } from "../protocol/short_text.ts";
import {
  type Agg,
  aggAbort,
  aggFailure,
  aggLatency,
  aggSeen,
  aggTaskStart,
  aggTool,
  aggUsage,
  aggWork,
  newAgg,
} from "./_stats_agg.ts";
import type { Price } from "./pricing.ts";

/** How rows are grouped. */
export type StatsGroup = "session" | "day" | "model" | "tool" | "agent";

/** What a stats run accumulates across sessions. */
export interface StatsRun {
  /** Row grouping. */
  by: StatsGroup;
  /** Count only records at or after this time (epoch ms; -Infinity = no bound). */
  since: number;
  /** Count only records before this time (epoch ms; Infinity = no bound). */
  until: number;
  /** Whether `since` or `until` was given. */
  filtering: boolean;
  /** Everything. */
  total: Agg;
  /** The rows of `by` (not "session"), by key. */
  groups: Map<string, Agg>;
  /** Sessions begun (marks a row as touched by the current session). */
  sessionNo: number;
  /** Files begun (marks a row as touched by the current file). */
  fileNo: number;
  /** Model pairs begun: one per session, and one per switch (marks a row as seeing the current model). */
  pairNo: number;
}

/**
 * `subagent` pointers of one session whose children a run follows (1000): each kept one cost its
 * id and a lookup, and 600,000 pointers of 250-character ids took `trace stats` to 384 MB in
 * 22 s (attack round 25 bounded C7). The rest are counted in the report.
 */
export const MAX_FOLLOWED_POINTERS = 1000;

/** A tool call seen in the session and not yet answered. */
interface OpenCall {
  name: string;
  denied: boolean;
}

/** The price of a pair, null when unknown (the session's project config, else the catalog). */
export type PriceOf = (provider: string, modelId: string) => Price | null;

/** What the reducer carries through one session's records. */
export interface SessionScan {
  /** `provider/model_id` the session runs on at the current record. */
  model: string;
  /** Agent id of the session. */
  agent: string;
  /** Price of the model, null when unknown. */
  price: Price | null;
  /** Prices of the pairs it switches to. */
  priceOf: PriceOf;
  /** The session's own row. */
  agg: Agg;
  /** Time of the open request_begin (NaN when none). */
  begin: number;
  /** Inside a compaction: its completed requests are not turns. */
  inCompaction: boolean;
  /** Open tool calls by id. */
  calls: Map<string, OpenCall>;
  /** Child session ids its `subagent` records name. */
  pointers: string[];
  /** `subagent` pointers past {@linkcode MAX_FOLLOWED_POINTERS}, counted, not followed. */
  pointersPast: number;
  /** Every row this session counted in (to close its per-session figures). */
  touched: Agg[];
  /** Scratch: the rows the current record counts in. */
  rows: Agg[];
}

/** A new run. */
export function newStatsRun(by: StatsGroup, since?: number, until?: number): StatsRun {
  return {
    by,
    since: since ?? -Infinity,
    until: until ?? Infinity,
    filtering: since !== undefined || until !== undefined,
    total: newAgg("total"),
    groups: new Map(),
    sessionNo: 0,
    fileNo: 0,
    pairNo: 0,
  };
}

/** Begin a session of `run`; `key` names its row. */
export function newSessionScan(
  run: StatsRun,
  key: string,
  facts: { model: string; agent: string; price: Price | null; priceOf?: PriceOf },
): SessionScan {
  run.sessionNo++;
  run.pairNo++;
  return {
    priceOf: () => null,
    ...facts,
    agg: newAgg(key),
    begin: NaN,
    inCompaction: false,
    calls: new Map(),
    pointers: [],
    pointersPast: 0,
    touched: [],
    rows: [],
  };
}

type Counts = { cache_read: number; cache_write: number; output: number; total: number };

function counts(v: unknown): Counts | null {
  if (typeof v !== "object" || v === null) return null;
  const o = v as Record<string, unknown>;
  const n = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  return {
    cache_read: n(o.cache_read),
    cache_write: n(o.cache_write),
    output: n(o.output),
    total: n(o.total),
  };
}

const days = new Map<number, string>();

/** The UTC date (`YYYY-MM-DD`) of epoch ms `ts`. */
function dayOf(ts: number): string {
  if (!Number.isFinite(ts)) return "(unknown)";
  const n = Math.floor(ts / 86_400_000);
  let d = days.get(n);
  if (d === undefined) {
    d = new Date(n * 86_400_000).toISOString().slice(0, 10);
    days.set(n, d);
  }
  return d;
}

/** Rows a grouping keeps at most; past them the others count as one, `(other)`. */
const MAX_GROUPS = 1000;

function group(run: StatsRun, key: string): Agg {
  if (key.length > 200) key = shortText(key, 200);
  if (!run.groups.has(key) && run.groups.size >= MAX_GROUPS) key = "(other)";
  let a = run.groups.get(key);
  if (!a) {
    a = newAgg(key);
    run.groups.set(key, a);
  }
  return a;
}

/** Count `a` as seen by the current session and file. */
function touch(run: StatsRun, s: SessionScan, a: Agg): void {
  if (a.sessionMark !== run.sessionNo) {
    a.sessionMark = run.sessionNo;
    a.sessions++;
    s.touched.push(a);
  }
  if (a.pairMark !== run.pairNo) {
    a.pairMark = run.pairNo;
    a.models.add(s.model);
    if (!s.price && !a.unpriced.has(s.model)) a.unpriced.set(s.model, { tokens: 0, requests: 0 });
  }
  if (a.fileMark !== run.fileNo) {
    a.fileMark = run.fileNo;
    a.files++;
  }
}

/** Fill `s.rows` with the rows `rec` counts in (none outside the time range). */
function selectRows(run: StatsRun, s: SessionScan, rec: LiteRecord): void {
  const rows = s.rows;
  rows.length = 0;
  const ts = rec.ts;
  if (run.filtering && !(ts >= run.since && ts < run.until)) return;
  rows.push(run.total, s.agg);
  const by = run.by;
  if (by === "day") rows.push(group(run, dayOf(ts)));
  else if (by === "model") rows.push(group(run, s.model));
  else if (by === "agent") rows.push(group(run, s.agent));
  else if (by === "tool") {
    const name = rec.type === "tool_call" ? rec.name : s.calls.get(rec.id)?.name;
    if (name !== undefined && rec.id !== "") rows.push(group(run, name));
  }
  for (const a of rows) {
    touch(run, s, a);
    aggSeen(a, ts);
  }
}

function requestEnd(s: SessionScan, rec: LiteRecord): void {
  const p = rec.payload;
  const status = typeof p?.status === "string" ? p.status : "(missing)";
  const latency = rec.ts - s.begin;
  s.begin = NaN;
  for (const a of s.rows) {
    if (Number.isFinite(latency)) aggLatency(a, latency);
    if (status === "completed") {
      if (!s.inCompaction) a.turns++;
    } else {
      const msg = typeof p?.error_message === "string" ? p.error_message : "";
      aggFailure(a, status, msg, p?.retry_in_ms !== undefined);
    }
  }
}

function approval(s: SessionScan, rec: LiteRecord): void {
  const d = rec.payload?.decision;
  if (d !== "allow" && d !== "deny" && d !== "forbidden") return;
  const call = s.calls.get(rec.id);
  for (const a of s.rows) {
    a.approvals[d]++;
    if (d !== "allow" && call) aggTool(a, call.name).denied++;
  }
  if (d !== "allow" && call) call.denied = true;
}

function toolOutput(s: SessionScan, rec: LiteRecord): void {
  const call = s.calls.get(rec.id);
  if (!call) return;
  s.calls.delete(rec.id);
  if (call.denied || rec.stop === "completed") return;
  for (const a of s.rows) {
    const t = aggTool(a, call.name);
    if (rec.stop === "aborted") t.aborted++;
    else t.failed++;
  }
}

/**
 * The session runs on `provider`/`modelId` from here on (a `model_switched`
 * event, or the `session_meta` at the head of each file): the next records
 * count for that pair, at its price.
 */
function switchPair(run: StatsRun, s: SessionScan, provider: unknown, modelId: unknown): void {
  if (typeof provider !== "string" || typeof modelId !== "string") return;
  const model = `${provider}/${modelId}`;
  if (model === s.model) return;
  s.model = model;
  s.price = s.priceOf(provider, modelId);
  run.pairNo++;
}

/** Records that set a session up (at its start, or when it is resumed) rather than do a task's work. */
const NOT_WORK = new Set([
  "session_meta",
  "model_switched",
  "workspace_moved",
  "mcp_connect_begin",
  "mcp_connect_end",
  "tool_list_ready",
]);

/** Fold one record of the current session into the rows it counts in. */
export function reduceRecord(run: StatsRun, s: SessionScan, rec: LiteRecord): void {
  if (rec.origin) return;
  if (rec.type === "model_switched" || rec.kind === "session_meta") {
    switchPair(run, s, rec.payload?.provider, rec.payload?.model_id);
  }
  selectRows(run, s, rec);
  const rows = s.rows;
  const p = rec.payload;
  // Wall time is the sum of task spans: a prompt starts a task; setup records do not extend one.
  if (rec.kind === "model_msg" && rec.role === "user" && rec.type === "text" && !s.inCompaction) {
    for (const a of rows) aggTaskStart(a, rec.ts);
  } else if (!NOT_WORK.has(rec.type)) { for (const a of rows) aggWork(a, rec.ts); }
  switch (rec.type) {
    case "request_begin":
      for (const a of rows) a.requests++;
      s.begin = rec.ts;
      break;
    case "request_end":
      requestEnd(s, rec);
      break;
    case "token_usage": {
      const c = counts(p?.request);
      if (c) { for (const a of rows) aggUsage(a, c, s.model, s.price); }
      break;
    }
    case "tool_call":
      if (rec.stop === "completed" && rec.id !== "") {
        s.calls.set(rec.id, { name: rec.name, denied: false });
        for (const a of rows) aggTool(a, rec.name).calls++;
      }
      break;
    case "approval_decision":
      approval(s, rec);
      break;
    case "tool_call_output":
      toolOutput(s, rec);
      break;
    case "abort": {
      const reason = typeof p?.reason === "string" ? p.reason : "(no reason)";
      for (const a of rows) aggAbort(a, reason);
      break;
    }
    case "compaction_begin":
      s.inCompaction = true;
      for (const a of rows) a.compactions.count++;
      break;
    case "compaction_end": {
      s.inCompaction = false;
      const st = p?.status;
      if (st === "completed" || st === "failed" || st === "aborted") {
        for (const a of rows) a.compactions[st]++;
      }
      break;
    }
    case "subagent":
      for (const a of rows) a.subagents++;
      if (typeof p?.session_id === "string") {
        if (s.pointers.length < MAX_FOLLOWED_POINTERS) s.pointers.push(p.session_id);
        else s.pointersPast++;
      }
      break;
  }
}
