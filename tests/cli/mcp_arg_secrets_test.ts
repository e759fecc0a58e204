// MCP credentials wherever a server's configuration carries them (issue 26 item 5, red team Y7a–c,
// Y26): a token as a URL path segment (`/mcp/<tok>/sse`), a lone URL user, `?tk=<v>`, a header
// passed as a server argument (`--header "Authorization: Bearer X"`, `-H "X-Api-Key:Y"`) and
// `-p <pw>`. Arguments are plain only when they clearly are not credentials (an allowlist), so a
// real `agent snapshot` leaves these out, and a real `penguin run` whose server echoes its argv
// masks them in the trace, the output and the model's requests; ordinary servers read as before.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { argSecrets } from "../../lib/state/mcp_arg_secrets.ts";
import { urlSecretParts } from "../../lib/state/mcp_url_secrets.ts";
import { type ScriptedTurn, turn } from "../support/model_server.ts";
import { runCli, runCliOk } from "../support/cli.ts";
import { mcpRemoteArgs, packedText } from "./_mcp_snapshot.ts";
import { readAll } from "../support/secrets.ts";
import { withModelRoot, withRoot } from "../support/roots.ts";
import { cacheServers, denoServer, TEST_SERVER } from "../support/mcp.ts";

/** `penguin --root <root> <args>`, asserting that it exited 0. */
const ok = (args: string[], root: string) => runCliOk(["--root", root, ...args]);

const SNAP_TOKENS = [
  "PathTok3nZZ0123456789",
  "LoneUserTok3nZZ",
  "ShortParamTok3nZZ",
  "HdrArgTok3nZZ",
  "CurlHdrTok3nZZ",
  "ShortOptPwTok3nZZ",
] as const;

Deno.test("agent snapshot leaves out MCP tokens in URL paths, header arguments and short options", async () => {
  await withRoot(async (root) => {
    const [path, user, param, hdr, curl, pw] = SNAP_TOKENS;
    await ok(
      ["mcp", "add", "zap", "--no-test", "--url", `https://a.example.com/mcp/${path}/sse`],
      root,
    );
    await ok([
      "mcp",
      "add",
      "lone",
      "--no-test",
      "--url",
      `https://${user}@mcp.example.com/mcp?tk=${param}&region=eu`,
    ], root);
    await runCliOk(mcpRemoteArgs(
      root,
      "rem",
      "https://mcp.example.com/sse",
      "--header",
      `Authorization: Bearer ${hdr}`,
      "-H",
      `X-Api-Key:${curl}`,
      "-p",
      pw,
    ));
    // Ordinary servers: nothing of theirs is a secret.
    await ok([
      "mcp",
      "add",
      "fs",
      "--no-test",
      "--",
      "npx",
      "-y",
      "@modelcontextprotocol/server-filesystem",
      ".",
    ], root);
    await ok(["mcp", "add", "fetch", "--no-test", "--", "uvx", "mcp-server-fetch"], root);
    await ok(["mcp", "add", "web", "--no-test", "--url", "https://mcp.example.com/v1/mcp"], root);
    const r = await ok(["agent", "snapshot"], root);
    const line = /MCP secrets left out \(values emptied\): (.*)/.exec(r.stderr)?.[1] ?? "";
    for (
      const label of [
        "zap.url.path",
        "lone.url.user",
        "lone.url.tk",
        "rem.args[4]",
        "rem.args[6]",
        "rem.args[8]",
      ]
    ) assert.ok(line.includes(label), `${label} named: ${r.stderr}`);
    assert.ok(/\bfs\.args\[1\]/.test(line), `a package spec not named: ${line}`);
    const { all, config } = await packedText(root);
    for (const t of SNAP_TOKENS) assert.ok(!all.includes(t), `${t} is in the snapshot`);
    for (
      const kept of [
        "https://a.example.com #",
        "https://mcp.example.com #",
        "Authorization:",
        "X-Api-Key:",
        "- -y\n",
        "- .\n",
      ]
    ) assert.ok(config.includes(kept), `${kept} kept: ${config}`);
    // Package specs are secrets under the closed rule (lib/state/mcp_arg_secrets.ts).
    for (
      const gone of ["mcp-remote", "@modelcontextprotocol/server-filesystem", "mcp-server-fetch"]
    ) {
      assert.ok(!config.includes(gone), `${gone} packed: ${config}`);
    }
  });
});

Deno.test("the MCP argument rule keeps option names and existing paths only, and finds credentials", () => {
  for (
    const args of [
      ["-y", ".", "/"],
      ["--headless", "--log-level", "-m", "--no-auth", "https://mcp.example.com:8443"],
      ["--directory", Deno.cwd(), `--root=${Deno.cwd()}`, "./"],
    ]
  ) assert.deepEqual(argSecrets(args), [], args.join(" "));
  // Everything else is a secret (masked when 12 characters or more, or after a credential option).
  for (
    const arg of [
      "@modelcontextprotocol/server-filesystem",
      "mcp-server-fetch",
      "8931",
      "America/New_York",
      "/tmp,/srv",
      "/etc/no-such-k.pem",
      "/tmp/no-such-dir/..",
      "//tmp",
      "localhost:8080",
    ]
  ) assert.equal(argSecrets(["-x", arg]).length, 1, arg);
  const found = argSecrets([
    "--token",
    "hunter",
    "-p",
    "ShortOptPwTok3nZZ",
    "sk-proj-abcdefghij1234567890",
    "a8f3k2m9x7q1",
    '{"apiKey":"x"}',
    "postgresql://app:PgPw@db/x",
  ]).map((s) => s.value);
  assert.deepEqual(found, [
    "hunter",
    "ShortOptPwTok3nZZ",
    "sk-proj-abcdefghij1234567890",
    "a8f3k2m9x7q1",
    '{"apiKey":"x"}',
    "app",
    "PgPw",
    "/x",
  ]);
  assert.deepEqual(urlSecretParts("https://h.example/k/PathTokJ5t6n0/sse#Frag7Tok9x"), [
    { where: "url.path", value: "/k/PathTokJ5t6n0/sse", mask: true },
    { where: "url.hash", value: "Frag7Tok9x", mask: false },
  ]);
});

const RUN_TOKENS = ["HdrArgTokK3p9x2", "ShortOptTokM8r4", "PathTokJ5t6n0", "RecognizedArgQ7w1"];

Deno.test("run: an MCP server echoing its arguments shows none of their credentials", async () => {
  await cacheServers();
  const queue: ScriptedTurn[] = [
    turn.toolCall("mcp__echo__argv", {}),
    turn.text("Seen."),
  ];
  await withModelRoot({ handler: () => queue.shift(), maxRequests: 10 }, async (sb, server) => {
    const deno = denoServer(TEST_SERVER);
    const [hdr, pw, path, tok] = RUN_TOKENS;
    await ok([
      "mcp",
      "add",
      "echo",
      "--no-test",
      ...Object.entries(deno.env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
      "--",
      deno.command,
      ...deno.args,
      "--argv-tool",
      "--token",
      tok!,
      "--header",
      `Authorization: Bearer ${hdr}`,
      "-p",
      pw!,
      `https://mcp.example.com/k/${path}/sse`,
    ], sb.root);
    // `mcp list` shows the command line with its secrets elided, option names and paths as written.
    const list = await ok(["mcp", "list", "--workspace", sb.workspace], sb.root);
    assert.match(
      list.stdout,
      /echo {2}stdio {2}.*--argv-tool --token … --header Authorization: … -p … https:\/\/mcp\.example\.com\/…/,
    );
    assert.match(list.stdout, /connected in/);
    for (const t of RUN_TOKENS) {
      assert.ok(!list.stdout.includes(t), `${t} in mcp list: ${list.stdout}`);
    }
    const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"]);
    assert.equal(r.code, 0, r.stderr);
    const bodies = JSON.stringify(server.requests.map((q) => q.body));
    assert.ok(bodies.includes("usage error:"), `the argv tool ran: ${bodies.slice(-1500)}`);
    assert.ok(bodies.includes("--argv-tool"), "plain arguments are shown");
    assert.ok(bodies.includes("[redacted:mcp:echo.args["), bodies.slice(-1500));
    const agent = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID);
    const traces = await readAll(join(agent, "traces"));
    for (const t of RUN_TOKENS) {
      assert.ok(!bodies.includes(t), `${t} reached the model`);
      assert.ok(!traces.includes(t), `${t} is in the trace`);
      assert.ok(!(r.stdout + r.stderr).includes(t), `${t} is in the output`);
    }
  }, { visible: true });
});
