// A bad batch task file is refused with its first twenty problems, and reading
// stops there: files of hundreds of thousands of errors (red team N10, N17,
// N18, N19, N32, N33) took penguin to 0.3–2 GB when every problem was built
// and formatted. A penguin still running after KILL_AFTER seconds is
// SIGKILLed, failing the test.
import assert from "node:assert/strict";
import { CAN_MEASURE_PEAK } from "../support/peak_memory.ts";
import { type BatchPeak, batchRunPeak } from "./_batch_run.ts";

const MB = 1000 * 1000;
const PEAK_LIMIT = 300 * MB;
const KILL_AFTER = 120;

/** `penguin batch run` of `text` as the task file `name`. */
const batchRun = (name: string, text: string): Promise<BatchPeak> =>
  batchRunPeak("penguin-probb-", KILL_AFTER, name, text);

function assertBounded(r: { code: number; stderr: string; peak: number }): void {
  assert.equal(r.code, 2, r.stderr.slice(-2000));
  assert.match(r.stderr, /task file is not valid; nothing ran/);
  assert.ok(r.stderr.length < 8000, `${r.stderr.length} characters of output`);
  assert.ok(r.peak <= PEAK_LIMIT, `peak ${Math.round(r.peak / MB)} MB`);
}

const count = (s: string, re: RegExp) => s.match(re)?.length ?? 0;

Deno.test({
  name: "batch run of 2 MB of `- a: b: c: d: e: f` lines is refused by its weight, not parsed",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // N19: 83 716 lines, four YAML errors each: 1.36 GB. N10: one error a line: 653 MB.
    for (const line of ["- a: b: c: d: e: f\n", `- a: b: c${"x".repeat(8)}\n`]) {
      const r = await batchRun("tasks.yaml", line.repeat(Math.floor(2_090_000 / line.length)));
      assertBounded(r);
      assert.match(r.stderr, /tasks\.yaml: not parsed, too costly to parse: more than 50000 YAML/);
      assert.match(r.stderr, /write a large batch as JSON lines \(\.jsonl\)/);
    }
  },
});

Deno.test({
  name: "batch run of a YAML file of 9 990 lines of four errors each shows twenty and stops",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const r = await batchRun("tasks.yaml", "- a: b: c: d: e: f\n".repeat(9_990));
    assertBounded(r);
    assert.equal(count(r.stderr, /tasks\.yaml:\d+: Nested mappings/g), 20, r.stderr);
    assert.match(
      r.stderr,
      /tasks\.yaml:1: Nested mappings are not allowed in compact mappings at line 1, column 6\n/,
    );
    assert.match(r.stderr, /… and more: reading stopped at .*tasks\.yaml:6, past 20 problems/);
  },
});

Deno.test({
  name: "batch run of 24 990 tasks without a workspace shows twenty problems and stops",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // N18: 49 491 such tasks (1.48 MB, now past the node bound) peaked at 379 MB.
    const tasks = (n: number) =>
      "tasks:\n" +
      Array.from({ length: n }, (_, i) => `  - id: t${i}\n    prompt: x\n`).join("");
    const r = await batchRun("tasks.yaml", tasks(24_990));
    assertBounded(r);
    assert.equal(count(r.stderr, /tasks\[\d+\]\.workspace: /g), 20, r.stderr);
    assert.match(r.stderr, /… and more: reading stopped at .*tasks\.yaml:42, past 20 problems/);
    const big = await batchRun("tasks.yaml", tasks(49_491));
    assertBounded(big);
    assert.match(big.stderr, /more than 50000 YAML nodes/);
  },
});

Deno.test({
  name: "batch run of a task of 49 980 unknown keys names five of them and counts the rest",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // N17: 98 983 keys, all listed in one message: 298 MB.
    const keys = Array.from({ length: 49_980 }, (_, i) => `    k${i}xxxxxxxxxxxxxxxx: 1\n`);
    const r = await batchRun("tasks.yaml", `tasks:\n  - id: a\n    prompt: hi\n${keys.join("")}`);
    assertBounded(r);
    assert.match(
      r.stderr,
      /tasks\[0\]: unknown keys "k0x+", "k1x+", "k2x+", "k3x+", "k4x+" and 49975 more/,
    );
  },
});

/** As many lines `line(i)` (all of one length) as fit in 64 MiB less 4 KiB. */
function jsonl(line: (i: number) => string): string {
  const n = Math.floor((64 * 1024 * 1024 - 4096) / (line(0).length + 1));
  return Array.from({ length: n }, (_, i) => line(i)).join("\n") + "\n";
}

const id7 = (i: number) => String(i).padStart(7, "0");

Deno.test({
  name:
    "batch run of 64 MiB of short JSON lines without a workspace shows twenty problems and stops",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // N32: 2 164 669 such lines: 2 GB, 97 s.
    const text = jsonl((i) => `{"id":"t${id7(i)}","prompt":"x"}`);
    assert.ok(text.length > 60 * 1024 * 1024 && text.length < 64 * 1024 * 1024, `${text.length}`);
    const r = await batchRun("tasks.jsonl", text);
    assertBounded(r);
    assert.equal(count(r.stderr, /tasks\.jsonl:\d+: workspace: /g), 20, r.stderr);
    assert.match(r.stderr, /… and more: reading stopped at .*tasks\.jsonl:21, past 20 problems/);
  },
});

Deno.test({
  name: "batch run of 64 MiB of JSON lines of one id shows twenty duplicates and stops",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // N33: 1 677 619 such lines: 1.3 GB.
    const text = jsonl(() => `{"id":"a","prompt":"x","workspace":"w"}`);
    const r = await batchRun("tasks.jsonl", text);
    assertBounded(r);
    assert.equal(count(r.stderr, /id "a" is used already \(line 1\)/g), 20, r.stderr);
    assert.match(r.stderr, /reading stopped at .*tasks\.jsonl:22, past 20 problems/);
  },
});

Deno.test({
  name: "batch run of more than 100 000 valid JSON-lines tasks is refused at the 100 001st",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // 2 M unique ids would each be kept (a task object, its path, its id).
    const text = jsonl((i) => `{"id":"t${id7(i)}","prompt":"x","workspace":"w"}`);
    const r = await batchRun("tasks.jsonl", text);
    assertBounded(r);
    assert.match(
      r.stderr,
      /tasks\.jsonl:100001: more than 100000 tasks; split it into several files/,
    );
  },
});
