// A stdio MCP server that lists too many tools, or too large ones, through `penguin run`
// (red team N36): penguin keeps the first 256 tools of a server, skips a tool whose
// description or schema is too large and the tools past the session's total, says so in
// one line per server and reason, offers the model only what it kept, and stays small.
import assert from "node:assert/strict";
import { turn } from "../support/model_server.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { mcpScriptRoot, mcpServerScript, mcpToolNames } from "./_mcp_script.ts";

// MODE=many: NT tools t<i> with DL-character descriptions, in one tools/list answer.
// MODE=large: tool "ok", "longdesc" (20 Ki description), "bigschema" (100 Ki schema), then
// 80 tools w<i> with 15 Ki descriptions (more than 1 Mi characters together).
const SERVER = mcpServerScript(
  `
def tool(name, desc, props=None):
    return {"name": name, "description": desc, "inputSchema": {"type": "object", "properties": props or {"a": {"type": "string"}}}}
def tools():
    if MODE == "many":
        n = int(os.environ["NT"]); d = int(os.environ["DL"])
        return [tool("t%d" % i, "d%d " % i + "z" * d) for i in range(n)]
    big = {"p%d" % i: {"type": "string", "description": "q" * 100} for i in range(1000)}
    return [tool("ok", "fine"), tool("longdesc", "x" * 20480), tool("bigschema", "big", big)] + [tool("w%d" % i, "y" * 15360) for i in range(80)]
`,
  `
    elif meth == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools()}})
`,
);

const MB = 1024 * 1024;

interface Run {
  stdout: string;
  stderr: string;
  peakBytes: number;
  /** The names of the MCP tools in the model's first request. */
  offered: string[];
}

/** `penguin run` with server `j` (the script above with `env`) and a model that answers once. */
async function runWith(env: Record<string, string>): Promise<Run> {
  await using s = await mcpScriptRoot({
    prefix: "penguin-mcptl-",
    script: SERVER,
    names: ["j"],
    env,
    apiKey: "sk-mcp-tool-limits-0123456789",
    turns: [turn.text("all done")],
  });
  const r = await runCliPeak(["--root", s.root, "run", "--workspace", s.ws, "-m", "go"], s.ws);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /all done/);
  assert.equal(s.server.requests.length, 1);
  const offered = mcpToolNames(s.server.requests[0]!);
  return { stdout: r.stdout, stderr: r.stderr, peakBytes: r.peakBytes, offered };
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
