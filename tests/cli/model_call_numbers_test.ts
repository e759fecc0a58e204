// A numeric vault value written back as a JSON number in a tool call's arguments (issue 26 item 5,
// red team Y3): masking walked only the JSON strings, so `"n": 7301…` reached the trace and the next
// request. A real `penguin run` against the scripted model: the model reads the value reversed (an
// encoding, not masked), then writes it as a number and as the integer part of a decimal. No
// 8-digit piece reaches the run's output, the trace or the next request; the marker does.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { makeRoot } from "../support/roots.ts";
import { assertNoPieceOf, readAll, setVault } from "../support/secrets.ts";

const V = "7301928374650192837";

Deno.test("run: a numeric vault value written as a JSON number in tool-call arguments is masked (Y3)", async () => {
  const server = await startModelServer({
    turns: [
      turn.of(item.toolCall("exec_command", { cmd: "printenv ATK_V | rev" }, { id: "c1" })),
      turn.of(item.toolCall(
        "exec_command",
        `{"cmd":"echo second","n":${V},"m":[${V}.5],"s":"x${V}"}`,
        { id: "c2" },
      )),
      turn.text("done"),
    ],
  });
  const sb = await makeRoot(server, { visible: true });
  try {
    await setVault(sb.root, "ATK_V", V);
    const r = await runCli([...inRoot(sb, "run"), "--approve", "allow-all", "-m", "go"], {
      env: { NO_COLOR: "1" },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 3);
    const bodies = JSON.stringify(server.requests.map((q) => q.body));
    assert.ok(bodies.includes([...V].reverse().join("")), "the model learned the value");
    assertNoPieceOf(r.stdout + r.stderr, [V], "the run's output");
    const agent = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID);
    const trace = await readAll(join(agent, "traces"));
    assertNoPieceOf(trace, [V], "a trace file");
    assertNoPieceOf(bodies, [V], "a request body");
    // The numbers became the marker string; the call still ran.
    const last = JSON.stringify(server.requests[2]!.body);
    assert.ok(last.includes('\\"n\\":\\"[redacted:vault:ATK_V]\\"'), last.slice(-3000));
    assert.ok(last.includes('\\"m\\":[\\"[redacted:vault:ATK_V].5\\"]'), last.slice(-3000));
    assert.ok(last.includes("second"), last.slice(-3000));
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
