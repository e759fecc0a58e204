// `sessions list` looks at 32 sessions at once, each at its first and last lines: together those
// looks read and inspect at most LOOK_BUDGET bytes, with a full collection after large ones. 40
// traces whose last record is 7.9 MB (an assistant text a model may write, one per subagent
// session) took the listing to 565-620 MB (attack round 23 bounded B7).
import assert from "node:assert/strict";
import { join } from "node:path";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { rootTest } from "../support/root_test.ts";
import { sessionMetaRecord } from "../support/trace_meta.ts";

const MB = 1000 * 1000;

Deno.test(rootTest(
  "sessions list of 40 sessions whose last record is 7.9 MB stays under 300 MB",
  !CAN_MEASURE_PEAK,
  async (root) => {
    const traces = join(root, "default_project", "agents", "default_agent", "traces", "2026-12-01");
    await Deno.mkdir(traces, { recursive: true });
    const src = join(root, "..", `big-${crypto.randomUUID()}.jsonl`);
    const meta = sessionMetaRecord("session-2026-12-01-10-00-00-00000000");
    const last = {
      timestamp: "2026-12-01T10:00:01.000Z",
      type: "event_msg",
      payload: { type: "note", text: "T".repeat(7_900_000) },
    };
    await Deno.writeTextFile(src, JSON.stringify(meta) + "\n" + JSON.stringify(last) + "\n");
    try {
      // Hard links: 40 sessions of one file's disk.
      for (let i = 0; i < 40; i++) {
        const id = `session-2026-12-01-10-00-00-${String(i).padStart(8, "0")}`;
        await Deno.link(src, join(traces, `${id}_001.jsonl`));
      }
      const r = await runCliPeak(["--root", root, "sessions", "list", "--limit", "50"], root);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.split("session-2026-12-01-10-00-00-").length - 1, 40);
      assert.ok(r.peakBytes <= 300 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
    } finally {
      await Deno.remove(src);
    }
  },
));
