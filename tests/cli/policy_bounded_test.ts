// A penguin.jsonc the model planted may be huge or sparse: a session that loads it and
// `penguin trust --list` read it with a bound (red team pass 2, B5: 1.3 GB and 870 MB before).
import assert from "node:assert/strict";
import { join } from "node:path";
import { withWorkspace } from "../support/roots.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { runCli } from "../support/cli.ts";

const MAX_PEAK = 300 * 1000 * 1000;

Deno.test({
  name: "a 400 MiB sparse penguin.jsonc is refused unread by a session and by trust --list",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withWorkspace(async (ws) => {
      const root = join(ws, "..", `root-${crypto.randomUUID()}`);
      const policy = join(ws, "penguin.jsonc");
      try {
        // Trusted while small; then the model makes it huge.
        await Deno.writeTextFile(policy, "{}\n");
        const t = await runCli(["--root", root, "trust", ws]);
        assert.equal(t.code, 0, t.stderr);
        {
          using f = await Deno.open(policy, { write: true });
          await f.truncate(400 * 1024 ** 2);
        }
        const run = await runCliPeak(
          ["--root", root, "sandbox", "run", "--workspace", ws, "--", "true"],
          ws,
        );
        assert.notEqual(run.code, 0);
        assert.match(run.stderr, /holds 400 MiB; a workspace policy may hold at most 1 MiB/);
        assert.ok(run.peakBytes <= MAX_PEAK, `sandbox run peak ${run.peakBytes}`);
        const list = await runCliPeak(["--root", root, "trust", "--list"], ws);
        assert.equal(list.code, 0, list.stderr);
        assert.match(list.stdout, /^changed\s/m);
        assert.ok(list.peakBytes <= MAX_PEAK, `trust --list peak ${list.peakBytes}`);
      } finally {
        await Deno.remove(root, { recursive: true }).catch(() => {});
      }
    });
  },
});
