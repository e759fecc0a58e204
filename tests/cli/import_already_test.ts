// `sessions import` of a penguin trace whose session is already here (imported
// before, or recorded here) says "already imported as <id>" and writes
// nothing; `--again` imports a new copy.
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO, runCli } from "../support/cli.ts";
import { visibleTempDir, withRoot } from "../support/roots.ts";

const PLAIN = join(REPO, "samples", "plain", "session-2026-12-01-23-07-39-9b411515_001.jsonl");
const ID = "session-2026-12-01-23-07-39-9b411515";

async function sessionIds(root: string): Promise<string[]> {
  const r = await runCli(["--root", root, "sessions", "list", "--all", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { session_id: string }[]).map((s) => s.session_id).sort();
}

Deno.test("importing a penguin trace twice says already imported as <id>; --again makes a copy", async () => {
  await withRoot(async (root) => {
    const ws = await visibleTempDir();
    try {
      const imp = (...extra: string[]) =>
        runCli(["--root", root, "sessions", "import", "--workspace", ws, ...extra, PLAIN]);
      const first = await imp();
      assert.equal(first.code, 0, first.stderr);
      assert.deepEqual(await sessionIds(root), [ID]);

      const twice = await imp();
      assert.equal(twice.code, 0, twice.stderr);
      assert.ok(
        twice.stdout.includes(
          `${PLAIN}: already imported as ${ID} (nothing written; --again imports a new copy)\n`,
        ),
        twice.stdout,
      );
      assert.match(twice.stdout, /^0 session\(s\) imported, 0 refused$/m);
      assert.deepEqual(await sessionIds(root), [ID], "nothing written");

      const json = await imp("--json");
      assert.deepEqual(JSON.parse(json.stdout).already, [
        { files: [PLAIN], original_id: ID, session_id: ID },
      ]);

      const again = await imp("--again");
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /the id session-2026-12-01-23-07-39-9b411515 was taken/);
      const ids = await sessionIds(root);
      assert.equal(ids.length, 2, ids.join(" "));

      // The copy is keyed by the id its file recorded: importing once more is still "already".
      const thrice = await imp();
      assert.match(thrice.stdout, /already imported as session-/);
      assert.equal((await sessionIds(root)).length, 2);
    } finally {
      await Deno.remove(ws, { recursive: true });
    }
  });
});
