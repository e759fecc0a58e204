// MCP servers start at a session's first run, not when it is created, and
// stop when it is disposed: real servers, real processes, counted by PID.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createAgent } from "../../lib/agent/mod.ts";
import {
  addMcpServer,
  addModel,
  DEFAULT_AGENT_ID,
  DEFAULT_PROJECT_ID,
  loadOrInitAgent,
} from "../../lib/state/mod.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { cacheServers, denoServer, processesWith, TEST_SERVER } from "../support/mcp.ts";

Deno.test("MCP servers start at a session's first run and stop when it is disposed", async () => {
  await cacheServers();
  const marker = `penguin-lazy-marker-${crypto.randomUUID()}`;
  const server = await startModelServer({ turns: [turn.text("hello")] });
  const root = await Deno.makeTempDir({ prefix: "penguin-mcp-lazy-" });
  const ws = await Deno.makeTempDir({ prefix: "penguin-mcp-lazy-ws-" });
  try {
    await addModel(join(root, DEFAULT_PROJECT_ID, ".project_config.toml"), {
      provider: "custom",
      model_id: "m",
      base_url: server.baseUrl("openai-chat"),
      client_type: "openai-chat",
    }, { setDefault: true });
    const loaded = await loadOrInitAgent({
      root,
      projectId: DEFAULT_PROJECT_ID,
      agentId: DEFAULT_AGENT_ID,
    });
    await addMcpServer(loaded.paths.systemConfig, "t", denoServer(TEST_SERVER, [marker]));
    const agent = await createAgent({ root });
    const session = await agent.createSession({
      workspaceDir: ws,
      provider: "custom",
      modelId: "m",
      warn: () => {},
    });
    try {
      assert.deepEqual(await processesWith(marker), [], "nothing starts with the session");
      assert.ok(!session.tools.some((t) => t.name.startsWith("mcp__")));
      const kinds: string[] = [];
      for await (const msg of session.run("hi", { approve: "allow-all" })) {
        if (msg.type === "event_msg") kinds.push(msg.payload.type);
      }
      assert.deepEqual(
        kinds.filter((k) => k.startsWith("mcp_") || k === "tool_list_ready"),
        ["mcp_connect_begin", "mcp_connect_end", "tool_list_ready"],
      );
      assert.ok(
        session.tools.some((t) => t.name === "mcp__t__echo"),
        "offered after the first run",
      );
      assert.ok((await processesWith(marker)).length > 0, "the server runs during the session");
    } finally {
      await session.dispose();
    }
    assert.deepEqual(await processesWith(marker), [], "dispose stops the server");
  } finally {
    await server.close();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(ws, { recursive: true });
  }
});
