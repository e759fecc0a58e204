// Importing any one file of a rotated (compacted) session imports the whole session; a
// missing sibling refuses it, naming the file.
import assert from "node:assert/strict";
import { join } from "node:path";
import { importTraces, listSessions, locateSession } from "../../lib/session/mod.ts";
import { fixture, scope, withRoot } from "./_support.ts";
import { runCli } from "../support/cli.ts";

const into = (root: string) => ({
  ...scope(root),
  workspace: { path: root, from: "--workspace" as const },
});

/** A directory holding `04-compaction_<index>.jsonl` copies of the fixture's rotated files. */
async function withRotated(
  indexes: number[],
  body: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "penguin-rot-" });
  try {
    for (const i of indexes) {
      const name = `04-compaction_00${i}.jsonl`;
      await Deno.copyFile(fixture(`04-compaction_00${Math.min(i, 2)}.jsonl`), join(dir, name));
    }
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

for (const given of [1, 2]) {
  Deno.test(`importing only _00${given} of a rotated session brings its sibling`, async () => {
    await withRotated([1, 2], async (dir) => {
      await withRoot(async (root) => {
        const report = await importTraces(
          [join(dir, `04-compaction_00${given}.jsonl`)],
          into(root),
        );
        assert.equal(report.ok, true, JSON.stringify(report.refused));
        assert.equal(report.imported.length, 1);
        const s = report.imported[0]!;
        assert.deepEqual(s.files.map((f) => f.source), [
          join(dir, "04-compaction_001.jsonl"),
          join(dir, "04-compaction_002.jsonl"),
        ]);
        const located = await locateSession({ ...scope(root), target: s.sessionId });
        assert.deepEqual(located.files.map((f) => f.index), [1, 2]);
        const src = await Deno.readTextFile(join(dir, "04-compaction_002.jsonl"));
        const dst = await Deno.readTextFile(s.files[1]!.path);
        assert.deepEqual(
          dst.split("\n").slice(1),
          src.split("\n").slice(1),
          "records copied verbatim",
        );
      });
    });
  });
}

for (const [present, missing] of [[[2], "001"], [[1, 3], "002"]] as const) {
  Deno.test(`a rotated session without _${missing} is refused, naming it`, async () => {
    await withRotated([...present], async (dir) => {
      await withRoot(async (root) => {
        const report = await importTraces(
          [join(dir, `04-compaction_00${present[0]}.jsonl`)],
          into(root),
        );
        assert.equal(report.ok, false);
        assert.deepEqual(report.imported, []);
        assert.equal(report.refused.length, 1);
        assert.deepEqual(report.refused[0]!.errors.length, 1);
        assert.match(
          report.refused[0]!.errors[0]!,
          new RegExp(
            `04-compaction_${missing}\\.jsonl: missing; session 04-compaction was rotated`,
          ),
        );
        assert.deepEqual(await listSessions(scope(root)), [], "nothing was imported");
      });
    });
  });
}

Deno.test("sessions import of one rotated file imports both, and says so", async () => {
  await withRotated([1, 2], async (dir) => {
    await withRoot(async (root) => {
      const r = await runCli([
        "--root",
        root,
        "sessions",
        "import",
        "--json",
        "--workspace",
        dir,
        join(dir, "04-compaction_001.jsonl"),
      ]);
      assert.equal(r.code, 0, r.stderr);
      const rows = await listSessions(scope(root));
      assert.equal(rows.length, 1);
      const s = await locateSession({ ...scope(root), target: rows[0]!.sessionId });
      assert.deepEqual(s.files.map((f) => f.index), [1, 2]);
      assert.match(r.stdout, /04-compaction_002\.jsonl/);
    });
  });
});
