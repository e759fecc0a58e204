// A JSON line of a file a user names is judged by its shape before it is parsed (red team final7
// N12-N22, N34, N35: one 60 MB line of `[{},…]` or nested 20 M deep cost 0.8-4.4 GB in every
// reader). `trace validate` and `trace show` report such a line as malformed and read on,
// `sessions import --from claude` refuses the file naming the line, `batch report` skips it; each
// stays under a peak bound far below what parsing the line costs (~700 MB for the 20 MB line).
import assert from "node:assert/strict";
import { join } from "node:path";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { REPO } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";

const MB = 1000 * 1000;
const PEAK_LIMIT = 250 * MB;
const MARK = "AFTER-THE-COSTLY-LINE-5d21";
const SAMPLE = join(REPO, "samples", "plain", "session-2026-12-01-23-07-39-9b411515_001.jsonl");

/** ~20 MB: one object holding 6.6 M empty objects (100 000 are allowed). */
const MANY = `{"type":"user","junk":[${"{},".repeat(6_600_000)}{}]}`;
/** ~10 MB: arrays nested 5 M deep (256 are allowed). */
const DEEP = `{"type":"user","x":${"[".repeat(5_000_000)}${"]".repeat(5_000_000)}}`;
/** ~40 MB: a Claude user message whose text is one flat string (a line over 16 Mi characters). */
const LONG = JSON.stringify({
  type: "user",
  sessionId: "s",
  cwd: "/tmp",
  uuid: "u1",
  timestamp: "2026-01-01T00:00:00Z",
  message: { role: "user", content: "x".repeat(40_000_000) },
});

/** A valid trace with `line` as its second line and an assistant text holding MARK last. */
async function traceWith(dir: string, name: string, line: string): Promise<string> {
  const [head, ...rest] = (await Deno.readTextFile(SAMPLE)).trimEnd().split("\n");
  const last = JSON.stringify({
    timestamp: "2026-12-01T23:09:00.000Z",
    type: "model_msg",
    payload: { type: "text", role: "assistant", text: MARK, stop_reason: "completed" },
  });
  const path = join(dir, name);
  await Deno.writeTextFile(path, [head, line, ...rest, last, ""].join("\n"));
  return path;
}

function underLimit(peak: number, what: string): void {
  assert.ok(peak <= PEAK_LIMIT, `${what}: peak ${Math.round(peak / MB)} MB`);
}

Deno.test({
  name: "trace validate and trace show report a too costly line and read on, under a peak bound",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withTempDir("penguin-json-lines-", async (dir) => {
      const root = join(dir, "root");
      const cases: [string, string, string][] = [
        ["many", MANY, "more than 100000 JSON objects and arrays"],
        ["deep", DEEP, "JSON objects and arrays nested more than 256 deep"],
      ];
      for (const [shape, line, bound] of cases) {
        const path = await traceWith(dir, `${shape}.jsonl`, line);
        const v = await runCliPeak(["--root", root, "trace", "validate", path], dir);
        assert.equal(v.code, 1, v.stderr);
        const out = v.stdout + v.stderr;
        assert.ok(out.includes(`${path}:2: too costly to parse: ${bound}`), out);
        assert.match(out, /1 problem\(s\)/);
        underLimit(v.peakBytes, `trace validate (${shape})`);

        const s = await runCliPeak(["--root", root, "trace", "show", path], dir);
        assert.equal(s.code, 0, s.stderr);
        assert.ok(s.stdout.includes(MARK), "trace show read on past the costly line");
        assert.match(s.stderr, /skipped 1 malformed line\(s\) \[2\]/);
        underLimit(s.peakBytes, `trace show (${shape})`);
      }
    });
  },
});

Deno.test({
  name: "sessions import --from claude refuses a file with a too costly line, naming the line",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withTempDir("penguin-json-lines-", async (dir) => {
      const root = join(dir, "root");
      const ws = join(dir, "ws");
      await Deno.mkdir(ws);
      // A flat 40 MB string is no costly shape, but importing it took ~700 MB in copies.
      const cases: [string, string][] = [["many", MANY], ["deep", DEEP], ["long", LONG]];
      for (const [shape, line] of cases) {
        const path = join(dir, `${shape}-claude.jsonl`);
        await Deno.writeTextFile(path, line + "\n");
        const r = await runCliPeak(
          ["--root", root, "sessions", "import", path, "--from", "claude", "--workspace", ws],
          dir,
        );
        assert.equal(r.code, 1, r.stderr);
        const out = r.stdout + r.stderr;
        assert.ok(out.includes(path), out);
        assert.match(out, /line 1: not parsed, too costly to parse: /);
        assert.match(out, /0 session\(s\) imported, 1 refused/);
        underLimit(r.peakBytes, `sessions import --from claude (${shape})`);
      }
    });
  },
});

Deno.test({
  name: "batch report skips a too costly line of a results file and reads on, under a peak bound",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withTempDir("penguin-json-lines-", async (dir) => {
      const path = join(dir, "results.jsonl");
      const done = { id: "t1", outcome: "completed", at: "2026-12-01T10:00:00.000Z" };
      await Deno.writeTextFile(path, `${MANY}\n${JSON.stringify(done)}\n`);
      const r = await runCliPeak(["--root", join(dir, "root"), "batch", "report", path], dir);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /1 task\(s\) from 1 results file\(s\)/);
      assert.match(r.stdout, /completed\s+1/);
      underLimit(r.peakBytes, "batch report");
    });
  },
});
