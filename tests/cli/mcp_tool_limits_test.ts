// A stdio MCP server that lists too many tools, or too large ones, through `penguin run`
// (red team N36): penguin keeps the first 256 tools of a server, skips a tool whose
// description or schema is too large and the tools past the session's total, says so in
// one line per server and reason, offers the model only what it kept, and stays small.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel } from "../support/roots.ts";
import { addMcpServer } from "../../lib/state/mod.ts";
import { type RecordedRequest, startModelServer, turn } from "../support/model_server.ts";
import { initDefaultAgent } from "../support/mcp.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";

// MODE=many: NT tools t<i> with DL-character descriptions, in one tools/list answer.
// MODE=large: tool "ok", "longdesc" (20 Ki description), "bigschema" (100 Ki schema), then
// 80 tools w<i> with 15 Ki descriptions (more than 1 Mi characters together).
const SERVER = `
import json, os, sys
MODE = os.environ["MODE"]
def send(o):
    sys.stdout.write(json.dumps(o) + "\\n"); sys.stdout.flush()
def tool(name, desc, props=None):
    return {"name": name, "description": desc, "inputSchema": {"type": "object", "properties": props or {"a": {"type": "string"}}}}
def tools():
    if MODE == "many":
        n = int(os.environ["NT"]); d = int(os.environ["DL"])
        return [tool("t%d" % i, "d%d " % i + "z" * d) for i in range(n)]
    big = {"p%d" % i: {"type": "string", "description": "q" * 100} for i in range(1000)}
    return [tool("ok", "fine"), tool("longdesc", "x" * 20480), tool("bigschema", "big", big)] + [tool("w%d" % i, "y" * 15360) for i in range(80)]
for line in sys.stdin:
    m = json.loads(line); mid = m.get("id"); meth = m.get("method")
    if mid is None: continue
    if meth == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "j", "version": "1"}}})
    elif meth == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools()}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
`;

const MB = 1024 * 1024;

interface Run {
  stdout: string;
  stderr: string;
  peakBytes: number;
  /** The names of the MCP tools in the model's first request. */
  offered: string[];
}

function toolNames(req: RecordedRequest): string[] {
  const tools = (req.body as { tools?: { name?: string; function?: { name: string } }[] }).tools;
  return (tools ?? []).map((t) => t.function?.name ?? t.name ?? "");
}

/** `penguin run` with server `j` (the script above with `env`) and a model that answers once. */
async function runWith(env: Record<string, string>): Promise<Run> {
  // /var/tmp: the server's sandbox has a private /tmp.
  const dir = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "penguin-mcptl-" });
  const server = await startModelServer({ turns: [turn.text("all done")] });
  try {
    const root = join(dir, "root");
    const ws = join(dir, "ws");
    await Deno.mkdir(ws);
    const script = join(dir, "server.py");
    await Deno.writeTextFile(script, SERVER);
    await addServerModel(root, server, { api_key: "sk-mcp-tool-limits-0123456789" });
    const config = await initDefaultAgent(root);
    await addMcpServer(config, "j", {
      command: "python3",
      args: ["-u", script],
      env,
      connectTimeoutMs: 120_000,
    });
    const r = await runCliPeak(["--root", root, "run", "--workspace", ws, "-m", "go"], ws);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /all done/);
    assert.equal(server.requests.length, 1);
    const offered = toolNames(server.requests[0]!).filter((n) => n.startsWith("mcp__"));
    return { stdout: r.stdout, stderr: r.stderr, peakBytes: r.peakBytes, offered };
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name:
    "an MCP server listing 4,000 tools: the first 256 are offered, the rest skipped in one line",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // 4,000 tools of 3.5 KB: one 14.6 MB tools/list line, under the line and value bounds.
    const r = await runWith({ MODE: "many", NT: "4000", DL: "3500" });
    const all = r.stdout + r.stderr;
    assert.match(
      all,
      /MCP server j: 3744 of 4000 tools skipped: penguin keeps the first 256 tools of a server/,
    );
    assert.equal(all.match(/tools skipped/g)?.length, 1, all);
    assert.equal(r.offered.length, 256);
    assert.deepEqual(r.offered.slice(0, 2), ["mcp__j__t0", "mcp__j__t1"]);
    assert.equal(r.offered.at(-1), "mcp__j__t255");
    assert.ok(r.peakBytes < 300 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
  },
});

Deno.test({
  name:
    "MCP tools with too large a description or schema, or past the session's total, are skipped",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const r = await runWith({ MODE: "large" });
    const all = r.stdout + r.stderr;
    assert.match(
      all,
      /MCP server j: tool "longdesc" skipped: its description is longer than 16 Ki characters/,
    );
    assert.match(
      all,
      /MCP server j: tool "bigschema" skipped: its input schema is longer than 64 Ki characters of JSON/,
    );
    // 15 Ki characters each: 68 fit in 1 Mi with "ok"; the other 12 do not.
    assert.match(
      all,
      /MCP server j: 12 tools \("w68", "w69", "w70", "w71", "w72", and 7 more\) skipped: the MCP tool definitions of the session would pass 1 Mi characters \(penguin's limit\)/,
    );
    assert.equal(r.offered[0], "mcp__j__ok");
    assert.equal(r.offered.length, 69);
    assert.ok(!r.offered.includes("mcp__j__longdesc"));
    assert.ok(!r.offered.includes("mcp__j__bigschema"));
  },
});
