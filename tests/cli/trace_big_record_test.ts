// One record of megabytes of short lines (a trace imported from elsewhere may hold records up to
// 64 MiB): `trace export --format html` shows a text too long for Markdown as plain text instead
// of failing in the Markdown lexer (attack round 18 imports B6).
import assert from "node:assert/strict";
import { join } from "node:path";
import { BIG_SESSION } from "../support/big_trace.ts";
import { REPO, runCli } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";

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
