// A large trace (80 MB: 40 assistant texts of 2 MiB) is read record by record: `trace show` and
// `trace export -o` (md, html, json) stay under a peak bound far below what holding the trace,
// its conversation and the rendered document at once costs, and their output is still complete
// (it ends with the last record's text).
import assert from "node:assert/strict";
import { join } from "node:path";
import { LAST_MARK, writeBigTrace } from "../support/big_trace.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { withTempDir } from "../support/roots.ts";

const MB = 1000 * 1000;
/** The most penguin may hold at its peak reading the 80 MB trace. */
const PEAK_LIMIT = 250 * MB;

Deno.test({
  name: "trace show and trace export stream an 80 MB trace under a peak bound",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withTempDir("penguin-big-trace-", async (dir) => {
      const { path, bytes } = await writeBigTrace(dir, 40, 2 * 1024 * 1024);
      assert.ok(bytes > 80 * MB, `trace of ${bytes} bytes`);

      const show = await runCliPeak(["trace", "show", path], dir);
      assert.equal(show.code, 0, show.stderr);
      assert.ok(show.stdout.includes(LAST_MARK), "trace show printed the last record");
      assert.ok(show.peakBytes <= PEAK_LIMIT, `show peak ${Math.round(show.peakBytes / MB)} MB`);

      for (const format of ["md", "html", "json"]) {
        const out = join(dir, `export.${format}`);
        const r = await runCliPeak(["trace", "export", "-o", out, path], dir);
        assert.equal(r.code, 0, r.stderr);
        const text = await Deno.readTextFile(out);
        assert.ok(text.includes(LAST_MARK), `${format}: the export holds the last record`);
        assert.ok(
          text.trimEnd().endsWith(format === "html" ? "</html>" : format === "json" ? "}" : "_"),
          `${format}: the export is complete`,
        );
        if (format === "json") assert.equal(JSON.parse(text).items.length > 120, true);
        await Deno.remove(out);
        assert.ok(r.peakBytes <= PEAK_LIMIT, `${format} peak ${Math.round(r.peakBytes / MB)} MB`);
      }
    });
  },
});

Deno.test({
  name: "trace export --format otlp --include-content streams an 80 MB trace under a peak bound",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withTempDir("penguin-big-otlp-", async (dir) => {
      // Each answer is its own request, so every 2 MiB text goes on its own chat span.
      const { path, bytes } = await writeBigTrace(dir, 40, 2 * 1024 * 1024, {}, true);
      assert.ok(bytes > 80 * MB, `trace of ${bytes} bytes`);
      const out = join(dir, "export.otlp.json");
      const r = await runCliPeak(
        ["trace", "export", "--format", "otlp", "--include-content", "-o", out, path],
        dir,
      );
      assert.equal(r.code, 0, r.stderr);
      const req = JSON.parse(await Deno.readTextFile(out));
      const spans: {
        name: string;
        attributes: { key: string; value: { stringValue?: string } }[];
      }[] = req.resourceSpans[0].scopeSpans[0].spans;
      const outputs = spans.flatMap((s) =>
        s.attributes.filter((a) => a.key === "gen_ai.output.messages")
      );
      assert.ok(outputs.length >= 40, `${outputs.length} chat spans with content`);
      assert.ok(outputs.some((a) => a.value.stringValue!.includes(LAST_MARK)), "the last answer");
      assert.ok(spans.some((s) => s.name.startsWith("session ")), "the root span closes the file");
      assert.ok(r.peakBytes <= PEAK_LIMIT, `otlp peak ${Math.round(r.peakBytes / MB)} MB`);
    });
  },
});
