// `penguin batch report`: results files of several data roots merged (text, JSON),
// and the HTML page opened in headless Chromium (self-contained, hostile text inert).
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { runCli } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";
import type { ResultRecord } from "../../lib/batch/results.ts";
import { hostHas } from "../support/host_tools.ts";

const HOSTILE = `<img src=x onerror="document.title='pwned'">model said no`;

function rec(r: Partial<ResultRecord> & Pick<ResultRecord, "id" | "outcome">): string {
  return JSON.stringify({ at: "2026-01-01T00:00:00Z", ...r }) + "\n";
}

const tokens = (total: number) => ({ input: total - 10, output: 10, total });

/** Three pods' data roots: index-0 .. index-2, as the Job's volume holds them. */
async function writePods(dir: string): Promise<string[]> {
  const roots = [0, 1, 2].map((i) => join(dir, `index-${i}`));
  for (const r of roots) await Deno.mkdir(join(r, "data"), { recursive: true });
  await Deno.writeTextFile(
    join(roots[0]!, "results.jsonl"),
    rec({ id: "a", outcome: "started", session_id: "session-a" }) +
      rec({
        id: "a",
        outcome: "completed",
        session_id: "session-a",
        turns: 2,
        tokens: tokens(100),
        cost: 0.5,
        wall_ms: 1000,
      }) +
      rec({ id: "d", outcome: "started", session_id: "session-d" }) +
      rec({
        id: "d",
        outcome: "failed",
        session_id: "session-d",
        turns: 5,
        tokens: tokens(300),
        cost: 1,
        wall_ms: 4000,
        reason: "max turns (5) reached",
      }),
  );
  await Deno.writeTextFile(
    join(roots[1]!, "results.jsonl"),
    // b was killed (no final line), then resumed in the same session by the retried pod.
    rec({ id: "b", outcome: "started", session_id: "session-b" }) +
      rec({ id: "b", outcome: "started", session_id: "session-b", resumed: true }) +
      rec({
        id: "b",
        outcome: "completed",
        session_id: "session-b",
        turns: 1,
        tokens: tokens(250),
        cost: 0.25,
        wall_ms: 2000,
        resumed: true,
      }) +
      rec({
        id: "e",
        outcome: "failed",
        session_id: "session-e",
        turns: 5,
        tokens: tokens(200),
        cost: null,
        wall_ms: 3000,
        reason: "max turns (7) reached",
      }),
  );
  await Deno.writeTextFile(
    join(roots[2]!, "results.jsonl"),
    rec({
      id: "c",
      outcome: "completed",
      session_id: "session-c",
      turns: 1,
      tokens: tokens(50),
      cost: 0.1,
      wall_ms: 500,
    }) +
      rec({ id: "f", outcome: "started", session_id: "session-f" }) +
      rec({ id: "g", outcome: "aborted", session_id: "session-g", wall_ms: 100, reason: HOSTILE }),
  );
  return roots;
}

Deno.test("batch report merges the results of several data roots: counts, tokens, cost, wall time, failures by reason", async () => {
  await withTempDir("penguin-batch-report-", async (dir) => {
    const roots = await writePods(dir);
    const j = await runCli(["batch", "report", ...roots, "--json"]);
    assert.equal(j.code, 1, j.stderr);
    const r = JSON.parse(j.stdout);
    assert.equal(r.files, 3);
    assert.equal(r.tasks, 7);
    assert.deepEqual([r.completed, r.failed, r.aborted, r.interrupted], [3, 2, 1, 1]);
    assert.equal(r.duplicate_completions, 0);
    assert.equal(r.tokens.total, 100 + 300 + 250 + 200 + 50);
    assert.equal(r.cost, 0.5 + 1 + 0.25 + 0.1);
    assert.equal(r.unpriced, 1);
    // Wall times per task: 100 (g), 0 (f), 500, 1000, 2000, 3000, 4000.
    assert.deepEqual(r.wall_ms, { p50: 1000, p95: 4000, total: 10600 });
    assert.deepEqual(r.failures[0], { reason: "max turns (5) reached", count: 2, ids: ["d", "e"] });
    const b = r.by_task.find((t: { id: string }) => t.id === "b");
    assert.equal(b.attempts, 2);
    assert.equal(b.outcome, "completed");

    // The whole volume as one directory gives the same report.
    const whole = await runCli(["batch", "report", dir, "--json"]);
    assert.deepEqual(JSON.parse(whole.stdout), r);

    const text = await runCli(["batch", "report", ...roots]);
    assert.match(text.stdout, /^Batch report: 7 task\(s\) from 3 results file\(s\)$/m);
    assert.match(text.stdout, /^ {2}completed {4}3$/m);
    assert.match(text.stdout, /^Cost: \$1\.85 \(1 task\(s\) unpriced\)$/m);
    assert.match(text.stdout, /^Wall time per task: p50 1s · p95 4s · total 10\.6s$/m);
    assert.match(text.stdout, /^ {5}2 {2}max turns \(5\) reached {2}\(d, e\)$/m);
    assert.match(text.stdout, /^ {5}1 {2}killed before it ended {2}\(f\)$/m);

    const none = await runCli(["batch", "report", join(dir, "index-0", "data")]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no results file/);
  });
});

const CHROMIUM = "/usr/bin/chromium";
const present = hostHas(CHROMIUM);

Deno.test({
  name: "batch report --html renders in headless Chromium, self-contained, a hostile reason inert",
  ignore: !present,
  async fn() {
    await withTempDir("penguin-batch-html-", async (dir) => {
      const roots = await writePods(dir);
      const page = join(dir, "report.html");
      const r = await runCli(["batch", "report", ...roots, "--html", page]);
      assert.equal(r.code, 1, r.stderr);
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
      });
      try {
        const tab = await browser.newPage();
        const requests: string[] = [];
        tab.on("request", (req) => requests.push(req.url()));
        const url = pathToFileURL(page).href;
        await tab.goto(url);
        assert.match(
          await tab.textContent("#summary") ?? "",
          /7 task\(s\) from 3 results file\(s\)/,
        );
        const counts = await tab.$$eval("#counts tr", (rows) => rows.map((r) => r.textContent));
        assert.deepEqual(counts.slice(1), ["completed3", "failed2", "aborted1", "interrupted1"]);
        assert.equal(await tab.$$eval("#tasks tr", (rows) => rows.length), 8);
        // The model's text is shown as text, never as markup.
        assert.equal(await tab.$$eval("img", (imgs) => imgs.length), 0);
        assert.notEqual(await tab.title(), "pwned");
        assert.ok((await tab.textContent("#failures") ?? "").includes(HOSTILE));
        assert.deepEqual(requests, [url]);
      } finally {
        await browser.close();
      }
    });
  },
});
