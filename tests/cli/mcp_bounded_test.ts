// A hostile stdio MCP server through `penguin run` (red team N32, N33): an
// answer line past the line limit, or with too many JSON values, is refused
// before it is parsed, the server is stopped and penguin stays small; SIGTERM
// during a call to a server that ignores SIGTERM ends penguin and the server.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel } from "../support/roots.ts";
import { addMcpServer } from "../../lib/state/mod.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { readWatching, spawnCli } from "../support/cli.ts";
import { initDefaultAgent, processesWith } from "../support/mcp.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { call } from "./_call_turn.ts";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

// MODE=junk: the tools/call answer is one line holding MB MiB of "{}," in a field.
// MODE=stall: the answer starts (MB MiB of "{}," with no end of line), then the server
// ignores SIGTERM and waits forever.
const SERVER = `
import json, os, signal, sys
MODE = os.environ["MODE"]; MB = float(os.environ["MB"])
def send(s):
    sys.stdout.write(s); sys.stdout.flush()
tool = {"name": "j", "description": "junk", "inputSchema": {"type": "object", "properties": {}}}
for line in sys.stdin:
    m = json.loads(line); mid = m.get("id"); meth = m.get("method")
    if mid is None: continue
    if meth == "initialize":
        send(json.dumps({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "j", "version": "1"}}}) + "\\n")
    elif meth == "tools/list":
        send(json.dumps({"jsonrpc": "2.0", "id": mid, "result": {"tools": [tool]}}) + "\\n")
    elif meth == "tools/call":
        junk = "{}," * int(MB * 1024 * 1024 / 3)
        head = '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"hi"}],"junk":[' % json.dumps(mid)
        if MODE == "stall":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            send(head + junk)
            open(os.environ["CALLED"], "w").close()
            signal.pause()
        send(head + junk + "{}]}}\\n")
    else:
        send(json.dumps({"jsonrpc": "2.0", "id": mid, "result": {}}) + "\\n")
`;

interface Setup {
  root: string;
  ws: string;
  marker: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A data root whose agent has server `j` (the script above in `mode`) and a model that calls its tool once. */
async function setup(mode: "junk" | "stall", mb: number): Promise<Setup> {
  // /var/tmp: the server's sandbox has a private /tmp; the marker names its processes.
  const dir = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "penguin-mcpb-" });
  const root = join(dir, "root");
  const ws = join(dir, "ws");
  await Deno.mkdir(ws);
  const marker = `penguin-mcpb-${crypto.randomUUID()}`;
  const script = join(dir, `${marker}.py`);
  await Deno.writeTextFile(script, SERVER);
  const queue = [call("mcp__j__j", {}, "c1"), turn.text("all done")];
  const server = await startModelServer({ handler: () => queue.shift(), maxRequests: 10 });
  await addServerModel(root, server, { api_key: "sk-mcp-bounded-test-0123456789" });
  const config = await initDefaultAgent(root);
  await addMcpServer(config, "j", {
    command: "python3",
    args: ["-u", script],
    env: { MODE: mode, MB: String(mb), CALLED: join(ws, "called") },
    connectTimeoutMs: 120_000,
  });
  return {
    root,
    ws,
    marker,
    async [Symbol.asyncDispose]() {
      await server.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const MB = 1024 * 1024;

Deno.test({
  name:
    "an MCP answer line past 16 Mi characters is refused unparsed and the server stopped; peak ≤ 400 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // 24 MiB of "{}," (8 M objects): under the old 64 MiB line limit it was parsed whole.
    await using s = await setup("junk", 24);
    const r = await runCliPeak(["--root", s.root, "run", "--workspace", s.ws, "-m", "go"], s.ws);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /MCP call failed: MCP server "j" sent a line longer than 16 Mi characters \(the limit of one message\); the server was stopped/,
    );
    assert.match(r.stdout, /all done/);
    assert.ok(r.peakBytes < 400 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
    assert.deepEqual(await processesWith(s.marker), []);
  },
});

Deno.test("an MCP answer under the line limit with too many JSON values is refused before it is parsed", async () => {
  // 3 MiB of "{}," is about a million objects: far past the shape limit.
  await using s = await setup("junk", 3);
  const r = await runCliPeak(["--root", s.root, "run", "--workspace", s.ws, "-m", "go"], s.ws);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /MCP call failed: MCP server "j" sent a message with more than \d+ JSON objects and arrays \(penguin's limit\); the server was stopped/,
  );
  assert.doesNotMatch(r.stdout, /\bhi\b/);
  assert.deepEqual(await processesWith(s.marker), []);
});

Deno.test("SIGTERM during an MCP call whose server ignores SIGTERM ends penguin and the server", async () => {
  await using s = await setup("stall", 8);
  const child = spawnCli(["--root", s.root, "run", "--workspace", s.ws, "-m", "go"]);
  let calling!: () => void;
  const called = new Promise<void>((resolve) => calling = resolve);
  const stdout = readWatching(child.stdout, "[#1] mcp__j__j", () => calling());
  const stderr = new Response(child.stderr).text();
  await called;
  // The call line is printed when the model's call arrives; the tool runs once the trace holds
  // it. Wait for the server to have the call (it marks the workspace) before interrupting.
  const mark = join(s.ws, "called");
  for (let i = 0; i < 6000 && !(await exists(mark)); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(await exists(mark), "the server got the call");
  child.kill("SIGTERM");
  const status = await child.status;
  const out = await stdout;
  assert.equal(status.code, 1, `${out}\n${await stderr}`);
  assert.match(out, /\[interrupted: tool aborted by user\]/);
  assert.deepEqual(await processesWith(s.marker), []);
});
