// A secret the model learned and writes itself (issue 26 item 5, red team N11): a real `penguin
// run` against the scripted model (Anthropic wire, so thinking carries a signature). The model
// reads a vault value reversed (an encoding, not masked), then writes pieces of it in its
// reasoning, its text and a tool call's arguments. No 8-character piece reaches the trace, the
// run's output, `trace show`, any `trace export` format or the next request; the tool still gets
// the real arguments, and a signature over reasoning that masking changed is dropped while an
// untouched one is kept.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { assertNoPieceOf, readAll, setVault, traceViews } from "../support/secrets.ts";
import { makeRoot } from "../support/roots.ts";

const V = "Qm7Zr2Kx9Wc4Lp8Tn3Hv6Bd1Fs5Gj0Ya";

/** Fail when any 8-character piece of the secret occurs in `text`. */
function assertNoPiece(text: string, where: string): void {
  assertNoPieceOf(text, [V], where);
}

Deno.test("run: the model's own text, reasoning and tool arguments are masked; the tool gets the real ones", async () => {
  const server = await startModelServer({
    turns: [
      turn.of(
        item.thinking("I will look at the vault.", { signature: "sig-plain-kept" }),
        item.toolCall("exec_command", { cmd: "printenv ATK_V | rev" }),
      ),
      turn.of(
        item.thinking(`reversed back it is ${V.slice(2, 18)} indeed`, { signature: "sig-dropped" }),
        item.text(`final ${V.slice(4, 20)}`),
        item.toolCall("write_file", { file_path: "out.txt", content: `key=${V}\n` }),
      ),
      // Reasoning whose text is clean but whose opaque payload holds a piece: the payload goes.
      turn.of(item.thinking("all done", { signature: `s-${V.slice(1, 13)}` }), item.text("done")),
    ],
  });
  const sb = await makeRoot(server, { visible: true, protocol: "anthropic-messages" });
  try {
    await setVault(sb.root, "ATK_V", V);
    const r = await runCli(inRoot(sb, "run", "--approve", "allow-all", "-m", "go"));
    assert.equal(r.code, 0, r.stderr);
    const sid = /^Session: (session-\S+)$/m.exec(r.stderr)?.[1];
    assert.ok(sid, r.stderr);

    // The tool ran with the real arguments.
    assert.equal(await Deno.readTextFile(join(sb.workspace, "out.txt")), `key=${V}\n`);

    assertNoPiece(r.stdout + r.stderr, "the run's output");
    assert.ok(r.stdout.includes("final [redacted:vault:ATK_V]"), r.stdout);

    const agent = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID);
    const trace = await readAll(join(agent, "traces"));
    assertNoPiece(trace, "a trace file");
    assert.ok(
      trace.includes("key=[redacted:vault:ATK_V]"),
      "the arguments are masked in the trace",
    );
    // Fidelity: the signature of the untouched reasoning is kept, the changed one's is dropped.
    assert.ok(trace.includes("sig-plain-kept"), "an unchanged signature is kept");
    assert.ok(!trace.includes("sig-dropped"), "the signature of masked reasoning is dropped");

    assert.equal(server.requests.length, 3);
    const bodies = JSON.stringify(server.requests.map((q) => q.body));
    assertNoPiece(bodies, "a request body");
    assert.ok(bodies.includes("final [redacted:vault:ATK_V]"), "the next request holds the mask");

    for (const v of await traceViews(sb.root, sid)) assertNoPiece(v.text, v.where);
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
