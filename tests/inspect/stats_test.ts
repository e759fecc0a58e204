import assert from "node:assert/strict";
import { join } from "node:path";
import { findPreset } from "../../lib/models/catalog.ts";
import { createPriceBook } from "../../lib/inspect/pricing.ts";
import { collectStats } from "../../lib/inspect/stats.ts";
import { describeCost, renderStatsText } from "../../lib/inspect/stats_render.ts";
import { makeStyle } from "../../lib/display/palette.ts";
import { resolveTargets } from "../../lib/inspect/targets.ts";
import { addModel } from "../../lib/state/project_config.ts";
import { eventMsg } from "../../lib/protocol/builders.ts";
import { sid, traceBuilder, tracesDay, withTempDir } from "./_support.ts";

// A session with every kind of record stats counts; returns the builder and
// the latencies measured while building it.
function busySession(id: string, provider = "anthropic", modelId = "claude-sonnet-4-6") {
  const b = traceBuilder(id, { provider, modelId }).meta().tools().user("do the thing");
  const lat: number[] = [];
  const request = (body: () => void, step: number) => {
    b.begin();
    const t0 = b.now();
    body();
    lat.push(b.now() + step - t0);
    return step;
  };
  let s = request(
    () =>
      b.thinking("hmm").call("exec_command", { cmd: "ls" }, "c1").approve("c1").usage(
        1000,
        200,
        50,
      ),
    300,
  );
  b.end("completed", {}, s).output("c1", "a\nb\n");
  s = request(
    () =>
      b.call("read_file", { file_path: "/x" }, "c2").approve("c2", "deny").output(
        "c2",
        "Tool call denied by user.",
        "aborted",
      ).usage(2000, 100, 20),
    50,
  );
  b.end("completed", {}, s);
  s = request(() => {}, 1200);
  b.end("timeout", { error_message: "socket hang up", attempt: 1, retry_in_ms: 2000 }, s);
  s = request(
    () => b.call("exec_command", { cmd: "false" }, "c3").approve("c3").usage(3000, 50, 30),
    700,
  );
  b.end("completed", {}, s).output("c3", "boom", "failed");
  s = request(() => b.text("done").usage(4000, 10, 40), 20);
  b.end("completed", {}, s).abort("user pressed ctrl-c");
  return { b, lat, tokens: { cache_read: 10000, cache_write: 360, output: 140 } };
}

function nearestRank(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(q * s.length) - 1)]!;
}

Deno.test("stats counts requests, turns, tools, approvals, failures, aborts, tokens and latency exactly", async () => {
  await withTempDir(async (dir) => {
    const { b, lat, tokens } = busySession(sid("aaaa0001"));
    const path = join(dir, `${sid("aaaa0001")}_001.jsonl`);
    await Deno.writeTextFile(path, b.jsonl());
    const report = await collectStats(await resolveTargets([path]), { prices: createPriceBook() });
    const t = report.total;
    assert.equal(report.rows.length, 1);
    assert.equal(report.rows[0]!.key, sid("aaaa0001"));
    assert.equal(t.sessions, 1);
    assert.equal(t.files, 1);
    assert.equal(t.records, b.records.length);
    assert.equal(t.requests, 5);
    assert.equal(t.turns, 4);
    assert.deepEqual(t.failures, {
      count: 1,
      retried: 1,
      by_class: [{ label: "connection failed", class: "connection", count: 1, retried: 1 }],
      by: [{
        status: "timeout",
        class: "connection",
        label: "connection failed",
        error_message: "socket hang up",
        count: 1,
        retried: 1,
      }],
    });
    assert.deepEqual(t.tools.by, [
      { name: "exec_command", calls: 2, failed: 1, aborted: 0, denied: 0 },
      { name: "read_file", calls: 1, failed: 0, aborted: 0, denied: 1 },
    ]);
    assert.deepEqual(t.approvals, { allow: 2, deny: 1, forbidden: 0 });
    assert.deepEqual(t.aborts, {
      count: 1,
      reasons: [{ reason: "user pressed ctrl-c", count: 1 }],
    });
    assert.deepEqual(t.tokens, {
      ...tokens,
      total: tokens.cache_read + tokens.cache_write + tokens.output,
    });
    assert.equal(t.latency_ms?.count, lat.length);
    assert.equal(t.latency_ms?.p50, nearestRank(lat, 0.5));
    assert.equal(t.latency_ms?.p95, nearestRank(lat, 0.95));
    assert.equal(t.latency_ms?.max, Math.max(...lat));
    // One task: from its prompt (after the meta and the tool list) to its last record.
    const prompt = Date.parse(b.records[2]!.timestamp);
    const last = Date.parse(b.records.at(-1)!.timestamp);
    assert.equal(t.wall_ms, last - prompt);
    // Catalog price: (cache_read·p_cr + cache_write·p_cw + output·p_out) / 1e6.
    const p = findPreset("anthropic", "claude-sonnet-4-6")!.pricing;
    const expected = (tokens.cache_read * p.cache_read + tokens.cache_write * p.cache_write +
      tokens.output * p.output) / 1e6;
    assert.ok(Math.abs(t.cost.usd! - expected) < 1e-12, `${t.cost.usd} vs ${expected}`);
    assert.equal(t.cost.complete, true);
    assert.deepEqual(t.cost.prices, [{ model: "anthropic/claude-sonnet-4-6", source: "catalog" }]);
  });
});

Deno.test("stats wall time is the sum of task spans: a session resumed days later does not count the gap", async () => {
  await withTempDir(async (dir) => {
    const id = sid("aaaa0009");
    const b = traceBuilder(id).meta().tools().user("first task");
    b.begin().text("one").end("completed");
    const firstTask = b.now() - Date.parse(b.records[2]!.timestamp);
    const resumedAt = b.records.length;
    // Resumed three days later: the tool list is set up again, then the next prompt.
    b.tools().user("second task");
    b.begin().call("exec_command", { cmd: "ls" }, "c1").end("completed").output("c1", "a");
    b.begin().text("two").end("completed");
    const DAYS = 3 * 24 * 3600_000;
    b.records.forEach((r, i) => {
      if (i >= resumedAt) r.timestamp = new Date(Date.parse(r.timestamp) + DAYS).toISOString();
    });
    const secondTask = Date.parse(b.records.at(-1)!.timestamp) -
      Date.parse(b.records[resumedAt + 1]!.timestamp);
    const path = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(path, b.jsonl());
    const report = await collectStats(await resolveTargets([path]), { prices: createPriceBook() });
    assert.equal(report.total.wall_ms, firstTask + secondTask);
    assert.ok(report.total.wall_ms < 60_000, `${report.total.wall_ms} ms`);
    assert.equal(report.rows[0]!.wall_ms, firstTask + secondTask);
  });
});

Deno.test("stats prices a model with the project's configured prices over the catalog's", async () => {
  await withTempDir(async (root) => {
    const id = sid("bbbb0002");
    const { b, tokens } = busySession(id);
    await Deno.writeTextFile(join(await tracesDay(root), `${id}_001.jsonl`), b.jsonl());
    const price = { cache_read: 0.11, cache_write: 2.2, output: 33 };
    await addModel(join(root, "default_project", ".project_config.toml"), {
      provider: "anthropic",
      model_id: "claude-sonnet-4-6",
      pricing: price,
    });
    const report = await collectStats(await resolveTargets([root]), { prices: createPriceBook() });
    const expected =
      (tokens.cache_read * price.cache_read + tokens.cache_write * price.cache_write +
        tokens.output * price.output) / 1e6;
    assert.ok(Math.abs(report.total.cost.usd! - expected) < 1e-12);
    assert.deepEqual(report.total.cost.prices, [
      { model: "anthropic/claude-sonnet-4-6", source: "config" },
    ]);
  });
});

Deno.test("stats never prices an unknown model at zero: cost is unknown and says which model", async () => {
  await withTempDir(async (dir) => {
    const unknown = busySession(sid("cccc0003"), "custom", "mock");
    const known = busySession(sid("cccc0004"));
    await Deno.writeTextFile(join(dir, `${sid("cccc0003")}_001.jsonl`), unknown.b.jsonl());
    await Deno.writeTextFile(join(dir, `${sid("cccc0004")}_001.jsonl`), known.b.jsonl());
    const report = await collectStats(await resolveTargets([dir]), { prices: createPriceBook() });
    const [u, k] = report.rows;
    assert.equal(u!.cost.usd, null);
    assert.equal(u!.cost.complete, false);
    assert.deepEqual(u!.cost.unpriced, [{ model: "custom/mock", tokens: 10500, requests: 4 }]);
    assert.equal(describeCost(u!), "unknown (no price for custom/mock)");
    assert.equal(k!.cost.complete, true);
    // The total keeps the priced part and flags the rest.
    assert.equal(report.total.cost.usd, k!.cost.usd);
    assert.equal(report.total.cost.complete, false);
    assert.match(
      describeCost(report.total),
      /^\$\d+\.\d{4} \+ unknown \(no price for custom\/mock: 10500 tokens\)$/,
    );
    const text = renderStatsText(
      { ...report, rows: [u!], total: u! },
      makeStyle(false),
    );
    assert.match(text, /^ {2}cost: unknown \(no price for custom\/mock\)$/m);
  });
});

Deno.test("stats groups rows by day, model, agent and tool, and filters by time", async () => {
  await withTempDir(async (root) => {
    const day1 = Date.UTC(2026, 2, 4, 10);
    const day2 = Date.UTC(2026, 2, 5, 10);
    const a = traceBuilder(sid("dddd0001"), { start: day1, provider: "openai", modelId: "gpt-5.4" })
      .meta().user("a").begin().call("exec_command", { cmd: "x" }, "x1").approve("x1")
      .usage(10, 20, 30).end().output("x1", "ok");
    const b = traceBuilder(sid("dddd0002"), { start: day2, agent: "helper" })
      .meta().user("b").begin().call("read_file", { file_path: "/f" }, "y1").approve("y1")
      .output("y1", "nope", "failed").usage(1, 2, 3).end().begin().text("ok").usage(1, 1, 1).end();
    await Deno.writeTextFile(
      join(await tracesDay(root, "2026-03-04"), `${sid("dddd0001")}_001.jsonl`),
      a.jsonl(),
    );
    await Deno.writeTextFile(
      join(await tracesDay(root, "2026-03-05", "helper"), `${sid("dddd0002")}_001.jsonl`),
      b.jsonl(),
    );
    const sessions = await resolveTargets([root]);
    const prices = createPriceBook();
    const byDay = await collectStats(sessions, { by: "day", prices });
    assert.deepEqual(byDay.rows.map((r) => [r.key, r.requests, r.tokens.total]), [
      ["2026-03-04", 1, 60],
      ["2026-03-05", 2, 9],
    ]);
    const byModel = await collectStats(sessions, { by: "model", prices });
    assert.deepEqual(byModel.rows.map((r) => [r.key, r.sessions]), [["custom/mock", 1], [
      "openai/gpt-5.4",
      1,
    ]]);
    const byAgent = await collectStats(sessions, { by: "agent", prices });
    assert.deepEqual(byAgent.rows.map((r) => r.key), ["default_agent", "helper"]);
    const byTool = await collectStats(sessions, { by: "tool", prices });
    assert.deepEqual(byTool.rows.map((r) => [r.key, r.tools.calls, r.tools.failed]), [
      ["exec_command", 1, 0],
      ["read_file", 1, 1],
    ]);
    const since = await collectStats(sessions, { since: Date.UTC(2026, 2, 5), prices });
    assert.deepEqual(since.rows.map((r) => r.key), [sid("dddd0002")]);
    assert.equal(since.total.requests, 2);
    const until = await collectStats(sessions, { until: Date.UTC(2026, 2, 5), prices });
    assert.equal(until.total.requests, 1);
    assert.equal(until.total.tokens.total, 60);
  });
});

Deno.test("stats reads records in any key order and huge lines the same as canonical ones", async () => {
  await withTempDir(async (dir) => {
    const id = sid("eeee0001");
    const big = "line of output\n".repeat(400_000); // ~6 MB: beyond the scanner's gather limit
    const b = traceBuilder(id).meta().user("go").begin().call("exec_command", { cmd: big }, "k1")
      .approve("k1").usage(5, 6, 7).end().output("k1", big, "failed");
    const canonical = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(canonical, b.jsonl());
    // Same records, keys reversed at every level: the scanner's slow path.
    const reverse = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reverse)
        : typeof v === "object" && v !== null
        ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reverse(x)]))
        : v;
    const shuffled = join(dir, `${sid("eeee0002")}_001.jsonl`);
    await Deno.writeTextFile(
      shuffled,
      b.records.map((m) => JSON.stringify(reverse(m)).replaceAll(id, sid("eeee0002")) + "\n").join(
        "",
      ),
    );
    const prices = createPriceBook();
    const [r1, r2] = (await collectStats(await resolveTargets([dir]), { prices })).rows;
    const strip = (r: typeof r1) => ({ ...r!, key: "" });
    assert.deepEqual(strip(r1), strip(r2));
    assert.deepEqual(r1!.tools.by, [{
      name: "exec_command",
      calls: 1,
      failed: 1,
      aborted: 0,
      denied: 0,
    }]);
    assert.equal(r1!.records, b.records.length);
  });
});

Deno.test("stats skips malformed lines and a torn tail, and reports them", async () => {
  await withTempDir(async (dir) => {
    const id = sid("ffff0001");
    const b = traceBuilder(id).meta().user("go").begin().text("hi").usage(1, 1, 1).end();
    const lines = b.jsonl().split("\n");
    lines.splice(3, 0, "{not json");
    const path = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(path, lines.join("\n") + '{"timestamp":"2026-');
    const problems: number[] = [];
    const report = await collectStats(await resolveTargets([path]), {
      prices: createPriceBook(),
      onProblem: (p) => problems.push(p.line),
    });
    assert.deepEqual(problems, [4, lines.length]);
    assert.equal(report.skipped, 2);
    assert.equal(report.total.records, b.records.length);
    assert.equal(report.total.turns, 1);
  });
});

Deno.test("stats credits each model pair of a switched session with its own tokens and price", async () => {
  await withTempDir(async (root) => {
    const id = sid("abab0001");
    const price = { cache_read: 1, cache_write: 10, output: 100 };
    const config = join(root, "default_project", ".project_config.toml");
    await addModel(config, { provider: "custom", model_id: "other", pricing: price });
    // Starts on anthropic/claude-sonnet-4-6 (catalog price), switches to custom/other
    // (configured price), rotates (the new file's meta names the pair it runs on), then to
    // custom/mock (no price).
    const b = traceBuilder(id, { provider: "anthropic", modelId: "claude-sonnet-4-6" }).meta()
      .tools().user("one").begin().text("1").usage(100, 10, 1).end();
    const switched = (provider: string, model_id: string, prev: [string, string]) =>
      eventMsg({
        type: "model_switched",
        provider,
        model_id,
        previous_provider: prev[0],
        previous_model_id: prev[1],
      });
    b.records.push(switched("custom", "other", ["anthropic", "claude-sonnet-4-6"]));
    b.user("two").begin().text("2").usage(200, 20, 2).end();
    const day = await tracesDay(root);
    await Deno.writeTextFile(join(day, `${id}_001.jsonl`), b.jsonl());
    const b2 = traceBuilder(id, { provider: "custom", modelId: "other" }).meta().tools()
      .user("three").begin().text("3").usage(300, 30, 3).end();
    b2.records.push(switched("custom", "mock", ["custom", "other"]));
    b2.user("four").begin().text("4").usage(400, 40, 4).end();
    await Deno.writeTextFile(join(day, `${id}_002.jsonl`), b2.jsonl());

    const sessions = await resolveTargets([root]);
    const byModel = await collectStats(sessions, { by: "model", prices: createPriceBook() });
    assert.deepEqual(byModel.rows.map((r) => [r.key, r.sessions, r.requests, r.tokens.total]), [
      ["anthropic/claude-sonnet-4-6", 1, 1, 111],
      ["custom/mock", 1, 1, 444],
      ["custom/other", 1, 2, 555],
    ]);
    const sonnet = findPreset("anthropic", "claude-sonnet-4-6")!.pricing;
    const expected = (100 * sonnet.cache_read + 10 * sonnet.cache_write + 1 * sonnet.output) / 1e6 +
      (500 * price.cache_read + 50 * price.cache_write + 5 * price.output) / 1e6;
    const [row] = (await collectStats(sessions, { prices: createPriceBook() })).rows;
    assert.ok(Math.abs(row!.cost.usd! - expected) < 1e-12, `${row!.cost.usd} vs ${expected}`);
    assert.deepEqual(row!.cost.unpriced, [{ model: "custom/mock", tokens: 444, requests: 1 }]);
    assert.deepEqual(row!.cost.prices, [
      { model: "anthropic/claude-sonnet-4-6", source: "catalog" },
      { model: "custom/other", source: "config" },
    ]);
    assert.deepEqual([...row!.models].sort(), [
      "anthropic/claude-sonnet-4-6",
      "custom/mock",
      "custom/other",
    ]);
  });
});
