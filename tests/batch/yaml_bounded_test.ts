// YAML task files are bounded in cost like JSON lines: one task of a 90,000-key
// mapping (the yaml library's duplicate-key check is quadratic in it) ends in
// seconds, and millions of `- {}` nodes are refused before they are parsed.
// A penguin still running after KILL_AFTER seconds is SIGKILLed, failing the test.
import assert from "node:assert/strict";
import { CAN_MEASURE_PEAK } from "../support/peak_memory.ts";
import { type BatchPeak, batchRunPeak } from "./_batch_run.ts";

const MB = 1000 * 1000;
const PEAK_LIMIT = 300 * MB;
/** Generous: the bounded parse takes seconds; unbounded, this took minutes. */
const KILL_AFTER = 90;

/** `penguin batch run` of `yaml` as the task file. */
const batchRun = (yaml: string): Promise<BatchPeak> =>
  batchRunPeak("penguin-yamlb-", KILL_AFTER, "tasks.yaml", yaml);

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
  name: "batch run of 290 000 `- {}` YAML lines (2 MB) is refused before parsing, naming the bound",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const r = await batchRun("tasks:\n" + "  - {}\n".repeat(290_000));
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /tasks\.yaml: not parsed, too costly to parse: more than 50000 YAML nodes/,
    );
    assert.ok(r.peak <= PEAK_LIMIT, `peak ${Math.round(r.peak / MB)} MB`);
  },
});

const HEAD = "tasks:\n  - id: a\n    prompt: hi\n    junk:\n";

Deno.test({
  name: "batch run of a YAML task file over 2 MiB is refused before reading it, naming the size",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // Red team N5: 61 MB of escaped strings under the node bound peaked at 576 MB.
    const r = await batchRun(HEAD + `      - "${"\\u00e9".repeat(100)}"\n`.repeat(3_500));
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /cannot read the task file ".*tasks\.yaml": it is larger than 2 MiB/);
    assert.ok(r.peak <= PEAK_LIMIT, `peak ${Math.round(r.peak / MB)} MB`);
  },
});

Deno.test({
  name: "batch run of a 2 MB YAML task file of long keys or escapes stays under 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const keys = HEAD +
      Array.from({ length: 3_200 }, (_, i) => `      k${i}${"x".repeat(600)}: 1\n`).join("");
    const escapes = HEAD + `      - "${"\\u00e9".repeat(100)}"\n`.repeat(3_250);
    for (const yaml of [keys, escapes]) {
      assert.ok(yaml.length < 2 * 1024 * 1024 && yaml.length > 1_950_000, `${yaml.length}`);
      const r = await batchRun(yaml);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /task file is not valid/);
      assert.ok(r.peak <= PEAK_LIMIT, `peak ${Math.round(r.peak / MB)} MB`);
    }
  },
});

Deno.test({
  name: "batch run of a large anchor aliased 99 times is refused by what the aliases copy",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // Red team N7: a 60 MB anchor aliased 99 times peaked at 2.1 GB; here 1.9 MB, 190 MB copied.
    const yaml = `defaults:\n  prompt_text: &p "${"w".repeat(1_900_000)}"\ntasks:\n` +
      Array.from({ length: 99 }, (_, i) => `  - {id: t${i}, prompt: *p, workspace: w}\n`).join("");
    const r = await batchRun(yaml);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /tasks\.yaml:4: Aliases would copy more than 2 Mi characters/);
    assert.ok(r.peak <= PEAK_LIMIT, `peak ${Math.round(r.peak / MB)} MB`);
  },
});

Deno.test({
  name: "batch run: 49 990 duplicate keys make one error at the first; a !!binary item is refused",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const dups = await batchRun(
      HEAD + Array.from({ length: 49_990 }, (_, i) => `      k: ${i}\n`).join(""),
    );
    assert.equal(dups.code, 2, dups.stderr);
    assert.match(dups.stderr, /tasks\.yaml:6: Map keys must be unique/);
    assert.doesNotMatch(dups.stderr, /and \d+ more/);
    assert.ok(dups.peak <= PEAK_LIMIT, `peak ${Math.round(dups.peak / MB)} MB`);
    const bin = await batchRun(HEAD + `      - !!binary ${"QUFB".repeat(160)}\n`.repeat(2_800));
    assert.equal(bin.code, 2, bin.stderr);
    assert.match(bin.stderr, /tasks\.yaml:5: The tag !!binary is not allowed/);
    assert.doesNotMatch(bin.stderr, /and \d+ more/);
    assert.ok(bin.peak <= PEAK_LIMIT, `peak ${Math.round(bin.peak / MB)} MB`);
  },
});
