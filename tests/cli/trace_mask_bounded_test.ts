// `trace show` and `trace export` of a 60 MB text that is one vault secret over and over (attack
// round 24 bounded): every match was listed before the text was rebuilt around them, millions of
// them, and the show went to 599 MB, the export to 609 MB. A long text is masked a slice at a
// time, and its pieces collected once joined: 267-271 MB. Real `penguin` processes; peaks as
// /usr/bin/time would report them.
import assert from "node:assert/strict";
import { join } from "node:path";
import { withRoot } from "../support/roots.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { setVault } from "../support/secrets.ts";
import { sessionMetaRecord } from "../support/trace_meta.ts";

const MB = 1000 * 1000;
/** What showing or exporting one 60 MB record may cost at the peak: under the 300 MB line. */
const PEAK_LIMIT = 290 * MB;
const ID = "session-2026-12-01-10-00-00-0b16c0de";
const TS = "2026-12-01T10:00:00.000Z";
const VALUE = "vlt-5e0a9d3c71b2f846";
/** 60 MB of the secret, a space between each. */
const TIMES = Math.floor(60 * MB / (VALUE.length + 1));
const TEXT = `${VALUE} `.repeat(TIMES);

/** A trace in `root` of one assistant answer `text`, with the vault secret set. */
async function answerTrace(root: string, text: string): Promise<void> {
  await setVault(root, "DB", VALUE);
  const dir = join(root, "default_project", "agents", "default_agent", "traces", "2026-12-01");
  await Deno.mkdir(dir, { recursive: true });
  const lines = [
    sessionMetaRecord(ID),
    { timestamp: TS, type: "event_msg", payload: { type: "request_begin" } },
    {
      timestamp: TS,
      type: "model_msg",
      payload: { type: "text", role: "assistant", text, stop_reason: "completed" },
    },
    { timestamp: TS, type: "event_msg", payload: { type: "request_end", status: "completed" } },
  ];
  await Deno.writeTextFile(
    join(dir, `${ID}_001.jsonl`),
    lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
  );
}

Deno.test({
  name: "trace show and export of a 60 MB text full of one vault secret: masked, peak ≤ 290 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withRoot(async (root) => {
      await answerTrace(root, TEXT);
      const marker = "[redacted:vault:DB]";
      const out = join(root, "export.md");
      const runs = {
        show: ["--root", root, "trace", "show", ID],
        export: ["--root", root, "trace", "export", ID, "--format", "md", "-o", out],
      };
      for (const [what, args] of Object.entries(runs)) {
        const r = await runCliPeak(args, root);
        assert.equal(r.code, 0, r.stderr);
        const text = what === "show" ? r.stdout : await Deno.readTextFile(out);
        assert.equal(text.includes(VALUE.slice(4, 14)), false, `${what}: the secret shows`);
        // The export holds the whole text; the show a long text's first lines.
        const count = text.split(marker).length - 1;
        if (what === "export") assert.equal(count, TIMES, "every one masked");
        else assert.ok(count > 0, "show: the text shown, masked");
        const peak = Math.round(r.peakBytes / MB);
        assert.ok(r.peakBytes <= PEAK_LIMIT, `${what}: peak ${peak} MB`);
      }
    });
  },
});

Deno.test({
  name: "trace export of 60 MB of the secret spelled in %NN escapes: masked, peak ≤ 290 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // Masked through the escape readings a slice at a time, whose garbage was collected only once
    // the whole text was masked: 467 MB (attack round 25 bounded C9).
    const unit = [...VALUE].map((c) => "%" + c.charCodeAt(0).toString(16)).join("") + " ";
    const times = Math.floor(60 * MB / unit.length);
    await withRoot(async (root) => {
      await answerTrace(root, unit.repeat(times));
      const out = join(root, "export.md");
      const r = await runCliPeak(["--root", root, "trace", "export", ID, "-o", out], root);
      assert.equal(r.code, 0, r.stderr);
      const text = await Deno.readTextFile(out);
      assert.equal(text.includes(unit.slice(0, 30)), false, "the escaped secret shows");
      assert.equal(text.split("[redacted:vault:DB]").length - 1, times, "every one masked");
      const peak = Math.round(r.peakBytes / MB);
      assert.ok(r.peakBytes <= PEAK_LIMIT, `peak ${peak} MB`);
    });
  },
});
