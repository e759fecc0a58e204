// A hostile stdio MCP server's `outputSchema` through `penguin run` (attack pass final9 N11,
// N12, N14): penguin never compiles or runs a server's schema. A catastrophic `pattern` does
// not hold up the call (its structuredContent reaches the model as listed), and a tool whose
// output schema is too large is skipped, named, while penguin stays small.
import assert from "node:assert/strict";
import { type RecordedRequest, turn } from "../support/model_server.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { mcpScriptRoot, mcpServerScript, mcpToolNames } from "./_mcp_script.ts";
import { call } from "./_call_turn.ts";

// MODE=redos: tool "j" has the output schema {"s": {"pattern": "^(a|aa)+$"}} and answers with
// no content and structuredContent {"s": NA a's and "!"} (backtracking on it never ends).
// MODE=bigout: tool "big" has an output schema of NP string properties (one ~2.3 MB line at
// 45 000, under the line and JSON value bounds); tool "small" has a small one.
const SERVER = mcpServerScript(
  `
def tool(name, out):
    return {"name": name, "description": name, "inputSchema": {"type": "object", "properties": {}}, "outputSchema": {"type": "object", "properties": out}}
def tools():
    if MODE == "redos":
        return [tool("j", {"s": {"type": "string", "pattern": "^(a|aa)+$"}})]
    big = {"p%d" % i: {"type": "string"} for i in range(int(os.environ["NP"]))}
    return [tool("big", big), tool("small", {"n": {"type": "number"}})]
`,
  `
    elif meth == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools()}})
    elif meth == "tools/call":
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [], "structuredContent": {"s": "a" * int(os.environ.get("NA", "0")) + "!"}}})
`,
);

const MB = 1024 * 1024;

interface Run {
  stdout: string;
  stderr: string;
  peakBytes: number;
  requests: RecordedRequest[];
}

/** `penguin run` with server `j` (the script above with `env`) and a model that answers `turns`. */
async function runWith(
  env: Record<string, string>,
  turns: ReturnType<typeof call>[],
): Promise<Run> {
  await using s = await mcpScriptRoot({
    prefix: "penguin-mcpos-",
    script: SERVER,
    names: ["j"],
    env,
    apiKey: "sk-mcp-output-schema-0123456789",
    turns,
  });
  const r = await runCliPeak(["--root", s.root, "run", "--workspace", s.ws, "-m", "go"], s.ws);
  assert.equal(r.code, 0, r.stderr);
  return {
    stdout: r.stdout,
    stderr: r.stderr,
    peakBytes: r.peakBytes,
    requests: s.server.requests,
  };
}

Deno.test({
  name: "an MCP output schema's catastrophic pattern is never run: the structuredContent passes",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // 200 a's and "!": checking "^(a|aa)+$" by backtracking would take longer than the universe.
    const answer = "a".repeat(200) + "!";
    const r = await runWith({ MODE: "redos", NA: "200" }, [
      call("mcp__j__j", {}, "c1"),
      turn.text("all done"),
    ]);
    assert.match(r.stdout, /all done/);
    assert.doesNotMatch(r.stdout + r.stderr, /output schema|MCP call failed/);
    assert.equal(r.requests.length, 2);
    // The model gets the structuredContent as JSON text, as the server sent it.
    const second = JSON.stringify(r.requests[1]!.body);
    assert.ok(second.includes(`\\"s\\": \\"${answer}\\"`), second.slice(-600));
  },
});

Deno.test({
  name: "an MCP tool whose output schema is over 64 Ki characters is skipped, named; peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const r = await runWith({ MODE: "bigout", NP: "45000" }, [turn.text("all done")]);
    const all = r.stdout + r.stderr;
    assert.match(
      all,
      /MCP server j: tool "big" skipped: its output schema is longer than 64 Ki characters of JSON/,
    );
    assert.match(r.stdout, /all done/);
    assert.deepEqual(mcpToolNames(r.requests[0]!), ["mcp__j__small"]);
    assert.ok(r.peakBytes < 300 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
  },
});
