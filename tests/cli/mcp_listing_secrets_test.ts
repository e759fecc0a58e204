// Attack round 19 mcpsecrets #12/#13: what an MCP server says when it connects (its tool list, its
// errors) was masked with that server's own env and header values only. A command can write a
// vault value into a workspace file, which a server started later reads and quotes in a tool
// description: the vault value reached the model, the trace and the run's output. Every secret of
// the session masks it: the vault's, the API keys and every server entry's.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addMcpServer, DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { basicPassword, headerSecretValue, mcpSecrets } from "../../lib/mcp/secrets.ts";
import { type ScriptedTurn, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { assertNoPieceOf, readAll, setVault } from "../support/secrets.ts";
import { withModelRoot } from "../support/roots.ts";
import { cacheServers, denoServer, initDefaultAgent, TEST_SERVER } from "../support/mcp.ts";

const VAULT_VALUE = "vlt-5d2c7a19e4b83f06";

Deno.test("run: a vault value an MCP server quotes in its tool list is masked on the way to the model", async () => {
  await cacheServers();
  const queue: ScriptedTurn[] = [turn.text("Seen.")];
  await withModelRoot({ handler: () => queue.shift(), maxRequests: 5 }, async (sb, server) => {
    const config = await initDefaultAgent(sb.root);
    await setVault(sb.root, "MY_TOKEN", VAULT_VALUE);
    // What an earlier command left in the workspace: the vault value it was given.
    const leak = join(sb.workspace, "leak.txt");
    await Deno.writeTextFile(leak, VAULT_VALUE);
    const deno = denoServer(TEST_SERVER);
    // The server's listed secret comes from that file, not from its entry.
    await addMcpServer(config, "t", {
      ...deno,
      command: "/bin/sh",
      args: ["-c", `LISTED_SECRET="$(cat ${leak})" exec "$@"`, "sh", deno.command, ...deno.args],
    });
    const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"]);
    assert.equal(r.code, 0, r.stderr);
    const bodies = JSON.stringify(server.requests.map((q) => q.body));
    assert.match(bodies, /Uses key \[redacted:vault:MY_TOKEN\]/, "the server listed its tools");
    assertNoPieceOf(bodies, [VAULT_VALUE], "a request body");
    const agent = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID);
    assertNoPieceOf(await readAll(join(agent, "traces")), [VAULT_VALUE], "a trace file");
    assertNoPieceOf(r.stdout + r.stderr, [VAULT_VALUE], "the run's output");
  });
});

Deno.test("mcp test: a failing server's stderr quoting a vault value is masked", async () => {
  await withModelRoot({ turns: [] }, async (sb) => {
    const config = await initDefaultAgent(sb.root);
    await setVault(sb.root, "MY_TOKEN", VAULT_VALUE);
    const leak = join(sb.workspace, "leak.txt");
    await Deno.writeTextFile(leak, VAULT_VALUE);
    await addMcpServer(config, "f", {
      command: "/bin/sh",
      args: ["-c", `echo "starting with $(cat ${leak})" >&2; exit 1`],
    });
    const r = await runCli(["--root", sb.root, "mcp", "test", "f", "--workspace", sb.workspace]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout + r.stderr, /starting with \[redacted:vault:MY_TOKEN\]/);
    assertNoPieceOf(r.stdout + r.stderr, [VAULT_VALUE], "mcp test's output");
  });
});

Deno.test("a header value written with spaces around it is masked as fetch sends it, trimmed", () => {
  assert.equal(headerSecretValue(" Yp7v2j4Q9 "), "Yp7v2j4Q9");
  assert.equal(headerSecretValue("Bearer  tok-123456789 "), "tok-123456789");
});

Deno.test("a Basic header's password is a secret too, decoded as a server may print it", () => {
  const value = `Basic ${btoa("alice:s3cr3t-Passw0rd-771")}`;
  assert.equal(basicPassword(value), "s3cr3t-Passw0rd-771");
  assert.equal(basicPassword("Bearer abc"), undefined);
  assert.equal(basicPassword("Basic !!notbase64"), undefined);
  const secrets = mcpSecrets(
    [
      {
        name: "h",
        transport: "http",
        url: "http://127.0.0.1:1/mcp",
        headers: { Authorization: value },
      },
    ] as unknown as Parameters<typeof mcpSecrets>[0],
  );
  assert.ok(secrets.some((s) => s.value === "s3cr3t-Passw0rd-771"), JSON.stringify(secrets));
});
