// `penguin mcp add|remove|list|test`, run as a subprocess against real servers.
import assert from "node:assert/strict";
import { mcpAddArgs, runCli } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";
import { cacheServers, denoServer, serveTestServerHttp, TEST_SERVER } from "../support/mcp.ts";

/** Run `fn` with a new data root and a new workspace directory, both removed afterwards. */
function withRoot(fn: (root: string, workspace: string) => Promise<void>): Promise<void> {
  return withTempDir(
    "penguin-mcp-cli-",
    (root) => withTempDir("penguin-mcp-ws-", (dir) => fn(root, dir)),
  );
}

/** `mcp add <name> --env ... -- <deno run ... server>` for the test server. */
function addArgs(
  root: string,
  name: string,
  extra: string[] = [],
  timeoutMs = 120_000,
  flags: string[] = [],
): string[] {
  const cfg = denoServer(TEST_SERVER, extra);
  const env = Object.entries(cfg.env).flatMap(([k, v]) => ["--env", `${k}=${v}`]);
  return mcpAddArgs(
    root,
    name,
    ...env,
    "--connect-timeout-ms",
    String(timeoutMs),
    ...flags,
    "--",
    cfg.command,
    ...cfg.args,
  );
}

Deno.test("mcp add, list --json, test and remove work on a real server", async () => {
  await cacheServers();
  await withRoot(async (root, workspace) => {
    const add = await runCli(addArgs(root, "t"));
    assert.equal(add.code, 0, add.stderr);
    assert.match(add.stdout, /^Added MCP server t for agent default_agent: connected in /);
    // A server that never answers is saved untested (a tested one is refused).
    const mute = await runCli(addArgs(root, "mute", ["--hang"], 120_000, ["--no-test"]));
    assert.equal(mute.code, 0, mute.stderr);
    // Adding a name again replaces the entry: the hanging server gets a short timeout.
    const muteShort = await runCli(addArgs(root, "mute", ["--hang"], 1500, ["--no-test"]));
    assert.match(muteShort.stdout, /^Replaced MCP server mute/);

    const list = await runCli(["--root", root, "mcp", "list", "--json", "--workspace", workspace]);
    assert.equal(list.code, 0, list.stderr);
    const json = JSON.parse(list.stdout);
    assert.deepEqual(
      json.servers.map((s: { name: string; status: string }) => [s.name, s.status]),
      [["t", "connected"], ["mute", "failed"]],
    );
    const echo = json.servers[0].tools.find((t: { name: string }) => t.name === "mcp__t__echo");
    assert.deepEqual(echo, {
      name: "mcp__t__echo",
      server_tool: "echo",
      permission: "r",
      description: "Echo a message back.",
    });
    assert.match(json.servers[1].error, /no answer within 1500 ms/);
    assert.match(list.stderr, /"bad name!" skipped/);

    const test = await runCli(["--root", root, "mcp", "test", "t", "--workspace", workspace]);
    assert.equal(test.code, 0, test.stderr);
    assert.match(test.stdout, /^MCP server t connected in \d+\.\ds \(stdio\), 10 tool\(s\):\n/);
    assert.match(test.stdout, /\n {2}mcp__t__write {2}rw\n/);

    const failed = await runCli(["--root", root, "mcp", "test", "mute", "--workspace", workspace]);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /MCP server mute failed after .*no answer within 1500 ms/);

    const rm = await runCli(["--root", root, "mcp", "remove", "mute"]);
    assert.equal(rm.code, 0, rm.stderr);
    const again = await runCli(["--root", root, "mcp", "remove", "mute"]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /has no MCP server "mute"/);
  });
});

Deno.test("mcp add refuses bad input with a usage error saying what to write", async () => {
  await withRoot(async (root) => {
    const cases: [string[], RegExp][] = [
      [["mcp", "add", "x"], /give the server's command after --/],
      [["mcp", "add", "x", "--url", "http://h/", "--", "cmd"], /either --url or a command/],
      [["mcp", "add", "x", "--env", "NOEQUALS", "--", "cmd"], /--env "NOEQUALS": expected K=V/],
      [["mcp", "add", "x", "--network", "maybe", "--", "cmd"], /expected on or off/],
      [["mcp", "add", "bad/name", "--", "cmd"], /Invalid MCP server name "bad\/name"/],
      [["mcp", "add", "x", "--url", "ftp://h/"], /expected an http:\/\/ or https:\/\/ URL/],
      [["mcp", "add", "x", "--url", "http://h/", "--network", "on"], /stdio servers only/],
    ];
    for (const [args, expected] of cases) {
      const r = await runCli(["--root", root, ...args]);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, expected);
    }
  });
});

Deno.test("mcp list with no servers says how to add one", async () => {
  await withRoot(async (root, workspace) => {
    const r = await runCli(["--root", root, "mcp", "list", "--workspace", workspace]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /has no MCP servers\. Add one with: penguin mcp add <name> -- <command>/,
    );
  });
});

Deno.test("mcp test reaches a Streamable HTTP server on 127.0.0.1 under the binary's permissions", async () => {
  await using web = serveTestServerHttp((req) => req.headers.get("x-team") === "penguins");
  await withRoot(async (root, workspace) => {
    const add = await runCli(
      mcpAddArgs(root, "web", "--url", web.url, "--header", "X-Team: penguins"),
    );
    assert.equal(add.code, 0, add.stderr);
    const test = await runCli(["--root", root, "mcp", "test", "web", "--workspace", workspace]);
    assert.equal(test.code, 0, test.stderr);
    assert.match(test.stdout, /^MCP server web connected in \d+\.\ds \(http\), 10 tool\(s\):/);
  });
});
