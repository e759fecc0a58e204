// `sessions list` and `sessions tree` show a session's title from its first prompt (red team final7
// N49, N50): a value set in the vault after the session was recorded showed there as written. A real
// `penguin run` whose prompt holds V, then `config vault set` of V: both listings, text and --json,
// hold no 8-character piece of V, as `sessions show` already did.
import assert from "node:assert/strict";
import { turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { assertNoPieceOf } from "../support/secrets.ts";

const V = "Kp4Rw8Zm2Xq7Tn5Lc9Vb3Hy6Dj1Gs0Fa";

Deno.test("sessions list and sessions tree mask a session title with the secrets known now (N49, N50)", async () => {
  await withModelRoot({ turns: [turn.text("done")] }, async (sb) => {
    const cli = async (args: string[]) => {
      const r = await runCli(["--root", sb.root, ...args], { env: { NO_COLOR: "1" } });
      assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stderr}`);
      return r.stdout + r.stderr;
    };
    await cli(["run", "--workspace", sb.workspace, "-m", `deploy with ${V} now`]);
    const before = await cli(["sessions", "list", "--all"]);
    assert.ok(
      before.includes(V.slice(0, 12)),
      `the title holds V before it is a secret: ${before}`,
    );
    await cli(["config", "vault", "set", "--key", "LATER_V", "--value", V]);
    const sid = /session-[0-9-]+[0-9a-f]{8}/.exec(before)?.[0];
    assert.ok(sid, before);
    for (
      const args of [
        ["sessions", "list", "--all"],
        ["sessions", "list", "--all", "--json"],
        ["sessions", "tree", sid],
        ["sessions", "tree", sid, "--json"],
      ]
    ) {
      const out = await cli(args);
      assert.ok(out.includes("[redacted:vault:LATER_V]"), `${args.join(" ")}: ${out}`);
      assertNoPieceOf(out, [V], args.join(" "));
    }
  }, { visible: true });
});

Deno.test("sessions list, tree and delete of another agent mask with the default agent's secrets too (round 24 secrets B1)", async () => {
  await withModelRoot({ turns: [turn.text("done")] }, async (sb) => {
    const cli = async (args: string[]) => {
      const r = await runCli(["--root", sb.root, ...args], { env: { NO_COLOR: "1" } });
      assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stderr}`);
      return r.stdout + r.stderr;
    };
    const other = ["--agent-id", "other"];
    await cli(["run", ...other, "--workspace", sb.workspace, "-m", `deploy with ${V} now`]);
    const before = await cli(["sessions", "list", ...other, "--all"]);
    const sid = /session-[0-9-]+[0-9a-f]{8}/.exec(before)?.[0];
    assert.ok(sid, before);
    // A value of the data root's default agent's vault, set after the session ran.
    await cli(["config", "vault", "set", "--key", "LATER_V", "--value", V]);
    for (
      const args of [
        ["sessions", "list", ...other, "--all"],
        ["sessions", "list", ...other, "--all", "--json"],
        ["sessions", "tree", ...other, sid],
        ["sessions", "delete", ...other, sid, "--yes"],
      ]
    ) {
      const out = await cli(args);
      assertNoPieceOf(out, [V], args.join(" "));
    }
  }, { visible: true });
});
