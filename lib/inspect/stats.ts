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
import {
  type Agg,
  aggAbort,
  aggEndSession,
  aggFailure,
  aggLatency,
  aggRow,
  aggSeen,
  aggTool,
  aggUsage,
  newAgg,
  type StatsRow,
} from "./_stats_agg.ts";
import type { Price, PriceBook } from "./pricing.ts";
import {
  agentIdOf,
  findRelative,
  projectConfigPathOf,
  readSessionMeta,
  type SessionFiles,
} from "../trace/mod.ts";
import type { SessionMeta } from "../protocol/types.ts";

export type { FailureRow, StatsRow, ToolRow } from "./_stats_agg.ts";

/** How rows are grouped. */
export type StatsGroup = "session" | "day" | "model" | "tool" | "agent";

/** Every {@linkcode StatsGroup}. */
export const STATS_GROUPS: readonly StatsGroup[] = ["session", "day", "model", "tool", "agent"];

/** Options of {@linkcode collectStats}. */
export interface StatsOptions {
  /** Row grouping; default one row per session. */
  by?: StatsGroup;
  /** Count only records at or after this time (epoch ms). */
  since?: number;
  /** Count only records before this time (epoch ms). */
  until?: number;
  /** Prices. */
  prices: PriceBook;
  /** Skipped lines. */
  onProblem?: (problem: TraceProblem) => void;
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

/** Collect statistics over `sessions` (see the module doc). */
export async function collectStats(
  sessions: readonly SessionFiles[],
  options: StatsOptions,
): Promise<StatsReport> {
  const by = options.by ?? "session";
  const since = options.since ?? -Infinity;
  const until = options.until ?? Infinity;
  const filtering = options.since !== undefined || options.until !== undefined;
  const total = newAgg("total");
  const groups = new Map<string, Agg>();
  const rows: StatsRow[] = [];
  let bytes = 0;
  let skipped = 0;
  let sessionNo = 0;
  let fileNo = 0;
  const onProblem = (p: TraceProblem) => {
    skipped++;
    options.onProblem?.(p);
  };

  const queue = [...sessions];
  const queued = new Set(queue.map((q) => q.key));
  const relatives = new Map<string, string | null>();
  for (let qi = 0; qi < queue.length; qi++) {
    const session = queue[qi]!;
    const pointers: string[] = [];
    sessionNo++;
    const touched: Agg[] = [];
    // The first file's session_meta names the model; read it before scanning so
    // every request is priced.
    const first = session.files[0]!.path;
    const meta: SessionMeta | null = await readSessionMeta(first);
    const model = meta ? `${meta.provider}/${meta.model_id}` : "(unknown)";
    const agent = agentIdOf(meta, first) ?? "(unknown)";
    const price: Price | null = meta
      ? await options.prices.priceFor(
        String(meta.provider),
        String(meta.model_id),
        projectConfigPathOf(first),
      )
      : null;
    const sAgg = newAgg(meta?.session_id ?? session.key);
    let begin = NaN; // time of the open request_begin
    let inCompaction = false;
    const calls = new Map<string, { name: string; denied: boolean }>();
    const scratch: Agg[] = [];

    const touch = (a: Agg) => {
      if (a.sessionMark !== sessionNo) {
        a.sessionMark = sessionNo;
        a.sessions++;
        touched.push(a);
        a.models.add(model);
        if (!price && !a.unpriced.has(model)) a.unpriced.set(model, { tokens: 0, requests: 0 });
      }
      if (a.fileMark !== fileNo) {
        a.fileMark = fileNo;
        a.files++;
      }
    };
    const group = (key: string) => {
      let a = groups.get(key);
      if (!a) {
        a = newAgg(key);
        groups.set(key, a);
      }
      return a;
    };

    for (const file of session.files) {
      fileNo++;
      const r = await scanTrace(file.path, (rec) => {
        if (rec.origin) return;
        const ts = rec.ts;
        const inRange = !filtering || (ts >= since && ts < until);
        // Collect the rows this record counts in.
        scratch.length = 0;
        if (inRange) {
          scratch.push(total, sAgg);
          if (by === "day") scratch.push(group(dayOf(ts)));
          else if (by === "model") scratch.push(group(model));
          else if (by === "agent") scratch.push(group(agent));
          else if (by === "tool") {
            const name = rec.type === "tool_call" ? rec.name : calls.get(rec.id)?.name;
            if (name !== undefined && rec.id !== "") scratch.push(group(name));
          }
          for (const a of scratch) {
            touch(a);
            aggSeen(a, ts);
          }
        }
        const p = rec.payload;
        switch (rec.type) {
          case "request_begin":
            for (const a of scratch) a.requests++;
            begin = ts;
            break;
          case "request_end": {
            const status = typeof p?.status === "string" ? p.status : "(missing)";
            const latency = ts - begin;
            begin = NaN;
            for (const a of scratch) {
              if (Number.isFinite(latency)) aggLatency(a, latency);
              if (status === "completed") {
                if (!inCompaction) a.turns++;
              } else {
                const msg = typeof p?.error_message === "string" ? p.error_message : "";
                aggFailure(a, status, msg, p?.retry_in_ms !== undefined);
              }
            }
            break;
          }
          case "token_usage": {
            const c = counts(p?.request);
            if (c) { for (const a of scratch) aggUsage(a, c, model, price); }
            break;
          }
          case "tool_call":
            if (rec.stop === "completed" && rec.id !== "") {
              calls.set(rec.id, { name: rec.name, denied: false });
              for (const a of scratch) aggTool(a, rec.name).calls++;
            }
            break;
          case "approval_decision": {
            const d = p?.decision;
            const call = calls.get(rec.id);
            if (d === "allow" || d === "deny" || d === "forbidden") {
              for (const a of scratch) {
                a.approvals[d]++;
                if (d !== "allow" && call) aggTool(a, call.name).denied++;
              }
              if (d !== "allow" && call) call.denied = true;
            }
            break;
          }
          case "tool_call_output": {
            const call = calls.get(rec.id);
            if (!call) break;
            calls.delete(rec.id);
            if (call.denied || rec.stop === "completed") break;
            for (const a of scratch) {
              const t = aggTool(a, call.name);
              if (rec.stop === "aborted") t.aborted++;
              else t.failed++;
            }
            break;
          }
          case "abort": {
            const reason = typeof p?.reason === "string" ? p.reason : "(no reason)";
            for (const a of scratch) aggAbort(a, reason);
            break;
          }
          case "compaction_begin":
            inCompaction = true;
            for (const a of scratch) a.compactions.count++;
            break;
          case "compaction_end": {
            inCompaction = false;
            const s = p?.status;
            if (s === "completed" || s === "failed" || s === "aborted") {
              for (const a of scratch) a.compactions[s]++;
            }
            break;
          }
          case "subagent":
            for (const a of scratch) a.subagents++;
            if (typeof p?.session_id === "string") pointers.push(p.session_id);
            break;
        }
      }, { onProblem });
      bytes += r.bytes;
    }
    for (const a of touched) aggEndSession(a);
    if (by === "session" && sAgg.sessions > 0) rows.push(aggRow(sAgg));
    if (options.children === false) continue;
    // Children not among the targets follow their parent.
    const found: SessionFiles[] = [];
    for (const id of pointers) {
      if (queued.has(id)) continue;
      queued.add(id);
      const child = await findRelative(first, id, relatives);
      if (!child || (child.key !== id && queued.has(child.key))) continue;
      queued.add(child.key);
      found.push(child);
    }
    queue.splice(qi + 1, 0, ...found);
  }
  if (by !== "session") {
    const keys = [...groups.keys()].sort();
    for (const k of keys) rows.push(aggRow(groups.get(k)!));
  }
  return { by, rows, total: aggRow(total), bytes, skipped };
}
