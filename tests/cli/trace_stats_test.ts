import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import {
  fixtureFiles,
  FIXTURES,
  fixturesPresent,
  sid,
  traceBuilder,
  tracesDay,
  withTempDir,
} from "../inspect/_support.ts";

// Totals computed straight from the files, independently of the scanner.
function fixtureTotals() {
  let requests = 0;
  let tokens = 0;
  let calls = 0;
  for (const f of fixtureFiles()) {
    for (const line of Deno.readTextFileSync(f).split("\n")) {
      if (!line.trim()) continue;
      const m = JSON.parse(line);
      if (m.payload.type === "request_begin") requests++;
      if (m.payload.type === "token_usage") tokens += m.payload.request.total;
      if (m.payload.type === "tool_call") calls++;
    }
  }
  return { requests, tokens, calls };
}

Deno.test({
  name: "penguin trace stats over the fixtures matches the files and shows the cost as unknown",
  ignore: !fixturesPresent,
  async fn() {
    const expected = fixtureTotals();
    const j = await runCli(["trace", "stats", "--json", FIXTURES]);
    assert.equal(j.code, 0, j.stderr);
    const report = JSON.parse(j.stdout);
    assert.equal(report.by, "session");
    assert.equal(report.total.requests, expected.requests);
    assert.equal(report.total.tokens.total, expected.tokens);
    assert.equal(report.total.tools.calls, expected.calls);
    assert.equal(report.total.cost.usd, null);
    assert.deepEqual(report.total.cost.unpriced.map((u: { model: string }) => u.model), [
      "custom/mock",
    ]);
    const t = await runCli(["trace", "stats", FIXTURES]);
    assert.equal(t.code, 0, t.stderr);
    assert.match(t.stdout, /^ {2}cost: unknown \(no price for custom\/mock\)$/m);
    assert.match(t.stdout, new RegExp(`^ {2}requests: ${expected.requests} · turns \\d+`, "m"));
    assert.ok(!t.stdout.includes("\x1b["), "no ANSI codes");
  },
});

Deno.test("penguin trace stats finds a session id in the data root and counts the whole root given as the target", async () => {
  await withTempDir(async (root) => {
    const a = traceBuilder(sid("12345678")).meta().user("x").begin().text("y").usage(1, 2, 3).end();
    const b = traceBuilder(sid("87654321")).meta().user("x").begin().end("failed", {
      error_message: "bad request",
      attempt: 1,
    });
    const day = await tracesDay(root);
    await Deno.writeTextFile(join(day, `${sid("12345678")}_001.jsonl`), a.jsonl());
    await Deno.writeTextFile(join(day, `${sid("87654321")}_001.jsonl`), b.jsonl());
    // An agent's scratch file is not a trace.
    const scratch = join(root, "default_project", "agents", "default_agent", "scratchpad");
    await Deno.mkdir(scratch, { recursive: true });
    await Deno.writeTextFile(join(scratch, "notes.jsonl"), '{"not":"a trace"}\n');

    const one = await runCli(["trace", "stats", "--json", "--root", root, "12345678"]);
    assert.equal(one.code, 0, one.stderr);
    const r1 = JSON.parse(one.stdout);
    assert.deepEqual(r1.rows.map((r: { key: string }) => r.key), [sid("12345678")]);
    assert.equal(r1.total.tokens.total, 6);

    const all = await runCli(["trace", "stats", "--json", root]);
    assert.equal(all.code, 0, all.stderr);
    const r2 = JSON.parse(all.stdout);
    assert.equal(r2.total.sessions, 2);
    assert.equal(r2.skipped_lines, 0);
    assert.deepEqual(r2.total.failures.by, [
      {
        status: "failed",
        class: "other",
        label: "failed",
        error_message: "bad request",
        count: 1,
        retried: 0,
      },
    ]);

    const csv = await runCli(["trace", "stats", "--csv", "--by", "day", root]);
    assert.equal(csv.code, 0, csv.stderr);
    const rows = csv.stdout.trim().split("\n");
    assert.match(rows[0]!, /^key,sessions,files,records,/);
    assert.deepEqual(rows.slice(1).map((r) => r.split(",")[0]), ["2026-03-04", "total"]);
  });
});

Deno.test("penguin trace stats rejects a bad --by, --since and a missing target with exit 2 or 1", async () => {
  const by = await runCli(["trace", "stats", "--by", "week", "/tmp"]);
  assert.equal(by.code, 2);
  assert.match(by.stderr, /--by must be one of session, day, model, tool, agent, got "week"/);
  const since = await runCli(["trace", "stats", "--since", "yesterday", "/tmp"]);
  assert.equal(since.code, 2);
  assert.match(since.stderr, /--since must be a date/);
  const missing = await runCli(["trace", "stats", "/nonexistent/penguin/x.jsonl"]);
  assert.equal(missing.code, 1);
  assert.match(
    missing.stderr,
    /Cannot read "\/nonexistent\/penguin\/x.jsonl": no such file or directory/,
  );
});

Deno.test("penguin trace stats counts failures by class: a refused connection is not a timeout", async () => {
  await withTempDir(async (root) => {
    // The raw Deno text older traces hold, and the headline format penguin records now.
    const refused =
      "fetch failed: error sending request for url (http://127.0.0.1:9/v1/chat/completions): client error (Connect): tcp connect error: Connection refused (os error 111)";
    const b = traceBuilder(sid("0000feed")).meta().user("x")
      .begin().end("timeout", { error_message: refused, attempt: 1, retry_in_ms: 2000 })
      .begin().end("timeout", {
        error_message: "connection refused by 127.0.0.1:9: fetch failed",
        attempt: 2,
        retry_in_ms: 4000,
      })
      .begin().end("timeout", {
        error_message: "HTTP 503 from 127.0.0.1:9: Overloaded (overloaded)",
        attempt: 3,
        retry_in_ms: 8000,
      })
      .begin().end("failed", {
        error_message: "DNS lookup failed for x.invalid (Name or service not known): fetch failed",
        attempt: 4,
      });
    const day = await tracesDay(root);
    await Deno.writeTextFile(join(day, `${sid("0000feed")}_001.jsonl`), b.jsonl());
    const j = await runCli(["trace", "stats", "--json", "--root", root]);
    assert.equal(j.code, 0, j.stderr);
    const f = JSON.parse(j.stdout).total.failures;
    assert.deepEqual(f.by_class, [
      { label: "connection refused", class: "refused", count: 2, retried: 2 },
      { label: "HTTP 503", class: "http", count: 1, retried: 1 },
      { label: "DNS failure", class: "dns", count: 1, retried: 0 },
    ]);
    const t = await runCli(["trace", "stats", "--root", root]);
    assert.equal(t.code, 0, t.stderr);
    assert.match(
      t.stdout,
      /^ {2}request failures: 4 \(3 retried\) · connection refused × 2 · HTTP 503 × 1 · DNS failure × 1$/m,
    );
    assert.match(t.stdout, /^ {4}connection refused × 1 \(1 retried\): fetch failed: /m);
    assert.doesNotMatch(t.stdout, /timeout ×/);
  });
});
