import assert from "node:assert/strict";
import { join } from "node:path";
import {
  addMcpServer,
  MCP_CONNECT_TIMEOUT_MS,
  parseMcpServers,
  parseSystemConfig,
  removeMcpServer,
} from "../../lib/state/mod.ts";

Deno.test("a command means stdio, a url means Streamable HTTP, sse only when written", async () => {
  const { servers, warnings } = await parseMcpServers([
    { name: "files", config: { command: "npx", args: ["-y", "pkg"], env: { A: "1" } } },
    { name: "web", config: { url: "https://example.com/mcp", headers: { K: "v" } } },
    { name: "old", config: { transport: "sse", url: "http://127.0.0.1:9/sse" } },
  ], "cfg.yaml");
  assert.deepEqual(warnings, []);
  assert.deepEqual(servers.map((s) => s.transport), ["stdio", "http", "sse"]);
  assert.deepEqual(servers[0], {
    name: "files",
    transport: "stdio",
    command: "npx",
    args: ["-y", "pkg"],
    env: { A: "1" },
    connectTimeoutMs: MCP_CONNECT_TIMEOUT_MS,
    permission: "auto",
    sandbox: { network: false, writable: [], readable: [], workspaceCwd: false },
  });
});

Deno.test("stdio servers have the network off unless their sandbox block turns it on", async () => {
  const { servers } = await parseMcpServers([
    { name: "a", config: { command: "x" } },
    { name: "b", config: { command: "x", sandbox: { network: "on", writable: ["/srv/c"] } } },
    { name: "c", config: { command: "x", sandbox: { network: true } } },
    { name: "d", config: { command: "x", sandbox: { cwd: "workspace" } } },
    { name: "e", config: { command: "x", sandbox: { cwd: "/srv" } } },
  ], "cfg.yaml");
  assert.deepEqual(
    servers.map((s) => s.transport === "stdio" ? s.sandbox : undefined),
    [
      { network: false, writable: [], readable: [], workspaceCwd: false },
      { network: true, writable: ["/srv/c"], readable: [], workspaceCwd: false },
      { network: true, writable: [], readable: [], workspaceCwd: false },
      { network: false, writable: [], readable: [], workspaceCwd: true },
    ],
  );
});

Deno.test("invalid entries and repeated names are skipped with one warning each, naming the entry", async () => {
  const { servers, warnings } = await parseMcpServers([
    { name: "ok", config: { command: "x" } },
    { name: "bad name", config: { command: "x" } },
    { name: "nothing", config: {} },
    { name: "both", config: { command: "x", url: "http://127.0.0.1/" } },
    { name: "rel", config: { command: "x", sandbox: { writable: ["relative/dir"] } } },
    { name: "perm", config: { command: "x", permission: "admin" } },
    { name: "ftp", config: { url: "ftp://example.com" } },
    { name: "ok", config: { command: "y" } },
    "just a string",
  ], "cfg.yaml");
  assert.deepEqual(servers.map((s) => s.name), ["ok"]);
  assert.equal(warnings.length, 8);
  assert.match(warnings[0]!, /^cfg\.yaml: tools\.mcpServers\[1\]: name "bad name" must match/);
  assert.match(warnings[1]!, /\[2\]: nothing: config needs a command \(stdio\) or a url \(http\)/);
  assert.match(warnings[2]!, /\[3\]: both: config has both command and url/);
  assert.match(warnings[3]!, /\[4\]: rel: config\.sandbox\.writable\.0: expected absolute paths/);
  assert.match(warnings[4]!, /\[5\]: perm: config\.permission: expected auto, r or rw/);
  assert.match(warnings[5]!, /\[6\]: ftp: config\.url: expected an http:\/\/ or https:\/\/ URL/);
  assert.match(warnings[6]!, /\[7\]: the name ok is used twice; server skipped$/);
  assert.match(warnings[7]!, /\[8\]: expected a mapping with name and config/);
});

Deno.test("adding and removing a server keeps the rest of system_config.yaml, comments included", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "system_config.yaml");
    await Deno.writeTextFile(
      path,
      "# my agent\nsystem_prompt: hi # keep me\ntools:\n  mcpServers: []\n",
    );
    assert.equal(await addMcpServer(path, "files", { command: "npx", args: ["a b"] }), false);
    assert.equal(await addMcpServer(path, "web", { url: "http://127.0.0.1:1/mcp" }), false);
    assert.equal(
      await addMcpServer(path, "files", { command: "node" }),
      true,
      "same name replaces",
    );
    let text = await Deno.readTextFile(path);
    assert.match(text, /^# my agent\nsystem_prompt: hi # keep me\n/);
    const cfg = parseSystemConfig(text, path);
    assert.deepEqual(cfg.tools?.mcpServers, [
      { name: "files", config: { command: "node" } },
      { name: "web", config: { url: "http://127.0.0.1:1/mcp" } },
    ]);
    assert.equal(await removeMcpServer(path, "files"), true);
    assert.equal(await removeMcpServer(path, "files"), false);
    text = await Deno.readTextFile(path);
    assert.match(text, /# keep me/);
    assert.deepEqual(parseSystemConfig(text, path).tools?.mcpServers, [
      { name: "web", config: { url: "http://127.0.0.1:1/mcp" } },
    ]);
    await assert.rejects(
      addMcpServer(path, "x", { command: "a", url: "http://h/" }),
      /both command and url/,
    );
    await assert.rejects(
      addMcpServer(path, "-x", { command: "a" }),
      /Invalid MCP server name "-x"/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
