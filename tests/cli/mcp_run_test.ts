// MCP tools through `penguin run`: real servers as confined subprocesses,
// the scripted model calling them, and the trace that records it all.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel } from "../support/roots.ts";
import { addMcpServer } from "../../lib/state/mod.ts";
import { type ScriptedTurn, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import {
  cacheServers,
  denoServer,
  EVERYTHING,
  initDefaultAgent,
  processesWith,
  TEST_SERVER,
} from "../support/mcp.ts";
import { call } from "./_call_turn.ts";

type Server = Awaited<ReturnType<typeof startModelServer>>;
type Rec = { type: string; payload: Record<string, unknown> & { type: string } };

async function setup(
  turns: ScriptedTurn[],
  servers: Record<string, Record<string, unknown>>,
): Promise<{ root: string; ws: string; server: Server; [Symbol.asyncDispose](): Promise<void> }> {
  await cacheServers();
  const root = await Deno.makeTempDir({ prefix: "penguin-mcp-run-" });
  const ws = await Deno.makeTempDir({ prefix: "penguin-mcp-ws-" });
  const queue = [...turns];
  const server = await startModelServer({ handler: () => queue.shift(), maxRequests: 30 });
  await addServerModel(root, server, { api_key: "sk-mcp-run-test-0123456789" });
  // The first run initializes the agent; then the servers are added to its config.
  const config = await initDefaultAgent(root);
  for (const [name, cfg] of Object.entries(servers)) await addMcpServer(config, name, cfg);
  return {
    root,
    ws,
    server,
    async [Symbol.asyncDispose]() {
      await server.close();
      await Deno.remove(root, { recursive: true });
      await Deno.remove(ws, { recursive: true });
    },
  };
}

async function traceOf(root: string): Promise<{ path: string; records: Rec[] }> {
  const files: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) await walk(p);
      else if (p.endsWith(".jsonl")) files.push(p);
    }
  };
  await walk(join(root, "default_project", "agents", "default_agent", "traces"));
  files.sort();
  const path = files[0]!;
  const text = await Deno.readTextFile(path);
  return { path, records: text.trim().split("\n").map((l) => JSON.parse(l)) };
}

function outputs(records: Rec[]): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const r of records) {
    if (r.type === "model_msg" && r.payload.type === "tool_call_output") {
      out.set(String(r.payload.tool_call_id), r.payload);
    }
  }
  return out;
}

Deno.test("the scripted model uses tools of real MCP servers through penguin run, and the trace validates", async () => {
  const marker = `penguin-mcp-marker-${crypto.randomUUID()}`;
  await using s = await setup([
    call("mcp__everything__echo", { message: "hello from the model" }, "c1"),
    call("mcp__everything__get-tiny-image", {}, "c2"),
    call("mcp__t__big", { n: 5000 }, "c5"),
    call("mcp__t__crash", {}, "c3"),
    call("mcp__t__echo", { message: "after the crash" }, "c4"),
    turn.text("all done"),
  ], {
    // The marker names the server's processes: none may be left once penguin exits.
    everything: denoServer(EVERYTHING, ["stdio", marker]),
    t: denoServer(TEST_SERVER, [], { maxOutputLength: 1000 }),
  });
  const r = await runCli(["--root", s.root, "run", "--workspace", s.ws, "-m", "use the tools"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /all done/);
  assert.match(
    r.stdout,
    /^\[mcp\] connecting MCP servers \(everything, t\)…\n\[mcp\] connected in \d+\.\ds\n/m,
  );

  const { path, records } = await traceOf(s.root);
  const kinds = records.map((x) => x.payload.type);
  const begin = kinds.indexOf("mcp_connect_begin");
  assert.ok(begin > 0, kinds.join(" "));
  assert.deepEqual(kinds.slice(begin, begin + 3), [
    "mcp_connect_begin",
    "mcp_connect_end",
    "tool_list_ready",
  ]);
  assert.ok(kinds.indexOf("text") < begin, "the prompt is recorded before the connect pair");
  assert.deepEqual(records[begin]!.payload.servers, ["everything", "t"]);
  const end = records[begin + 1]!.payload as unknown as {
    status: string;
    results: Record<string, unknown>[];
  };
  assert.equal(end.status, "completed");
  assert.deepEqual(end.results.map((x) => [x.server, x.transport, x.status]), [
    ["everything", "stdio", "completed"],
    ["t", "stdio", "completed"],
  ]);
  assert.ok((end.results[1]!.tools as string[]).includes("crash"));
  const listed = records[begin + 2]!.payload.tools as { name: string; description: string }[];
  const echo = listed.find((t) => t.name === "mcp__t__echo");
  assert.deepEqual(echo, {
    name: "mcp__t__echo",
    description: "Echo a message back.",
    parameters: {
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    },
  });
  assert.ok(listed.some((t) => t.name === "read_file"), "built-in tools come first and stay");

  const out = outputs(records);
  assert.match(String(out.get("c1")!.output), /hello from the model/);
  assert.equal(out.get("c1")!.stop_reason, "completed");
  assert.equal((out.get("c2")!.images as string[]).length, 1);
  const big = String(out.get("c5")!.output);
  assert.ok(big.startsWith("x".repeat(1000)), "maxOutputLength keeps the head");
  assert.match(big, /\[output truncated: exceeded 1000 chars\]/);
  assert.match(big, /mcp__t__big/, "the full output is archived, and the note says where");
  assert.equal(out.get("c3")!.stop_reason, "failed");
  assert.match(String(out.get("c3")!.output), /MCP call failed/);
  assert.equal(
    out.get("c4")!.stop_reason,
    "failed",
    "a crashed server stays gone; the session goes on",
  );

  const requestTools = (s.server.requests[0]!.body as { tools: { function: { name: string } }[] })
    .tools.map((t) => t.function.name);
  assert.ok(requestTools.includes("mcp__everything__echo"));
  assert.ok(requestTools.includes("mcp__t__write"));
  assert.ok(!requestTools.some((n) => n.includes("bad")), "invalid names are not offered");
  assert.match(r.stderr, /"bad name!" skipped/);

  const validate = await runCli(["trace", "validate", path]);
  assert.equal(validate.code, 0, validate.stdout + validate.stderr);
  assert.deepEqual(await processesWith(marker), [], "no MCP server outlives penguin run");
});

Deno.test("penguin.jsonc turns MCP servers off, by name or all of them", async () => {
  await using s = await setup([turn.text("one"), turn.text("two")], {
    t: denoServer(TEST_SERVER),
    other: denoServer(TEST_SERVER),
  });
  await Deno.writeTextFile(join(s.ws, "penguin.jsonc"), '{ "mcp": { "deny": ["t"] } }');
  const denied = await runCli(["--root", s.root, "run", "--workspace", s.ws, "-m", "x"]);
  assert.equal(denied.code, 0, denied.stderr);
  assert.match(denied.stderr, /MCP servers t are off in this workspace/);
  const tools1 = (s.server.requests[0]!.body as { tools: { function: { name: string } }[] }).tools
    .map((t) => t.function.name);
  assert.ok(tools1.includes("mcp__other__echo"));
  assert.ok(!tools1.some((n) => n.startsWith("mcp__t__")));

  await Deno.writeTextFile(join(s.ws, "penguin.jsonc"), '{ "mcp": "off" }');
  const off = await runCli(["--root", s.root, "run", "--workspace", s.ws, "-m", "y"]);
  assert.equal(off.code, 0, off.stderr);
  const tools2 = (s.server.requests[1]!.body as { tools: { function: { name: string } }[] }).tools
    .map((t) => t.function.name);
  assert.ok(!tools2.some((n) => n.startsWith("mcp__")));
});

Deno.test("a subagent gets the same MCP servers as its parent", async () => {
  await using s = await setup([
    call("run_subagent", { description: "ask", prompt: "echo something" }, "p1"),
    call("mcp__t__echo", { message: "from the child" }, "k1"),
    turn.text("child finished"),
    turn.text("parent finished"),
  ], { t: denoServer(TEST_SERVER) });
  const r = await runCli(["--root", s.root, "run", "--workspace", s.ws, "-m", "delegate"]);
  assert.equal(r.code, 0, r.stderr);
  const childTools = (s.server.requests[1]!.body as { tools: { function: { name: string } }[] })
    .tools.map((t) => t.function.name);
  assert.ok(childTools.includes("mcp__t__echo"), childTools.join(" "));
  const childOutput = JSON.stringify(s.server.requests[2]!.body);
  assert.match(childOutput, /echo: from the child/);
});
