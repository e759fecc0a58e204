// `trace show`, `trace stats` and `trace export` without a target work on the latest session
// of the data root (issue 27): a first `penguin trace show` after a run needs no argument.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { traceBuilder, tracesDay } from "../inspect/_support.ts";
import { withRoot } from "../support/roots.ts";

const OLD = "session-2026-03-04-10-00-00-aaaaaaaa";
const NEW = "session-2026-03-05-10-00-00-bbbbbbbb";

async function twoSessions(root: string): Promise<void> {
  const old = traceBuilder(OLD).meta().user("first task").begin().text("old answer").usage(1, 2, 3)
    .end();
  const recent = traceBuilder(NEW, { start: Date.UTC(2026, 2, 5, 10, 0, 0) }).meta()
    .user("second task").begin().text("new answer").usage(4, 5, 6).end();
  await Deno.writeTextFile(join(await tracesDay(root), `${OLD}_001.jsonl`), old.jsonl());
  await Deno.writeTextFile(
    join(await tracesDay(root, "2026-03-05"), `${NEW}_001.jsonl`),
    recent.jsonl(),
  );
}

Deno.test("trace show, stats and export without a target use the latest session", async () => {
  await withRoot(async (root) => {
    await twoSessions(root);
    const show = await runCli(["--root", root, "trace", "show"]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /new answer/);
    assert.doesNotMatch(show.stdout, /old answer/);

    const stats = await runCli(["--root", root, "trace", "stats", "--json"]);
    assert.equal(stats.code, 0, stats.stderr);
    const report = JSON.parse(stats.stdout);
    assert.deepEqual(report.rows.map((r: { key: string }) => r.key), [NEW]);
    assert.equal(report.total.tokens.total, 15);

    const md = await runCli(["--root", root, "trace", "export", "--format", "md"]);
    assert.equal(md.code, 0, md.stderr);
    assert.match(md.stdout, /new answer/);
    assert.doesNotMatch(md.stdout, /old answer/);

    // The data root as the target still counts every session.
    const all = await runCli(["--root", root, "trace", "stats", "--json", root]);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(JSON.parse(all.stdout).total.sessions, 2);
  });
});

Deno.test("trace show, stats and export without a target and no session say so in one line", async () => {
  await withRoot(async (root) => {
    const missing = join(root, "nothing-here");
    for (const cmd of [["show"], ["stats"], ["export", "--format", "md"]]) {
      const r = await runCli(["--root", missing, "trace", ...cmd]);
      assert.equal(r.code, 1, `${cmd[0]}: ${r.stdout}`);
      const lines = r.stderr.split("\n").filter((l) => l !== "");
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, /Cannot find session "latest": the data root .* does not exist/);
    }
  });
});
