// A hostile HTTP MCP server through `penguin run` (issue 26 item 6): an answer past the limit of
// one message (a JSON body, a Streamable HTTP event, an event of the older SSE transport), or one
// with too many JSON values, is refused before the SDK parses it; the connection is closed, the
// call fails naming the server and the bound, and penguin stays small.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel } from "../support/roots.ts";
import { addMcpServer } from "../../lib/state/mod.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { initDefaultAgent } from "../support/mcp.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { type HostileMode, startHostileMcpServer } from "../support/hostile_mcp_http.ts";
import { call } from "./_call_turn.ts";

const MB = 1024 * 1024;

/** `penguin run` whose model calls tool `j` of a hostile server in `mode` once. */
async function runAgainst(mode: HostileMode, mb: number) {
  const dir = await Deno.makeTempDir({ prefix: "penguin-mcph-" });
  await using hostile = startHostileMcpServer(mode, mb);
  const queue = [call("mcp__j__j", {}, "c1"), turn.text("all done")];
  const model = await startModelServer({ handler: () => queue.shift(), maxRequests: 10 });
  try {
    const root = join(dir, "root");
    const ws = join(dir, "ws");
    await Deno.mkdir(ws);
    await addServerModel(root, model, { api_key: "sk-mcp-http-bounded-test-0123456789" });
    await addMcpServer(await initDefaultAgent(root), "j", {
      url: hostile.url,
      ...(mode === "legacy" ? { transport: "sse" } : {}),
      connectTimeoutMs: 120_000,
    });
    return await runCliPeak(["--root", root, "run", "--workspace", ws, "-m", "go"], ws);
  } finally {
    await model.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const CASES: [HostileMode, RegExp][] = [
  ["json", /sent a response longer than 16 Mi characters \(the limit of one message\)/],
  ["sse", /sent an event longer than 16 Mi characters \(the limit of one message\)/],
  ["legacy", /sent an event longer than 16 Mi characters \(the limit of one message\)/],
];

for (const [mode, bound] of CASES) {
  Deno.test({
    name:
      `a ${mode} MCP answer of 24 MiB is refused unparsed and the connection closed; peak ≤ 300 MB`,
    ignore: !CAN_MEASURE_PEAK,
    async fn() {
      // 24 MiB of "{}," is 8 M objects: parsed whole, it takes penguin past 1 GB.
      const r = await runAgainst(mode, 24);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /MCP call failed: MCP server "j" sent /);
      assert.match(r.stdout, bound);
      assert.match(r.stdout, /; the connection was closed/);
      assert.doesNotMatch(r.stdout, /\bhi\b/);
      assert.match(r.stdout, /all done/);
      assert.ok(r.peakBytes < 300 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
    },
  });
}

for (const mode of ["json", "sse"] as const) {
  Deno.test({
    name:
      `a ${mode} MCP answer under the message limit with too many JSON values is refused unparsed`,
    ignore: !CAN_MEASURE_PEAK,
    async fn() {
      // 3 MiB of "{}," is about a million objects: far past the shape limit.
      const r = await runAgainst(mode, 3);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /MCP call failed: MCP server "j" sent a message with more than \d+ JSON objects and arrays \(penguin's limit\); the connection was closed/,
      );
      assert.doesNotMatch(r.stdout, /\bhi\b/);
    },
  });
}

Deno.test({
  name:
    "an MCP event stream of 16 Mi events past 24 Mi in all is refused, the connection closed; peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // Red team N22: 3 notifications of 16 Mi - 4 Ki characters and a 15 Mi result, each event
    // under the limit of one message and 63 Mi in all: under a 64 Mi bound, 352-477 MB.
    const r = await runAgainst("notes", 0);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /MCP call failed: MCP server "j" sent more than 24 Mi characters in one response \(penguin's limit\); the connection was closed/,
    );
    assert.doesNotMatch(r.stdout, /\bhiN/);
    assert.match(r.stdout, /all done/);
    assert.ok(r.peakBytes < 300 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
  },
});
