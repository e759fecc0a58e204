// `trace validate` quotes what a file holds (a call id, a pointer's id): masked with the secrets
// known now, as the other trace views are (attack round 24 secrets A24).
import assert from "node:assert/strict";
import { join } from "node:path";
import { turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { assertNoPieceOf } from "../support/secrets.ts";

const V = "Qm7Zr2Kx9Wc4Lp8Tn3Hv6Bd1";

Deno.test("trace validate masks the ids it quotes with the secrets known now", async () => {
  await withModelRoot({ turns: [turn.text("done")] }, async (sb) => {
    const run = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"]);
    assert.equal(run.code, 0, run.stderr);
    const traces = join(sb.root, "default_project", "agents", "default_agent", "traces");
    let file = "";
    for await (const d of Deno.readDir(traces)) {
      for await (const f of Deno.readDir(join(traces, d.name))) file = join(traces, d.name, f.name);
    }
    const last = JSON.parse((await Deno.readTextFile(file)).trim().split("\n").at(-1)!);
    // A pointer to a child session no file holds, its id holding V.
    const orphan = { type: "subagent", session_id: `sess-${V}` };
    await Deno.writeTextFile(
      file,
      JSON.stringify({ timestamp: last.timestamp, type: "event_msg", payload: orphan }) + "\n",
      { append: true },
    );
    const before = await runCli(["--root", sb.root, "trace", "validate", traces]);
    assert.ok(before.stdout.includes(V), `the problem quotes the id: ${before.stdout}`);
    const set = await runCli(
      ["--root", sb.root, "config", "vault", "set", "--key", "LATER_V", "--value", V],
    );
    assert.equal(set.code, 0, set.stderr);
    for (const json of [[], ["--json"]]) {
      const r = await runCli(["--root", sb.root, "trace", "validate", traces, ...json]);
      assert.ok(r.stdout.includes("[redacted:vault:LATER_V]"), r.stdout);
      assertNoPieceOf(r.stdout + r.stderr, [V], `trace validate ${json.join(" ")}`);
    }
  });
});
