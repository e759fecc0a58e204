// A hostile stdio MCP server's `outputSchema` through `penguin run` (attack pass final9 N11,
// N12, N14): penguin never compiles or runs a server's schema. A catastrophic `pattern` does
// not hold up the call (its structuredContent reaches the model as listed), and a tool whose
// output schema is too large is skipped, named, while penguin stays small.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel } from "../support/roots.ts";
import { addMcpServer } from "../../lib/state/mod.ts";
import { type RecordedRequest, startModelServer, turn } from "../support/model_server.ts";
import { initDefaultAgent } from "../support/mcp.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { call } from "./_call_turn.ts";

// MODE=redos: tool "j" has the output schema {"s": {"pattern": "^(a|aa)+$"}} and answers with
// no content and structuredContent {"s": NA a's and "!"} (backtracking on it never ends).
// MODE=bigout: tool "big" has an output schema of NP string properties (one ~2.3 MB line at
// 45 000, under the line and JSON value bounds); tool "small" has a small one.
const SERVER = `
import json, os, sys
MODE = os.environ["MODE"]
def send(o):
    sys.stdout.write(json.dumps(o) + "\\n"); sys.stdout.flush()
def tool(name, out):
    return {"name": name, "description": name, "inputSchema": {"type": "object", "properties": {}}, "outputSchema": {"type": "object", "properties": out}}
def tools():
    if MODE == "redos":
        return [tool("j", {"s": {"type": "string", "pattern": "^(a|aa)+$"}})]
    big = {"p%d" % i: {"type": "string"} for i in range(int(os.environ["NP"]))}
    return [tool("big", big), tool("small", {"n": {"type": "number"}})]
for line in sys.stdin:
    m = json.loads(line); mid = m.get("id"); meth = m.get("method")
    if mid is None: continue
    if meth == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "j", "version": "1"}}})
    elif meth == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools()}})
    elif meth == "tools/call":
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [], "structuredContent": {"s": "a" * int(os.environ.get("NA", "0")) + "!"}}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
`;

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
  // /var/tmp: the server's sandbox has a private /tmp.
  const dir = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "penguin-mcpos-" });
  const queue = [...turns];
  const server = await startModelServer({ handler: () => queue.shift(), maxRequests: 10 });
  try {
    const root = join(dir, "root");
    const ws = join(dir, "ws");
    await Deno.mkdir(ws);
    const script = join(dir, "server.py");
    await Deno.writeTextFile(script, SERVER);
    await addServerModel(root, server, { api_key: "sk-mcp-output-schema-0123456789" });
    const config = await initDefaultAgent(root);
    await addMcpServer(config, "j", {
      command: "python3",
      args: ["-u", script],
      env,
      connectTimeoutMs: 120_000,
    });
    const r = await runCliPeak(["--root", root, "run", "--workspace", ws, "-m", "go"], ws);
    assert.equal(r.code, 0, r.stderr);
    return {
      stdout: r.stdout,
      stderr: r.stderr,
      peakBytes: r.peakBytes,
      requests: server.requests,
    };
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

function toolNames(req: RecordedRequest): string[] {
  const tools = (req.body as { tools?: { name?: string; function?: { name: string } }[] }).tools;
  return (tools ?? []).map((t) => t.function?.name ?? t.name ?? "").filter((n) =>
    n.startsWith("mcp__")
  );
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
    assert.deepEqual(toolNames(r.requests[0]!), ["mcp__j__small"]);
    assert.ok(r.peakBytes < 300 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
  },
});
