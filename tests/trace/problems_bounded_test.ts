// A trace of many broken lines: `trace validate` lists the first 1000 problems of a file and
// counts the others, `trace show` keeps at most 1000 for its one-line notice and still counts
// every skipped line (attack round 23 bounded A17: a 30 MB trace of a million broken records took
// `trace validate` to 620 MB and printed 100 MB, `trace show` to 362 MB).
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { rootTest } from "../support/root_test.ts";
import {
  keepProblem,
  MAX_KEPT_PROBLEMS,
  problemsLeftOut,
  skippedLinesNotice,
  type TraceProblem,
} from "../../lib/trace/reader.ts";
import { sessionMetaRecord } from "../support/trace_meta.ts";

const BROKEN = 3000;

async function brokenTrace(root: string): Promise<{ id: string; file: string }> {
  const dir = join(root, "default_project", "agents", "default_agent", "traces", "2026-12-01");
  await Deno.mkdir(dir, { recursive: true });
  const id = "session-2026-12-01-10-00-00-00000001";
  const meta = sessionMetaRecord(id);
  const bad = JSON.stringify({ timestamp: "", type: "event_msg", payload: { type: "n" } });
  const file = join(dir, `${id}_001.jsonl`);
  await Deno.writeTextFile(
    file,
    [JSON.stringify(meta), ...Array(BROKEN).fill(bad)].join("\n") + "\n",
  );
  return { id, file };
}

Deno.test(
  rootTest(
    "trace validate lists 1000 problems of a file and counts the others",
    false,
    async (root) => {
      const { file } = await brokenTrace(root);
      const r = await runCli(["--root", root, "trace", "validate", file]);
      assert.equal(r.code, 1);
      const text = r.stdout + r.stderr;
      assert.equal(text.split("expected an ISO-8601 timestamp").length - 1, 1000);
      assert.match(
        text,
        new RegExp(`${BROKEN - 1000} more problem\\(s\\) and warning\\(s\\) not listed`),
      );
    },
  ),
);

Deno.test(
  rootTest(
    "trace show counts every skipped line of a file of many broken ones",
    false,
    async (root) => {
      const { id } = await brokenTrace(root);
      const r = await runCli(["--root", root, "trace", "show", id]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`skipped ${BROKEN} malformed line\\(s\\) \\[2, 3, 4, `));
    },
  ),
);

Deno.test("keepProblem keeps 1000 problems and counts the others by file", () => {
  const list: TraceProblem[] = [];
  const keep = keepProblem(list);
  for (let i = 0; i < 2500; i++) {
    keep({ file: i % 2 ? "b" : "a", line: i + 1, kind: "invalid", reason: "x" });
  }
  assert.equal(list.length, MAX_KEPT_PROBLEMS);
  assert.equal(problemsLeftOut(list, "a") + problemsLeftOut(list, "b"), 1500);
  assert.match(
    skippedLinesNotice("a", list.filter((p) => p.file === "a"), problemsLeftOut(list, "a"))!,
    /^\[trace\] skipped 1250 malformed line\(s\)/,
  );
});
