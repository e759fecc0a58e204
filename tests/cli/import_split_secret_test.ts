// A vault value split over two text blocks of one imported assistant message, each piece too
// short to mask, must not reach the model whole when a protocol joins the blocks into one string
// (OpenAI's chat completions joins every text of an assistant turn): the resumed request held it
// (attack round 31 s03). Through a real `sessions import` of a Claude Code session and
// `run --resume` against the scripted model.
import assert from "node:assert/strict";
import { join } from "node:path";
import { turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { assertNoPieceOf } from "../support/secrets.ts";

const V = "Wk4Rp8Zn2Qv6Tx";
const FIXTURE =
  "/work/shared/fixtures/peer-sessions/claude/01-rich/projects/-tmp-peer-ByGhKr-work/" +
  "812c16f8-7a9b-47f6-88f4-f270b90e3f94.jsonl";

Deno.test("a secret split over two imported text blocks is masked in the resumed request", async () => {
  await withModelRoot({ turns: [turn.text("resumed")] }, async (sb, server) => {
    const cli = async (args: string[]) => {
      const r = await runCli(["--root", sb.root, ...args], { env: { NO_COLOR: "1" } });
      assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stdout}${r.stderr}`);
      return r;
    };
    await cli(["config", "vault", "set", "--key", "SPLIT_V", "--value", V]);
    const lines = (await Deno.readTextFile(FIXTURE)).split("\n");
    const at = lines.findIndex((l) => l.includes('"role":"assistant"') && l.includes("tool_use"));
    const blocks = `{"type":"text","text":"${V.slice(0, 7)}"},{"type":"text","text":"${
      V.slice(7)
    }"},`;
    lines[at] = lines[at]!.replace(
      '"content":[{"type":"tool_use"',
      `"content":[${blocks}{"type":"tool_use"`,
    );
    assert.ok(lines[at]!.includes(V.slice(7)));
    const file = join(sb.base, "812c16f8-7a9b-47f6-88f4-f270b90e3f94.jsonl");
    await Deno.writeTextFile(file, lines.join("\n"));
    const imp = await cli(["sessions", "import", file, "--workspace", sb.workspace]);
    const sid = [...(imp.stdout + imp.stderr).matchAll(/session-[0-9-]+[0-9a-f]{8}/g)].at(-1)?.[0];
    assert.ok(sid, imp.stdout + imp.stderr);
    await cli(["run", "--resume", sid, "--workspace", sb.workspace, "-m", "continue"]);
    assert.equal(server.requests.length, 1);
    const body = JSON.stringify(server.requests[0]!.body);
    // The pieces were in the history (each too short to mask alone), the joined value is not.
    assert.ok(body.includes("[redacted:vault:SPLIT_V]"), body.slice(0, 2000));
    assertNoPieceOf(body, [V], "the resumed request");
  });
});
