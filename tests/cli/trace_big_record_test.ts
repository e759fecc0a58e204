// One record of megabytes of short lines (a trace imported from elsewhere may hold records up to
// 64 MiB): `trace show` shows a bounded part of each text and says how many lines it left out,
// under a peak bound, and `trace export --format html` shows a text too long for Markdown as plain
// text instead of failing in the Markdown lexer (attack round 18 imports B5, B6).
import assert from "node:assert/strict";
import { join } from "node:path";
import { BIG_SESSION } from "../support/big_trace.ts";
import { REPO, runCli } from "../support/cli.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { withTempDir } from "../support/roots.ts";
import { sessionMetaRecord } from "../support/trace_meta.ts";

const MB = 1000 * 1000;
/** The most `trace show` may hold at its peak (the bound of docs/security.md for one command). */
const PEAK_LIMIT = 300 * MB;

const SAMPLE = join(REPO, "samples", "plain", `${BIG_SESSION}_001.jsonl`);
const TS = "2026-12-01T23:08:00.000Z";

/** Write samples/plain's trace plus one request holding `payloads` (model_msg payloads). */
async function writeTrace(dir: string, payloads: Record<string, unknown>[]): Promise<string> {
  const path = join(dir, `${BIG_SESSION}_001.jsonl`);
  const record = (type: string, payload: unknown) =>
    JSON.stringify({ timestamp: TS, type, payload }) + "\n";
  let text = (await Deno.readTextFile(SAMPLE)).trimEnd() + "\n";
  text += record("event_msg", { type: "request_begin" });
  for (const p of payloads) text += record("model_msg", p);
  text += record("event_msg", { type: "request_end", status: "completed" });
  await Deno.writeTextFile(path, text);
  return path;
}

const answer = (text: string) => ({
  type: "text",
  role: "assistant",
  text,
  stop_reason: "completed",
});

Deno.test({
  name: "trace show of a record of 6.6 million lines shows 2000, counts the rest, peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withTempDir("penguin-big-record-", async (dir) => {
      const lines = 6_600_000;
      const path = await writeTrace(dir, [
        answer("x\r\n".repeat(lines)),
        {
          type: "tool_call",
          role: "assistant",
          name: "exec_command",
          arguments: '{"cmd":"seq 3000000"}',
          tool_call_id: "c_seq",
          stop_reason: "completed",
        },
        {
          type: "tool_call_output",
          role: "user",
          tool_call_id: "c_seq",
          output: Array.from({ length: 3_000_000 }, (_, i) => i + 1).join("\n") + "\n",
          stop_reason: "completed",
        },
        answer("after the big ones"),
      ]);
      const r = await runCliPeak(["trace", "show", path], dir);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.peakBytes <= PEAK_LIMIT, `trace show peak ${Math.round(r.peakBytes / MB)} MB`);
      const out = r.stdout.split("\n");
      // The text: its first 2000 lines, then how many of the 6.6 million (and the empty one
      // after the last line break) were left out.
      const first = out.indexOf("x");
      assert.deepEqual(out.slice(first, first + 2000), Array(2000).fill("x"));
      assert.equal(
        out[first + 2000],
        `… ${lines + 1 - 2000} more lines not shown (trace export or --json shows them)`,
      );
      // The output collapses to its first and last 4 lines, counted whole.
      const call = out.findLastIndex((l) => l.includes("exec_command ->"));
      assert.match(out[call]!, /exec_command -> \(3000001 lines\)$/);
      assert.deepEqual(out.slice(call + 1, call + 10), [
        "  │ 1",
        "  │ 2",
        "  │ 3",
        "  │ 4",
        "  │ … 2999992 more lines (--verbose for full output)",
        "  │ 2999997",
        "  │ 2999998",
        "  │ 2999999",
        "  │ 3000000",
      ]);
      assert.ok(out.includes("after the big ones"), "the record after them is shown");
    });
  },
});

Deno.test("trace export --format html shows an 8 MB answer of short lines as plain text", async () => {
  await withTempDir("penguin-big-html-", async (dir) => {
    const big = "x\r\n<b>".repeat(1_000_000);
    const path = await writeTrace(dir, [answer(big), answer("a **bold** answer")]);
    const html = join(dir, "out.html");
    const r = await runCli(["trace", "export", "--format", "html", "-o", html, path]);
    assert.equal(r.code, 0, r.stderr);
    const page = await Deno.readTextFile(html);
    const plain = '<pre class="md-plain">' + "x\r\n&lt;b&gt;".repeat(1_000_000) + "</pre>";
    assert.ok(page.includes(plain), "the long answer is whole, escaped, in a <pre>");
    assert.ok(page.includes("<p>a <strong>bold</strong> answer</p>"), "a short one is Markdown");
  });
});

// Attack round 23 bounded B9: what each 60 MB record left (its text parsed, rendered, encoded)
// waited for a full collection; two took `trace export` to 650 MB, now about 330.
Deno.test({
  name: "trace export of two 60 MB records collects between them, peak ≤ 420 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "penguin-big-records-" });
    try {
      const root = join(dir, "root");
      const traces = join(
        root,
        "default_project",
        "agents",
        "default_agent",
        "traces",
        "2026-12-01",
      );
      await Deno.mkdir(traces, { recursive: true });
      const id = "session-2026-12-01-10-00-00-00000002";
      const ts = "2026-12-01T10:00:00.000Z";
      using f = await Deno.open(join(traces, `${id}_001.jsonl`), { write: true, create: true });
      const enc = new TextEncoder();
      const line = (o: unknown) => enc.encode(JSON.stringify(o) + "\n");
      await f.write(line(sessionMetaRecord(id, ts)));
      const text = "line of text\n".repeat(Math.floor(60 * MB / 13));
      for (let i = 0; i < 2; i++) {
        await f.write(
          line({ timestamp: ts, type: "event_msg", payload: { type: "request_begin" } }),
        );
        await f.write(line({
          timestamp: ts,
          type: "model_msg",
          payload: { type: "text", role: "assistant", text, stop_reason: "completed" },
        }));
        await f.write(line({
          timestamp: ts,
          type: "event_msg",
          payload: { type: "request_end", status: "completed" },
        }));
      }
      const out = join(dir, "x.md");
      const r = await runCliPeak(["--root", root, "trace", "export", id, "-o", out], dir);
      assert.equal(r.code, 0, r.stderr);
      assert.ok((await Deno.stat(out)).size > 100 * MB);
      assert.ok(r.peakBytes <= 420 * MB, `trace export peak ${Math.round(r.peakBytes / MB)} MB`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
