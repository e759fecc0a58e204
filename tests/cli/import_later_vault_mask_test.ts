// A trace holding a value imported before the value was in the vault (issue 26, red team N10):
// `sessions import` masks with the secrets known at import time only, so the stored trace keeps
// V. Once V is set in the vault, `sessions show`, `trace show` (text and --json) and every
// `trace export` format mask it as they read each record. A vault that cannot be read is said.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { runCli } from "../support/cli.ts";
import { makeRoot } from "../support/roots.ts";
import { traceFilesUnder } from "../support/trace_records.ts";
import {
  assertNoPieceOf,
  setVault,
  startValueEchoingModel,
  traceViews,
} from "../support/secrets.ts";

const V = "Wq4Zr8Kx2Nc7Lp3Tm9Hv5Bd6Fs1Gj0Ye";

Deno.test("a trace imported before its value was in the vault is shown and exported masked (N10)", async () => {
  const server = await startValueEchoingModel(V);
  const sb = await makeRoot(server, { visible: true });
  try {
    const cli = async (args: string[], code = 0) => {
      const r = await runCli(["--root", sb.root, ...args], {
        env: { NO_COLOR: "1", PAGER: "cat" },
      });
      assert.equal(r.code, code, `penguin ${args.join(" ")}: ${r.stderr}`);
      return r;
    };
    await cli(["run", "--workspace", sb.workspace, "--approve", "allow-all", "-m", `say ${V}`]);
    const agent = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID);
    const [file] = await traceFilesUnder(join(agent, "traces"));
    const old = join(sb.workspace, "..", "old-trace.jsonl");
    await Deno.copyFile(file!, old);
    const imp = await cli(["sessions", "import", old, "--workspace", sb.workspace, "--again"]);
    const sid = [...(imp.stdout + imp.stderr).matchAll(/session-[0-9-]+[0-9a-f]{8}/g)].at(-1)?.[0];
    assert.ok(sid, imp.stdout + imp.stderr);
    // Nothing was known at import time: the stored trace holds V.
    const show0 = await cli(["trace", "show", sid]);
    assert.ok(show0.stdout.includes(V), "V is in the trace before it is in the vault");

    await setVault(sb.root, "LATER_V", V);
    const outputs: [string, string][] = [];
    for (const v of await traceViews(sb.root, sid)) outputs.push([v.where, v.text]);
    for (
      const args of [["trace", "show", sid, "--json"], ["sessions", "show", sid], [
        "sessions",
        "show",
        sid,
        "--json",
      ]]
    ) {
      const r = await cli(args);
      outputs.push([args.join(" "), r.stdout + r.stderr]);
    }
    for (const [where, text] of outputs) {
      assertNoPieceOf(text, [V], where);
      assert.ok(text.includes("LATER_V"), `${where} shows the mask: ${text.slice(0, 2000)}`);
    }

    // A vault that cannot be read is said, not skipped.
    await Deno.writeTextFile(join(agent, "agent_state", ".vault.toml"), "not = [valid toml\n");
    const bad = await cli(["trace", "show", sid]);
    assert.match(bad.stderr, /trace show: could not read the secrets of agent "default_agent"/);
    const badExport = await cli(["trace", "export", sid, "--format", "md"]);
    assert.match(badExport.stderr, /trace export: could not read the secrets/);
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
