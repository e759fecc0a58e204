/**
 * `trace stats`: per session and in total, or grouped by day, model, tool,
 * session or agent — requests and turns, tool calls with failures, approvals,
 * aborts, request failures and retries, compactions, tokens, request latency,
 * wall time and cost. Streams every file once with the fast scanner; memory
 * does not grow with trace size (only with the number of rows and requests).
 *
 * A parent and its subagent children are one unit: the children a session's
 * `subagent` pointers name are counted too (each as a session of its own,
 * right after its parent) when they are found next to the parent's traces
 * and were not among the targets already (`children: false` turns this off).
 *
 * @module
 */
import type { TraceProblem } from "../trace/reader.ts";
import { scanTrace } from "./_scan.ts";
import type { LiteRecord } from "./_scan_record.ts";
import { aggEndSession, aggRow, type StatsRow } from "./_stats_agg.ts";
import {
  newSessionScan,
  newStatsRun,
  reduceRecord,
  type SessionScan,
  type StatsGroup,
  type StatsRun,
} from "./_stats_reduce.ts";
import type { PriceBook } from "./pricing.ts";
import {
  agentIdOf,
  findRelative,
  projectConfigPathOf,
  readSessionMeta,
  type SessionFiles,
} from "../trace/mod.ts";

export type { FailureRow, StatsRow, ToolRow } from "./_stats_agg.ts";
export type { StatsGroup } from "./_stats_reduce.ts";

/** Every {@linkcode StatsGroup}. */
export const STATS_GROUPS: readonly StatsGroup[] = ["session", "day", "model", "tool", "agent"];

/** Options of {@linkcode collectStats}. */
export interface StatsOptions {
  /** Row grouping; default one row per session. */
  by?: StatsGroup;
  /** Count only records at or after this time (epoch ms). */
  since?: number | undefined;
  /** Count only records before this time (epoch ms). */
  until?: number | undefined;
  /** Prices. */
  prices: PriceBook;
  /** Skipped lines. */
  onProblem?: (problem: TraceProblem) => void;
  /** Told before each session is read: `done` of `total` sessions (children add to `total`). */
  onSession?: (done: number, total: number) => void;
  /** Count the subagent children of the sessions too (default true). */
  children?: boolean;
}

/** The result of {@linkcode collectStats}. */
export interface StatsReport {
  /** The grouping. */
  by: StatsGroup;
  /** One row per group, in key order (sessions in scan order). */
  rows: StatsRow[];
  /** Everything. */
  total: StatsRow;
  /** Bytes read. */
  bytes: number;
  /** Lines skipped as malformed. */
  skipped: number;
  /** `subagent` pointers whose children were not followed (past 1000 of a session). */
  pointersNotFollowed: number;
}

/**
 * Begin scanning `session`: its first file's session_meta names the model it
 * starts on, and `model_switched` events (and each later file's session_meta)
 * the pairs it continues on, so every request is priced as its own pair's.
 */
async function beginSession(
  run: StatsRun,
  session: SessionFiles,
  prices: PriceBook,
): Promise<SessionScan> {
  const first = session.files[0]!.path;
  const meta = await readSessionMeta(first);
  const priceOf = await prices.pricesIn(projectConfigPathOf(first));
  return newSessionScan(run, meta?.session_id ?? session.key, {
    model: meta ? `${meta.provider}/${meta.model_id}` : "(unknown)",
    agent: agentIdOf(meta, first) ?? "(unknown)",
    price: meta ? priceOf(String(meta.provider), String(meta.model_id)) : null,
    priceOf,
  });
}

/** The children `pointers` name that are not queued yet, found next to `first`. */
async function newChildren(
  first: string,
  pointers: readonly string[],
  queued: Set<string>,
  relatives: Map<string, string | null>,
): Promise<SessionFiles[]> {
  const found: SessionFiles[] = [];
  for (const id of pointers) {
    if (queued.has(id)) continue;
    queued.add(id);
    const child = await findRelative(first, id, relatives);
    if (!child || (child.key !== id && queued.has(child.key))) continue;
    queued.add(child.key);
    found.push(child);
  }
  return found;
}

/** Collect statistics over `sessions` (see the module doc). */
export async function collectStats(
  sessions: readonly SessionFiles[],
  options: StatsOptions,
): Promise<StatsReport> {
  const run = newStatsRun(options.by ?? "session", options.since, options.until);
  const rows: StatsRow[] = [];
  let bytes = 0;
  let skipped = 0;
  let pointersNotFollowed = 0;
  const onProblem = (p: TraceProblem) => {
    skipped++;
    options.onProblem?.(p);
  };

  const queue = [...sessions];
  const queued = new Set(queue.map((q) => q.key));
  const relatives = new Map<string, string | null>();
  for (let qi = 0; qi < queue.length; qi++) {
    const session = queue[qi]!;
    options.onSession?.(qi, queue.length);
    const scan = await beginSession(run, session, options.prices);
    const onRecord = (rec: LiteRecord) => reduceRecord(run, scan, rec);
    for (const file of session.files) {
      run.fileNo++;
      bytes += (await scanTrace(file.path, onRecord, { onProblem })).bytes;
    }
    for (const a of scan.touched) aggEndSession(a);
    pointersNotFollowed += scan.pointersPast;
    if (run.by === "session" && scan.agg.sessions > 0) rows.push(aggRow(scan.agg));
    if (options.children === false) continue;
    // Children not among the targets follow their parent.
    const first = session.files[0]!.path;
    queue.splice(qi + 1, 0, ...await newChildren(first, scan.pointers, queued, relatives));
  }
  if (run.by !== "session") {
    for (const k of [...run.groups.keys()].sort()) rows.push(aggRow(run.groups.get(k)!));
  }
  return { by: run.by, rows, total: aggRow(run.total), bytes, skipped, pointersNotFollowed };
}
