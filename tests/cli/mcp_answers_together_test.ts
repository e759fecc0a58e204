// Many large MCP answers at once through `penguin run` (red team F10-2: N44,
// N38): each answer is under every per-answer bound, but the model calls a
// tool six times in one response, or six servers list large tools at
// connect. Held together (and, for calls, kept for the session by a
// listener on the call's signal) they took penguin to 400–470 MB; one large
// answer at a time, each collected before the next, stays under 300 MB.
import assert from "node:assert/strict";
import { item, turn } from "../support/model_server.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { type McpScriptRoot, mcpScriptRoot, mcpServerScript } from "./_mcp_script.ts";

// MODE=bigtext: each tools/call answer is one line whose text is 16 Mi - 4 Ki characters.
// MODE=biglist: tools/list names 250 tools, each with an output schema of ~64 000 characters
// (a line of ~16 M characters).
const SERVER = mcpServerScript(
  `
tool = {"name": "j", "description": "big", "inputSchema": {"type": "object", "properties": {}}}
`,
  `
    elif meth == "tools/list" and MODE == "biglist":
        big = {"type": "object", "properties": {"p": {"type": "string", "description": "o" * 64000}}}
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [dict(tool, name="t%d" % i, outputSchema=big) for i in range(250)]}})
    elif meth == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [tool]}})
    elif meth == "tools/call":
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "x" * (16 * 1024 * 1024 - 4096)}]}})
`,
);

const MB = 1024 * 1024;

/** A data root whose agent has `servers` servers (the script above in `mode`) and a model that answers `first`, then text. */
function setup(
  mode: "bigtext" | "biglist",
  servers: number,
  first: ReturnType<typeof turn.of>,
): Promise<McpScriptRoot> {
  return mcpScriptRoot({
    prefix: "penguin-mcpt-",
    script: SERVER,
    names: Array.from({ length: servers }, (_, i) => i === 0 ? "j" : `k${i}`),
    env: { MODE: mode },
    apiKey: "sk-mcp-together-test-0123456789",
    turns: [first, turn.text("all done")],
  });
}

Deno.test({
  name: "six calls to an MCP tool answering 16 Mi characters each: peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const calls = Array.from(
      { length: 6 },
      (_, i) => item.toolCall("mcp__j__j", {}, { id: `c${i}` }),
    );
    await using s = await setup("bigtext", 1, turn.of(...calls));
    const r = await runCliPeak(["--root", s.root, "run", "--workspace", s.ws, "-m", "go"], s.ws);
    assert.equal(r.code, 0, r.stderr);
    // Every call's output was cut and archived.
    assert.equal(r.stdout.match(/\[output archived/g)?.length, 6, r.stdout.slice(-2000));
    assert.match(r.stdout, /all done/);
    assert.ok(r.peakBytes <= 300 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
  },
});

Deno.test({
  name: "six MCP servers listing ~16 M characters of tools each: peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await using s = await setup("biglist", 6, turn.text("listed"));
    const r = await runCliPeak(["--root", s.root, "run", "--workspace", s.ws, "-m", "go"], s.ws);
    assert.equal(r.code, 0, r.stderr);
    // All six connected; their tools passed the session's total and were skipped.
    assert.doesNotMatch(r.stderr, /unavailable/);
    assert.match(r.stderr, /MCP server k5: .*skipped/);
    assert.match(r.stdout, /listed/);
    assert.ok(r.peakBytes <= 300 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
  },
});
