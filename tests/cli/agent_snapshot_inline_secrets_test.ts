// MCP credentials outside env and header values (issue 26 item 5, red team Z24): a remote server's
// URL with `user:password@` and `?api_key=`, a stdio server's `--token <v>` and `--api-key=<v>`.
// A real `agent snapshot` leaves every one of them out of the archive (emptied, named on stderr),
// keeps the rest of the server (host, path, plain arguments), and the masking rule covers them.
import assert from "node:assert/strict";
import { mcpSecrets } from "../../lib/mcp/secrets.ts";
import { maskSecrets } from "../../lib/tools/secret_mask.ts";
import { argsWithoutSecrets } from "../../lib/state/mcp_arg_secrets.ts";
import { urlOrigin } from "../../lib/state/mcp_url_secrets.ts";
import { runCliOk } from "../support/cli.ts";
import { packedText } from "./_mcp_snapshot.ts";
import { withRoot } from "../support/roots.ts";

const TOKENS = [
  "UrlUserTok3nZZ",
  "UrlQueryTok3nZZ",
  "ArgTok3nValueZZ",
  "ArgEqTok3nZZ",
  "EnvTok3nZZ",
] as const;
const [URL_USER, URL_QUERY, ARG, ARG_EQ, ENV] = TOKENS;

/** `penguin --root <root> <args>`, asserting that it exited 0. */
const ok = (args: string[], root: string) => runCliOk(["--root", root, ...args]);

Deno.test("agent snapshot leaves MCP URL userinfo, credential query values and token arguments out", async () => {
  await withRoot(async (root) => {
    await ok([
      "mcp",
      "add",
      "remote",
      "--no-test",
      "--url",
      `https://me:${URL_USER}@mcp.example.com/mcp?api_key=${URL_QUERY}&region=eu`,
    ], root);
    await ok([
      "mcp",
      "add",
      "loc",
      "--no-test",
      "--env",
      `API_KEY=${ENV}`,
      "--",
      "/usr/bin/python3",
      "/srv/x.py",
      "--token",
      ARG,
      `--api-key=${ARG_EQ}`,
      "--key-file",
      "/etc/k.pem",
      "--verbose",
    ], root);
    const r = await ok(["agent", "snapshot"], root);
    assert.match(r.stderr, /MCP secrets left out \(values emptied\): .*remote\.url\.password/);
    assert.match(r.stderr, /loc\.args\[3\]/);
    const { all, config: yaml } = await packedText(root);
    for (const t of TOKENS) assert.ok(!all.includes(t), `${t} is in the snapshot`);
    assert.ok(yaml.includes("url: https://mcp.example.com #"), yaml);
    for (
      // Option names are kept; /srv/x.py and /etc/k.pem do not exist, so they are left out too.
      const kept of ["--token", "--api-key=", "--key-file", "--verbose"]
    ) {
      assert.ok(yaml.includes(kept), `${kept} kept: ${yaml}`);
    }
  });
});

Deno.test("URL and argument credentials of MCP servers are masked like env values", () => {
  const secrets = mcpSecrets(
    [
      {
        name: "remote",
        transport: "http",
        url: `https://me:${URL_USER}@h.example/mcp?token=${URL_QUERY}`,
        headers: {},
      },
      {
        name: "loc",
        transport: "stdio",
        command: "srv",
        args: ["--token", ARG, `--api-key=${ARG_EQ}`, "--no-auth", "/srv/x"],
        env: {},
      },
    ] as unknown as Parameters<typeof mcpSecrets>[0],
  );
  const text = maskSecrets(`out ${TOKENS.slice(0, 4).join(" ")} /srv/x`, secrets);
  for (const t of TOKENS.slice(0, 4)) assert.ok(!text.includes(t), text);
  assert.ok(text.includes("[redacted:mcp:remote.url.password]"), text);
  assert.ok(text.includes("[redacted:mcp:loc.args[1]]"), text);
  assert.ok(text.endsWith(" /srv/x"), text);
  assert.equal(urlOrigin("https://h.example:8443/mcp?x=1"), "https://h.example:8443");
  assert.deepEqual(argsWithoutSecrets(["--no-auth", "/srv/x", "TOKEN=abc", "-v", "/"]), [
    "--no-auth",
    "",
    "",
    "-v",
    "/",
  ]);
});
