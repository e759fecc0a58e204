// The live renderer and the offline views print the same value the same way:
// one session with a 1 234 567 890-token request, seen through `penguin run`,
// `trace show`, `trace stats` and `sessions list`.
import assert from "node:assert/strict";
import { turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";

const TOKENS = 1_234_567_890;
const SHOWN = "1.2B";

Deno.test("a 1 234 567 890-token request reads 1.2B in run, trace show, trace stats and sessions list", async () => {
  await withModelRoot({
    turns: [{ ...turn.text("Done."), usage: { input: TOKENS, output: 0 } }],
  }, async (sb) => {
    const run = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "Go."]);
    assert.equal(run.code, 0, run.stderr);
    const live = /^\[stats\] 1 turn · in (\S+) · out 0 · /m.exec(run.stdout);
    assert.ok(live, run.stdout);
    assert.equal(live[1], SHOWN);

    const show = await runCli(["--root", sb.root, "trace", "show", sb.root]);
    assert.equal(show.code, 0, show.stderr);
    const request =
      /^── request 1 completed · \S+ · tokens (\S+) \(cached 0, uncached (\S+), output 0\) ──$/m
        .exec(show.stdout);
    assert.ok(request, show.stdout);
    assert.deepEqual([request[1], request[2]], [SHOWN, SHOWN]);

    const stats = await runCli(["--root", sb.root, "trace", "stats", sb.root]);
    assert.equal(stats.code, 0, stats.stderr);
    const rows = stats.stdout.split("\n");
    const header = rows.findIndex((l) => /\bTOKENS\b/.test(l));
    assert.ok(header >= 0, stats.stdout);
    const col = rows[header]!.split(/\s{2,}/).indexOf("TOKENS");
    assert.equal(rows[header + 1]!.trim().split(/\s{2,}/)[col], SHOWN, stats.stdout);

    const list = await runCli(["--root", sb.root, "sessions", "list"]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`\\s${SHOWN.replace(".", "\\.")}\\s`), list.stdout);
  });
});
