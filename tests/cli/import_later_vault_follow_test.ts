// A trace holding a value V imported before V was in the vault (issue 26 item 5, red team final6
// X16, X39): once V is set, `trace follow` (text and --json) masks it as `trace show` does; and
// `sessions import --json` of a file whose recorded workspace holds V prints that path masked.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { runCli, spawnCli } from "../support/cli.ts";
import { makeRoot } from "../support/roots.ts";
import { traceFilesUnder } from "../support/trace_records.ts";
import { assertNoPieceOf, setVault, startValueEchoingModel } from "../support/secrets.ts";

const V = "Wq4Zr8Kx2Nc7Lp3Tm9Hv5Bd6Fs1Gj0Ye";

/** `trace follow` output of `sid` up to the record holding `until`, then stopped with SIGINT. */
async function follow(root: string, sid: string, extra: string[], until: string): Promise<string> {
  const child = spawnCli(["--root", root, "trace", "follow", ...extra, sid]);
  const reader = child.stdout.getReader();
  const dec = new TextDecoder();
  let text = "";
  while (!text.includes(until)) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += dec.decode(chunk.value, { stream: true });
  }
  child.kill("SIGINT");
  for (let c = await reader.read(); !c.done; c = await reader.read()) text += dec.decode(c.value);
  const [status, err] = await Promise.all([
    child.status,
    new Response(child.stderr).text(),
  ]);
  assert.equal(status.code, 0, err);
  assert.ok(text.includes(until), `trace follow ${extra.join(" ")} printed:\n${text}\n${err}`);
  return text + err;
}

Deno.test("trace follow and the sessions import report mask a value set after the import (X16, X39)", async () => {
  const server = await startValueEchoingModel(V);
  const sb = await makeRoot(server, { visible: true });
  try {
    const cli = async (args: string[]) => {
      const r = await runCli(["--root", sb.root, ...args], { env: { NO_COLOR: "1" } });
      assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stderr}`);
      return r;
    };
    await cli(["run", "--workspace", sb.workspace, "--approve", "allow-all", "-m", `say ${V}`]);
    const agent = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID);
    const [file] = await traceFilesUnder(join(agent, "traces"));
    const text = await Deno.readTextFile(file!);
    const old = join(sb.workspace, "..", "old-trace.jsonl");
    await Deno.writeTextFile(old, text);
    const imp = await cli(["sessions", "import", old, "--workspace", sb.workspace, "--again"]);
    const sid = [...(imp.stdout + imp.stderr).matchAll(/session-[0-9-]+[0-9a-f]{8}/g)].at(-1)?.[0];
    assert.ok(sid, imp.stdout + imp.stderr);
    const before = await follow(sb.root, sid, [], "the answer is");
    assert.ok(before.includes(V), "V is in the trace before it is in the vault");

    await setVault(sb.root, "LATER_V", V);
    for (const extra of [[], ["--json"]]) {
      const out = await follow(sb.root, sid, extra, "the answer is");
      assertNoPieceOf(out, [V], `trace follow ${extra.join(" ")}`);
      assert.ok(out.includes("LATER_V"), `trace follow ${extra.join(" ")} shows the mask: ${out}`);
    }

    // X39: a file whose recorded workspace holds V, imported with V in the vault.
    const lines = text.split("\n");
    const meta = JSON.parse(lines[0]!);
    meta.payload.workspace = join(sb.workspace, V);
    const holding = join(sb.workspace, "..", "old-ws-trace.jsonl");
    await Deno.writeTextFile(holding, [JSON.stringify(meta), ...lines.slice(1)].join("\n"));
    for (const extra of [["--json"], []]) {
      const r = await cli([
        "sessions",
        "import",
        holding,
        "--workspace",
        sb.workspace,
        "--again",
        ...extra,
      ]);
      const out = r.stdout + r.stderr;
      assertNoPieceOf(out, [V], `sessions import ${extra.join(" ")}`);
      assert.ok(out.includes("LATER_V"), `sessions import ${extra.join(" ")}: ${out}`);
    }
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
