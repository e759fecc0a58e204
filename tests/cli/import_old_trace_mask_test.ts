// An imported old trace holding a vault value (issue 26 item 5, red team Y12): a trace written before
// tool-call ids were masked keeps `call_<V>` as a call id. Imported and resumed, its history went back
// to the provider as it was. A real recorded session has its call id replaced by `call_` + V (how a
// trace from before the id masking looks), then is imported with `sessions import --again` and
// resumed with `run --resume`: the resumed request holds no 8-character piece of V.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { item, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { traceFilesUnder } from "../support/trace_records.ts";
import { assertNoPieceOf } from "../support/secrets.ts";

const V = "Qm7Zr2Kx9Wc4Lp8Tn3Hv6Bd1Fs5Gj0Ya";

function assertNoPiece(text: string, where: string): void {
  assertNoPieceOf(text, [V], where);
}

Deno.test("run --resume of an imported old trace whose call id holds a vault value sends no piece of it (Y12)", async () => {
  await withModelRoot({
    turns: [
      turn.of(item.toolCall("exec_command", { cmd: "echo hi" }, { id: "call_PLACEHOLDER" })),
      turn.text("first done"),
      turn.text("resumed done"),
    ],
  }, async (sb, server) => {
    const cli = async (args: string[]) => {
      const r = await runCli(["--root", sb.root, ...args], { env: { NO_COLOR: "1" } });
      assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stderr}`);
      return r;
    };
    await cli(["config", "vault", "set", "--key", "ATK_V", "--value", V]);
    await cli(["run", "--workspace", sb.workspace, "--approve", "allow-all", "-m", "go"]);
    const agent = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID);
    const [file] = await traceFilesUnder(join(agent, "traces"));
    const old = join(sb.workspace, "..", "old-trace.jsonl");
    await Deno.writeTextFile(old, (await Deno.readTextFile(file!)).replaceAll("PLACEHOLDER", V));
    const imp = await cli(["sessions", "import", old, "--workspace", sb.workspace, "--again"]);
    const sid = [...(imp.stdout + imp.stderr).matchAll(/session-[0-9-]+[0-9a-f]{8}/g)].at(-1)?.[0];
    assert.ok(sid, imp.stdout + imp.stderr);
    await cli(["run", "--workspace", sb.workspace, "--resume", sid, "-m", "again"]);
    assert.equal(server.requests.length, 3);
    const resumed = JSON.stringify(server.requests[2]!.body);
    assert.ok(resumed.includes("echo hi"), "the resumed history holds the old call");
    assert.ok(resumed.includes("call_[redacted:vault:ATK_V]"), resumed.slice(-3000));
    assertNoPiece(resumed, "the resumed request");
  }, { visible: true });
});
