// An agent's system_config.yaml is read by every command: a broken one of many
// YAML errors is refused with its first error, in bounded memory. Red team
// N28: 18 990 lines `- a: b: c: d: e: f` (404 KB) took `mcp list` to 409 MB
// when the yaml library built every error.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCliOk } from "../support/cli.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";

const MB = 1000 * 1000;
const PEAK_LIMIT = 300 * MB;

Deno.test({
  name: "a system_config.yaml of thousands of YAML errors is refused at its first, bounded",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "penguin-cfgerr-" });
    try {
      const root = join(dir, "root");
      await runCliOk(["--root", root, "mcp", "list"]);
      const file = join(
        root,
        "default_project/agents/default_agent/agent_state/system_config.yaml",
      );
      const good = await Deno.readTextFile(file);
      for (const lines of [18_990, 3_000]) {
        await Deno.writeTextFile(file, good + "junk:\n" + "- a: b: c: d: e: f\n".repeat(lines));
        const r = await runCliPeak(["--root", root, "mcp", "list"], dir, 120);
        assert.notEqual(r.code, 0, r.stderr);
        assert.ok(r.stderr.length < 2000, r.stderr.slice(0, 2000));
        assert.match(
          r.stderr,
          lines > 4_000
            ? /system_config\.yaml: not parsed, too costly to parse: more than 20000 YAML nodes/
            : /system_config\.yaml": line \d+, column \d+: /,
        );
        assert.ok(r.peakBytes <= PEAK_LIMIT, `peak ${Math.round(r.peakBytes / MB)} MB`);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
