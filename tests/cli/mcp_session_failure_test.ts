// A session whose MCP server fails: the failure is reported once, and a
// server that failed in the previous run does not hold the next run's
// first request (it is retried in the background).
import assert from "node:assert/strict";
import { addMcpServer } from "../../lib/state/mod.ts";
import { startModelServer, turn, type TurnHandler } from "../support/model_server.ts";
import { defaultAgentConfig, initDefaultAgent, processesWith } from "../support/mcp.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";

/** Whether `check` comes true within about 30 s, asking every 50 ms. */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

async function setup(servers: Record<string, Record<string, unknown>>) {
  const root = await Deno.makeTempDir({ prefix: "penguin-mcp-fail-" });
  const ws = await visibleTempDir();
  let current: TurnHandler = () => turn.text("done");
  const server = await startModelServer({ handler: (r, i) => current(r, i), maxRequests: 30 });
  await addServerModel(root, server, { api_key: "sk-mcp-fail-test-0123456789" });
  const config = await initDefaultAgent(root, "--workspace", ws);
  for (const [name, cfg] of Object.entries(servers)) await addMcpServer(config, name, cfg);
  return {
    root,
    ws,
    server,
    setHandler(h: TurnHandler) {
      current = h;
    },
    async [Symbol.asyncDispose]() {
      await server.close();
      await Deno.remove(root, { recursive: true });
      await Deno.remove(ws, { recursive: true });
    },
  };
}

Deno.test("a server that fails at session start is reported in one line", async () => {
  await using s = await setup({ broken: { command: "/bin/sh", args: ["-c", "exit 3"] } });
  const r = await runCli(["--root", s.root, "run", "--workspace", s.ws, "-m", "hi"]);
  assert.equal(r.code, 0, r.stderr);
  const all = `${r.stdout}\n${r.stderr}`;
  const lines = all.split("\n").filter((l) => l.includes("exited with code 3"));
  assert.deepEqual(lines.length, 1, all);
  assert.match(lines[0]!, /^\[mcp\] connected in \d+\.\ds; unavailable: broken \(/);
});

Deno.test("a server that failed in the previous run does not hold the first request; it is retried in the background", async () => {
  const marker = `penguin-mcp-mute-${crypto.randomUUID()}`;
  // Never answers initialize: a shell that sleeps, named by the marker.
  const mute = (connectTimeoutMs: number) => ({
    command: "/bin/sh",
    args: ["-c", "exec sleep 600", marker],
    connectTimeoutMs,
  });
  await using s = await setup({ mute: mute(1500) });
  const first = await runCli(["--root", s.root, "run", "--workspace", s.ws, "-m", "hi"]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /unavailable: mute \(no answer within 1500 ms/);

  // Now with all the time in the world: the failure of the previous run keeps the wait short.
  await addMcpServer(defaultAgentConfig(s.root), "mute", mute(60_000));
  let startingAtRequest: boolean | undefined;
  s.setHandler(async () => {
    // The background attempt may still be setting up its sandbox on a loaded machine: wait for
    // its process (bounded). Had the request waited for mute's 60 s, it would be gone by now.
    startingAtRequest ??= await eventually(async () => (await processesWith(marker)).length > 0);
    return turn.text("done");
  });
  const second = await runCli(["--root", s.root, "run", "--workspace", s.ws, "-m", "hi"]);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(startingAtRequest, true, "the first request went out while mute was starting");
  assert.match(
    second.stdout,
    /unavailable: mute \(not connected within 1000 ms \(it failed in the previous run too; still trying in the background/,
  );
  assert.deepEqual(await processesWith(marker), [], "the background attempt ends with penguin");
});
