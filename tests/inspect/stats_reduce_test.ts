import assert from "node:assert/strict";
import type { LiteRecord } from "../../lib/inspect/_scan_record.ts";
import { aggRow } from "../../lib/inspect/_stats_agg.ts";
import { newSessionScan, newStatsRun, reduceRecord } from "../../lib/inspect/_stats_reduce.ts";

const T0 = Date.UTC(2026, 0, 1);

function rec(type: string, at: number, extra: Partial<LiteRecord> = {}): LiteRecord {
  return {
    line: 1,
    ts: T0 + at,
    kind: "event_msg",
    type,
    role: "",
    name: "",
    id: "",
    stop: "",
    payload: null,
    origin: false,
    ...extra,
  };
}

function fold(records: LiteRecord[], range: { since?: number; until?: number } = {}) {
  const run = newStatsRun("tool", range.since, range.until);
  run.fileNo++;
  const s = newSessionScan(run, "s1", { model: "m/x", agent: "a", price: null });
  for (const r of records) reduceRecord(run, s, r);
  return { run, s };
}

Deno.test("the stats reducer counts a compaction's request but not as a turn", () => {
  const { run } = fold([
    rec("request_begin", 0),
    rec("request_end", 100, { payload: { status: "completed" } }),
    rec("compaction_begin", 200, { payload: {} }),
    rec("request_begin", 300),
    rec("request_end", 400, { payload: { status: "completed" } }),
    rec("compaction_end", 500, { payload: { status: "completed" } }),
  ]);
  const total = aggRow(run.total);
  assert.equal(total.requests, 2);
  assert.equal(total.turns, 1);
  assert.equal(total.compactions.completed, 1);
});

Deno.test("the stats reducer counts a denied call as denied, not failed, in its tool's row", () => {
  const call = { kind: "model_msg" as const, name: "read_file", id: "c1", stop: "completed" };
  const { run } = fold([
    rec("tool_call", 0, call),
    rec("approval_decision", 10, { id: "c1", payload: { decision: "deny" } }),
    rec("tool_call_output", 20, { kind: "model_msg", id: "c1", stop: "aborted" }),
  ]);
  const row = aggRow(run.groups.get("read_file")!);
  assert.deepEqual(row.tools.by.map((t) => [t.name, t.calls, t.denied, t.failed, t.aborted]), [
    ["read_file", 1, 1, 0, 0],
  ]);
});

Deno.test("the stats reducer counts records outside the time range nowhere, and remembers subagents", () => {
  const { run, s } = fold([
    rec("request_begin", 0),
    rec("subagent", 5, { payload: { session_id: "child" } }),
    rec("request_begin", 2000),
  ], { since: T0 + 1000 });
  assert.equal(aggRow(run.total).requests, 1);
  assert.equal(aggRow(s.agg).subagents, 0);
  assert.deepEqual(s.pointers, ["child"]);
});
