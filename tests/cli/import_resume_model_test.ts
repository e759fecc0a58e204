// The first resume of an imported session whose recorded model is not
// configured here continues on the project's default model: noted on
// screen and recorded as `model_switched`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO, runCli } from "../support/cli.ts";
import { turn } from "../support/model_server.ts";
import { withModelRoot } from "../support/roots.ts";

const PLAIN = join(REPO, "samples", "plain", "session-2026-12-01-23-07-39-9b411515_001.jsonl");
const ID = "session-2026-12-01-23-07-39-9b411515";

Deno.test("resuming an imported session recorded on an unconfigured model uses the default model, noted and recorded", async () => {
  await withModelRoot({ turns: [turn.text("continued here")] }, async (sb) => {
    const imp = await runCli(["--root", sb.root, "sessions", "import", PLAIN], {
      cwd: sb.workspace,
    });
    assert.equal(imp.code, 0, imp.stderr);
    const run = await runCli(["--root", sb.root, "run", "--resume", ID, "-m", "go on"], {
      cwd: sb.workspace,
    });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /continued here/);
    assert.ok(
      run.stderr.includes(
        `[penguin] session ${ID} was imported and recorded on (scripted, scripted-samples), ` +
          "which is not configured here: it continues on the default model (custom, m) " +
          "(recorded as model_switched).",
      ),
      run.stderr,
    );
    const traces = join(sb.root, "default_project", "agents", "default_agent", "traces");
    const file = join(traces, "2026-12-01", `${ID}_001.jsonl`);
    const switched = (await Deno.readTextFile(file)).trim().split("\n").map((l) => JSON.parse(l))
      .filter((r) => r.payload?.type === "model_switched");
    assert.equal(switched.length, 1);
    assert.equal(switched[0].payload.provider, "custom");
    assert.equal(switched[0].payload.model_id, "m");
  });
});
