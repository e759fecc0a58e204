// Real MCP servers as real subprocesses, confined by lib/sandbox.
import assert from "node:assert/strict";
import { visibleTempDir } from "../support/roots.ts";
import { join } from "node:path";
import {
  closeAll,
  connectAll,
  launchArgv,
  type McpConnection,
  mcpTools,
} from "../../lib/mcp/mod.ts";
import { withServerEnv } from "../../lib/mcp/stdio_transport.ts";
import { createPolicy, type SandboxPolicy } from "../../lib/sandbox/mod.ts";
import { parseMcpServers } from "../../lib/state/mod.ts";
import type { Tool, ToolEvent } from "../../lib/tools/mod.ts";
import {
  cacheServers,
  denoServer,
  EVERYTHING,
  FILESYSTEM,
  serveTestServerHttp,
  TEST_SERVER,
} from "../support/mcp.ts";

interface Setup {
  workspace: string;
  dataRoot: string;
  policy: SandboxPolicy;
  connections: McpConnection[];
  tools: Tool[];
  warnings: string[];
  results: Awaited<ReturnType<typeof connectAll>>["results"];
  [Symbol.asyncDispose](): Promise<void>;
}

async function connect(
  entries: unknown[],
  policyExtra: Partial<Parameters<typeof createPolicy>[0]> = {},
  /** Put the data root where the sandbox could see it but for the hiding (not in /tmp). */
  visibleRoot = false,
): Promise<Setup> {
  await cacheServers();
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "penguin-mcp-ws-" }));
  const dataRoot = visibleRoot
    ? await visibleTempDir("penguin-mcp-root-")
    : await Deno.realPath(await Deno.makeTempDir({ prefix: "penguin-mcp-root-" }));
  const policy = createPolicy({ workspace, dataRoot, ...policyExtra });
  const { servers, warnings } = await parseMcpServers(entries, "system_config.yaml");
  assert.deepEqual(warnings, []);
  const lines: string[] = [];
  const { connections, results } = await connectAll(servers, {
    policy,
    // As in a session: the logs lie under the hidden data root.
    logDir: join(dataRoot, "mcp_logs"),
  }, (l) => lines.push(l));
  const tools = mcpTools(connections, (l) => lines.push(l));
  return {
    workspace,
    dataRoot,
    policy,
    connections,
    tools,
    warnings: lines,
    results,
    async [Symbol.asyncDispose]() {
      await closeAll(connections);
      await Deno.remove(workspace, { recursive: true }).catch(() => {});
      await Deno.remove(dataRoot, { recursive: true }).catch(() => {});
    },
  };
}

interface Output {
  text: string;
  images: string[];
  status: string;
}

async function call(s: Setup, name: string, args: Record<string, unknown> = {}): Promise<Output> {
  const tool = s.tools.find((t) => t.definition.name === name);
  assert.ok(tool, `no tool ${name} among ${s.tools.map((t) => t.definition.name).join(", ")}`);
  const out: Output = { text: "", images: [], status: "completed" };
  const events: AsyncIterable<ToolEvent> = tool.run(args, {
    sessionId: "s",
    toolCallId: "c",
    signal: new AbortController().signal,
  });
  for await (const e of events) {
    if (e.type === "delta") out.text += e.text;
    if (e.type === "images") out.images.push(...e.images);
    if (e.type === "result" && e.status) out.status = e.status;
  }
  return out;
}

Deno.test("the reference everything server answers echo and image calls through the confined transport", async () => {
  await using s = await connect([{
    name: "everything",
    config: denoServer(EVERYTHING, ["stdio"]),
  }]);
  assert.equal(s.results[0]!.status, "completed");
  const echo = await call(s, "mcp__everything__echo", { message: "hello penguin" });
  assert.equal(echo.status, "completed");
  assert.match(echo.text, /hello penguin/);
  const image = await call(s, "mcp__everything__get-tiny-image");
  assert.equal(image.images.length, 1);
  assert.match(image.images[0]!, /^data:image\/png;base64,iVBOR/);
  const echoTool = s.tools.find((t) => t.definition.name === "mcp__everything__echo")!;
  assert.equal(echoTool.definition.permission, "r", "readOnlyHint makes a tool read-only");
});

Deno.test("a filesystem server rooted at / cannot read the data root or write outside the workspace", async () => {
  await using s = await connect([{ name: "fs", config: denoServer(FILESYSTEM, ["/"]) }]);
  assert.equal(s.results[0]!.status, "completed", JSON.stringify(s.results));
  const secret = join(s.dataRoot, ".project_config.toml");
  await Deno.writeTextFile(secret, 'api_key = "sk-do-not-leak-1234"\n');
  const read = await call(s, "mcp__fs__read_text_file", { path: secret });
  assert.equal(read.status, "failed", read.text);
  assert.doesNotMatch(read.text, /sk-do-not-leak/);

  const outside = join(
    await Deno.realPath("/var/tmp"),
    `penguin-mcp-escape-${crypto.randomUUID()}`,
  );
  const write = await call(s, "mcp__fs__write_file", { path: outside, content: "escaped" });
  assert.equal(write.status, "failed", write.text);
  await assert.rejects(Deno.stat(outside), Deno.errors.NotFound);

  const inside = join(s.workspace, "note.txt");
  const ok = await call(s, "mcp__fs__write_file", { path: inside, content: "inside" });
  assert.equal(ok.status, "completed", ok.text);
  assert.equal(await Deno.readTextFile(inside), "inside");
});

Deno.test("a server that crashes mid-call gives a failed output naming the exit", async () => {
  await using s = await connect([{ name: "t", config: denoServer(TEST_SERVER) }]);
  const out = await call(s, "mcp__t__crash");
  assert.equal(out.status, "failed");
  assert.match(out.text, /MCP call failed: .*(closed|exited with code 3)/);
});

Deno.test("a server that never answers fails after connectTimeoutMs with one warning, and the others connect", async () => {
  await using s = await connect([
    { name: "mute", config: denoServer(TEST_SERVER, ["--hang"], { connectTimeoutMs: 1500 }) },
    { name: "t", config: denoServer(TEST_SERVER) },
  ]);
  assert.equal(s.results[0]!.status, "failed");
  assert.match(s.results[0]!.error!, /no answer within 1500 ms/);
  assert.equal(s.results[1]!.status, "completed");
  const mute = s.warnings.filter((w) => w.includes("mute"));
  assert.equal(mute.length, 1);
  assert.match(mute[0]!, /^\[penguin\] MCP server mute unavailable: .*; skipped\.$/);
  assert.ok(s.tools.some((t) => t.definition.name === "mcp__t__echo"));
  assert.ok(!s.tools.some((t) => t.definition.name.startsWith("mcp__mute__")));
});

Deno.test("results render as text, images, structured JSON and failures; invalid tool names are skipped", async () => {
  await using s = await connect([{ name: "t", config: denoServer(TEST_SERVER) }]);
  assert.deepEqual(await call(s, "mcp__t__echo", { message: "x" }), {
    text: "echo: x",
    images: [],
    status: "completed",
  });
  assert.deepEqual(await call(s, "mcp__t__fail"), {
    text: "[tool reported an error with no message]",
    images: [],
    status: "failed",
  });
  assert.equal((await call(s, "mcp__t__structured")).text, '{\n  "answer": 42\n}');
  const picture = await call(s, "mcp__t__picture");
  assert.equal(picture.text, "a dot");
  assert.equal(picture.images.length, 1);
  assert.ok(!s.tools.some((t) => t.definition.name.includes("bad")));
  assert.equal(s.warnings.filter((w) => w.includes('"bad name!"')).length, 1);
  const write = s.tools.find((t) => t.definition.name === "mcp__t__write")!;
  assert.equal(write.definition.permission, "rw", "a tool without readOnlyHint may write");
});

Deno.test("a stdio server gets its configured env but never the vault, and its stderr goes to the log", async () => {
  await using s = await connect(
    [{ name: "t", config: denoServer(TEST_SERVER, [], { env: { MY_SETTING: "1" } }) }],
    { vault: { VAULT_TOKEN: "vault-secret-value" } },
  );
  const names = (await call(s, "mcp__t__env")).text.split("\n");
  assert.ok(names.includes("MY_SETTING"), names.join(" "));
  assert.ok(!names.includes("VAULT_TOKEN"), "vault values are not given to MCP servers");
  const log = await Deno.readTextFile(join(s.dataRoot, "mcp_logs", "t", "stderr.log"));
  assert.match(log, /test server starting/);
});

Deno.test("a stdio server writes its log under the hidden data root and sees no other server's log", async () => {
  await using s = await connect(
    [
      { name: "t", config: denoServer(TEST_SERVER) },
      { name: "u", config: denoServer(TEST_SERVER) },
    ],
    {},
    true,
  );
  const logOf = (name: string) => join(s.dataRoot, "mcp_logs", name, "stderr.log");
  assert.match(await Deno.readTextFile(logOf("t")), /test server starting/);
  assert.match(await Deno.readTextFile(logOf("u")), /test server starting/);
  const other = await call(s, "mcp__u__read", { path: logOf("t") });
  assert.equal(other.status, "failed");
  assert.match(other.text, /cannot read: No such file or directory/);
  const rootListing = await call(s, "mcp__u__read", { path: join(s.dataRoot, "mcp_logs") });
  assert.equal(rootListing.status, "failed");
});

Deno.test("permission r or rw in the config overrides each tool's readOnlyHint", async () => {
  await using s = await connect([{
    name: "t",
    config: denoServer(TEST_SERVER, [], { permission: "r" }),
  }]);
  assert.ok(s.tools.length > 3);
  assert.ok(s.tools.every((t) => t.definition.permission === "r"));
});

Deno.test("a Streamable HTTP server on 127.0.0.1 works, with the configured headers", async () => {
  await using web = serveTestServerHttp((req) =>
    req.headers.get("authorization") === "Bearer t0ken"
  );
  await using s = await connect([{
    name: "web",
    config: { url: web.url, headers: { Authorization: "Bearer t0ken" } },
  }]);
  assert.equal(s.results[0]!.status, "completed", JSON.stringify(s.results));
  assert.equal(s.results[0]!.transport, "http");
  assert.equal((await call(s, "mcp__web__echo", { message: "over http" })).text, "echo: over http");
  assert.ok(web.accepted >= 3, "handshake, listing and call all carried the header");
});

Deno.test("a stdio server starts in the read-only root, not the workspace the model writes, unless its entry names a cwd", async () => {
  await using s = await connect([
    { name: "t", config: denoServer(TEST_SERVER) },
  ]);
  assert.equal((await call(s, "mcp__t__cwd")).text, "/");
  const dir = await Deno.realPath(await Deno.makeTempDir({ dir: "/var/tmp" }));
  try {
    await using named = await connect([
      { name: "t", config: denoServer(TEST_SERVER, [], { cwd: dir }) },
    ]);
    assert.equal((await call(named, "mcp__t__cwd")).text, dir);
    await using inWorkspace = await connect([
      { name: "t", config: denoServer(TEST_SERVER, [], { sandbox: { cwd: "workspace" } }) },
    ]);
    assert.equal((await call(inWorkspace, "mcp__t__cwd")).text, inWorkspace.workspace);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a stdio server's env values are not in its arguments, which every user's ps shows", () => {
  // Attack round 20 mcpsecrets #3: `env TOKEN=…` was part of the launcher's and bwrap's argv.
  const policy = createPolicy({ workspace: "/tmp", home: "", hostEnv: {} });
  const launch = {
    command: "server",
    args: ["--flag"],
    env: { API_TOKEN: "tok-5f0e1d2c3b4a" },
    policy,
    stderrLog: "/dev/null",
  };
  const argv = launchArgv(launch);
  assert.ok(!argv.join(" ").includes("tok-5f0e1d2c3b4a"), argv.join(" "));
  assert.deepEqual(argv.slice(-2), ["server", "--flag"]);
  assert.equal(withServerEnv(policy, launch.env).env.vault["API_TOKEN"], "tok-5f0e1d2c3b4a");
});
