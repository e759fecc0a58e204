// YAML task files are bounded in cost like JSON lines: one task of a 90,000-key
// mapping (the yaml library's duplicate-key check is quadratic in it) ends in
// seconds, and millions of `- {}` nodes are refused before they are parsed.
// A penguin still running after KILL_AFTER seconds is SIGKILLed, failing the test.
import assert from "node:assert/strict";
import { join } from "node:path";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";

const MB = 1000 * 1000;
const PEAK_LIMIT = 300 * MB;
/** Generous: the bounded parse takes seconds; unbounded, this took minutes. */
const KILL_AFTER = 90;

async function batchRun(yaml: string): Promise<{ code: number; stderr: string; peak: number }> {
  const dir = await Deno.makeTempDir({ prefix: "penguin-yamlb-" });
  try {
    const file = join(dir, "tasks.yaml");
    await Deno.writeTextFile(file, yaml);
    const r = await runCliPeak(
      ["--root", join(dir, "root"), "batch", "run", file],
      dir,
      KILL_AFTER,
    );
    return { code: r.code, stderr: r.stderr, peak: r.peakBytes };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: "batch run of a YAML task with a 90,000-key mapping ends at once, refused by its schema",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const keys = Array.from({ length: 90_000 }, (_, i) => `    k${i}: v`).join("\n");
    const r = await batchRun(`tasks:\n  - id: a\n    prompt: hi\n${keys}\n`);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /task file is not valid/);
    assert.ok(r.peak <= PEAK_LIMIT, `peak ${Math.round(r.peak / MB)} MB`);
  },
});

Deno.test({
  name: "batch run of 3 M `- {}` YAML lines is refused before parsing, naming the bound",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const r = await batchRun("tasks:\n" + "  - {}\n".repeat(3_000_000));
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /tasks\.yaml: not parsed, too costly to parse: more than 100000 YAML nodes/,
    );
    assert.ok(r.peak <= PEAK_LIMIT, `peak ${Math.round(r.peak / MB)} MB`);
  },
});
