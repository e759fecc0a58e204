import assert from "node:assert/strict";
import { join } from "node:path";
import {
  dateDirName,
  findLatestTraceFile,
  listSessionFiles,
  parseTraceFileName,
  traceFileName,
  traceFilePath,
  tracesDirOf,
} from "../../lib/trace/mod.ts";
import { PenguinError } from "../../lib/protocol/mod.ts";
import { sessionId, withTempDir } from "./_support.ts";

Deno.test("trace file names pad the index to three digits and parse back", () => {
  const id = sessionId();
  assert.equal(traceFileName(id, 1), `${id}_001.jsonl`);
  assert.equal(traceFileName(id, 42), `${id}_042.jsonl`);
  assert.deepEqual(parseTraceFileName(`${id}_007.jsonl`), { sessionId: id, index: 7 });
  assert.deepEqual(parseTraceFileName(traceFileName(id, 1234)), { sessionId: id, index: 1234 });
  assert.equal(parseTraceFileName(`${id}.jsonl`), null);
  assert.equal(parseTraceFileName(`${id}_01.jsonl`), null);
  assert.equal(parseTraceFileName(`${id}_001.json`), null);
});

Deno.test("trace paths are <agentDir>/traces/<local yyyy-mm-dd>/<sessionId>_<NNN>.jsonl", () => {
  const id = sessionId();
  const tracesDir = tracesDirOf("/data/p/agents/a");
  assert.equal(tracesDir, "/data/p/agents/a/traces");
  assert.equal(
    traceFilePath(tracesDir, "2026-03-04", id, 2),
    `/data/p/agents/a/traces/2026-03-04/${id}_002.jsonl`,
  );
  // Local date, not UTC: built from a local-time Date.
  assert.equal(dateDirName(new Date(2026, 0, 9, 23, 59)), "2026-01-09");
  assert.equal(dateDirName(new Date(2026, 11, 31, 0, 1)), "2026-12-31");
});

Deno.test("session ids that could escape the traces directory are refused", () => {
  for (const bad of ["../x", "a/b", "", ".", "x y"]) {
    assert.throws(
      () => traceFileName(bad, 1),
      (e) => e instanceof PenguinError && e.kind === "usage",
      bad,
    );
  }
  assert.throws(() => traceFileName(sessionId(), 0), PenguinError);
});

Deno.test("findLatestTraceFile picks the highest index across every date directory", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId("11111111");
    const other = sessionId("22222222");
    const files = [
      ["2026-01-01", `${id}_001.jsonl`],
      ["2026-01-01", `${id}_002.jsonl`],
      ["2026-01-02", `${id}_003.jsonl`],
      ["2026-01-03", `${other}_009.jsonl`],
      ["2026-01-03", `${id}x_010.jsonl`],
      ["2026-01-03", `notes.txt`],
    ];
    for (const [d, f] of files) {
      await Deno.mkdir(join(dir, d!), { recursive: true });
      await Deno.writeTextFile(join(dir, d!, f!), "");
    }
    const latest = await findLatestTraceFile(dir, id);
    assert.deepEqual(latest, {
      path: join(dir, "2026-01-02", `${id}_003.jsonl`),
      dateDir: "2026-01-02",
      sessionId: id,
      index: 3,
    });
    const all = await listSessionFiles(dir, id);
    assert.deepEqual(all.map((f) => [f.dateDir, f.index]), [["2026-01-01", 1], ["2026-01-01", 2], [
      "2026-01-02",
      3,
    ]]);
    assert.equal(await findLatestTraceFile(dir, sessionId("33333333")), null);
    assert.equal(await findLatestTraceFile(join(dir, "missing"), id), null);
    assert.deepEqual(await listSessionFiles(join(dir, "missing"), id), []);
  });
});
