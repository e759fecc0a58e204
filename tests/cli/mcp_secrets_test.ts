// MCP `env` and header values are secrets like vault values: a real `penguin run` against the
// scripted model, with a stdio server that logs its token on stderr and an HTTP server reached
// with a bearer token. Neither the values nor any 8-character piece of them (nor of a vault
// value) reaches the trace, the CLI's output, `trace export`, telemetry or the model; the
// server's stderr log lies under the data root, which the model's commands cannot see.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addMcpServer, DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { type ScriptedTurn, startModelServer, turn } from "../support/model_server.ts";
import { mcpAddArgs, runCli, runCliOk } from "../support/cli.ts";
import { assertNoPieceOf, readAll, setVault, traceViews } from "../support/secrets.ts";
import { makeRoot, withTempDir } from "../support/roots.ts";
import { packedText } from "./_mcp_snapshot.ts";
import { startCollector } from "../support/otlp_collector.ts";
import {
  cacheServers,
  denoServer,
  initDefaultAgent,
  serveTestServerHttp,
  TEST_SERVER,
} from "../support/mcp.ts";

const MCP_TOKEN = "mcp-tok-4f1e9a7b2c3d8e60";
const HEADER_TOKEN = "hdr-cred-91ab27cd38ef45aa";
const VAULT_TOKEN = "vlt-7c3a91e2d4b85f60";
const SECRETS = [MCP_TOKEN, HEADER_TOKEN, VAULT_TOKEN];

/** Fail when any 8-character piece of a secret occurs in `text`. */
function assertNoPiece(text: string, where: string): void {
  assertNoPieceOf(text, SECRETS, where);
}

const ok = (args: string[]) => runCliOk(args);

Deno.test("run: MCP env and header values and pieces of secrets are masked on every output path; the server log is out of the model's reach", async () => {
  await cacheServers();
  const queue: ScriptedTurn[] = [];
  const server = await startModelServer({ handler: () => queue.shift(), maxRequests: 10 });
  const sb = await makeRoot(server, { visible: true });
  await using http = serveTestServerHttp((req) =>
    req.headers.get("authorization") === `Bearer ${HEADER_TOKEN}`
  );
  const collector = startCollector();
  try {
    const agent = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID);
    const config = await initDefaultAgent(sb.root);
    await setVault(sb.root, "MY_TOKEN", VAULT_TOKEN);
    // A stdio server that logs its token on stderr as it starts (as real servers do in debug mode).
    const deno = denoServer(TEST_SERVER);
    await addMcpServer(config, "t", {
      ...deno,
      command: "/bin/sh",
      args: [
        "-c",
        'printf "server log: token %s\\n" "$T_TOKEN" >&2; exec "$@"',
        "sh",
        deno.command,
        ...deno.args,
      ],
      env: { ...deno.env, T_TOKEN: MCP_TOKEN },
    });
    await addMcpServer(config, "h", {
      url: http.url,
      headers: { Authorization: `Bearer ${HEADER_TOKEN}` },
    });
    await Deno.writeTextFile(
      config,
      (await Deno.readTextFile(config)) +
        `telemetry:\n  otlp:\n    endpoint: ${collector.endpoint}\n  include_content: true\n`,
    );
    await Deno.writeTextFile(
      join(sb.workspace, "tokens.txt"),
      `mcp-prefix=${MCP_TOKEN.slice(0, 16)}\nhdr-suffix=${HEADER_TOKEN.slice(-16)}\n` +
        `vault-middle=${VAULT_TOKEN.slice(4, 14)}\nmcp-whole=${MCP_TOKEN}\n`,
    );
    queue.push(
      turn.toolCall("mcp__h__echo", { message: "over http" }),
      turn.toolCall("exec_command", {
        cmd: `cat ${agent}/mcp_logs/*/t/stderr.log; echo "--"; ` +
          `cat ${agent}/scratchpad/*/mcp/t.stderr.log; echo "--"; cat tokens.txt`,
      }),
      turn.text("Seen."),
    );

    const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(http.accepted > 0, "the HTTP server was reached with its header");
    const sid = /^Session: (session-\S+)$/m.exec(r.stderr)?.[1];
    assert.ok(sid, r.stderr);

    // The server's log is kept for the user, under the data root ...
    const log = await Deno.readTextFile(join(agent, "mcp_logs", sid, "t", "stderr.log"));
    assert.match(log, new RegExp(`server log: token ${MCP_TOKEN}`));
    // ... which the model's commands cannot see (not even masked: absent).
    const bodies = JSON.stringify(server.requests.map((q) => q.body));
    assert.ok(!bodies.includes("server log"), "the server log reached the model");
    assert.match(bodies, /mcp_logs\/\*\/t\/stderr\.log'?: No such file or directory/);
    assert.ok(
      bodies.includes(
        "mcp-prefix=[redacted:mcp:t.T_TOKEN]\\nhdr-suffix=[redacted:mcp:h.Authorization]\\n" +
          "vault-middle=[redacted:vault:MY_TOKEN]\\nmcp-whole=[redacted:mcp:t.T_TOKEN]",
      ),
      bodies.slice(-2000),
    );

    assertNoPiece(bodies, "a request body");
    const traces = await readAll(join(agent, "traces"));
    assert.ok(traces.includes("mcp-prefix=[redacted:mcp:t.T_TOKEN]"));
    assertNoPiece(traces, "a trace file");
    assertNoPiece(r.stdout + r.stderr, "the run's output");
    for (const extra of [[], ["--no-redact"]]) {
      for (const v of await traceViews(sb.root, sid, ["md", "html", "json"], extra)) {
        if (v.format) assert.ok(v.stdout.includes("[redacted:mcp:t.T_TOKEN]"), `export ${v.where}`);
        assertNoPiece(v.text, v.where);
      }
    }
    const spans = JSON.stringify(collector.received.map((x) => x.body));
    assert.ok(spans.includes("[redacted:mcp:t.T_TOKEN]"), "the tool output is on a span");
    assertNoPiece(spans, "a telemetry span");

    // Deleting the session deletes its server logs too.
    await ok(["--root", sb.root, "sessions", "delete", sid, "--yes"]);
    assert.equal(
      await Deno.stat(join(agent, "mcp_logs", sid)).then(() => true, () => false),
      false,
    );
  } finally {
    await collector.close();
    await server.close();
    await sb.cleanup();
  }
});

Deno.test("agent snapshot leaves MCP env and header values out, keeping their names", async () => {
  await withTempDir("penguin-mcp-snap-", async (base) => {
    const root = join(base, "data");
    await ok(["--root", root, "skills", "list"]); // initializes the agent
    await ok(
      mcpAddArgs(
        root,
        "files",
        "--no-test",
        "--env",
        `GH_TOKEN=${MCP_TOKEN}`,
        "--",
        "/usr/bin/true",
      ),
    );
    await ok(mcpAddArgs(
      root,
      "api",
      "--no-test",
      "--url",
      "https://mcp.example.com/mcp",
      "--header",
      `Authorization: Bearer ${HEADER_TOKEN}`,
    ));
    const agent = join(root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID);
    const own = join(agent, "agent_state", "system_config.yaml");
    const before = await Deno.readTextFile(own);
    assert.ok(before.includes(MCP_TOKEN) && before.includes(HEADER_TOKEN));

    const r = await ok(["--root", root, "agent", "snapshot"]);
    assert.match(
      r.stderr,
      /packed agent_state\/system_config\.yaml: MCP secrets left out \(values emptied\): files\.GH_TOKEN, api\.Authorization/,
    );
    const { config: packed } = await packedText(root);
    assertNoPiece(packed, "the snapshot's system_config.yaml");
    assert.match(packed, /GH_TOKEN: ""/);
    assert.match(packed, /Authorization: ""/);
    // The URL path is left out (closed rule); the server is marked as needing its URL.
    assert.match(packed, /url: https:\/\/mcp\.example\.com # penguin:/);
    // The agent's own configuration keeps its values.
    assert.equal(await Deno.readTextFile(own), before);
  });
});

Deno.test("mcp test shows the end of a failing server's stderr with its env values masked", async () => {
  await withTempDir("penguin-mcp-test-", async (base) => {
    const root = join(base, "data");
    await ok(["--root", root, "skills", "list"]); // initializes the agent
    await ok(mcpAddArgs(
      root,
      "bad",
      "--no-test",
      "--env",
      `T_TOKEN=${MCP_TOKEN}`,
      "--",
      "/bin/sh",
      "-c",
      'echo "starting with token=$T_TOKEN, prefix ${T_TOKEN%????????}" >&2; exit 3',
    ));
    const r = await runCli(["--root", root, "mcp", "test", "bad", "--workspace", base]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /Its stderr ended with:\nstarting with token=\[redacted:mcp:bad\.T_TOKEN\], prefix \[redacted:mcp:bad\.T_TOKEN\]/,
    );
    assertNoPiece(r.stdout + r.stderr, "mcp test's output");
  });
});
