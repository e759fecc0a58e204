// An MCP credential in a remote server's host name (issue 26 item 5, red team A16): a token used as
// a subdomain, `https://<token>.mcp.example.com/sse`. A real `mcp add` then `agent snapshot` leaves
// the label out of the archive (emptied, named on stderr) and `mcp list` shows it masked; ordinary
// host names stay plain.
import assert from "node:assert/strict";
import { urlSecrets, urlWithoutSecrets } from "../../lib/state/mcp_inline_secrets.ts";
import { runCliOk } from "../support/cli.ts";
import { mcpRemoteArgs, packedText } from "./_mcp_snapshot.ts";
import { withRoot } from "../support/roots.ts";

const TOK = "k9tq2lm7rv4wp8zn3bc5xd";

/** `penguin --root <root> <args>`, asserting that it exited 0. */
const ok = (args: string[], root: string) => runCliOk(["--root", root, ...args]);

Deno.test("agent snapshot and mcp list leave out a token in an MCP URL's host name", async () => {
  await withRoot(async (root) => {
    await ok(
      ["mcp", "add", "hst", "--no-test", "--url", `https://${TOK}.mcp.example.com/sse`],
      root,
    );
    const r = await ok(["agent", "snapshot"], root);
    assert.match(r.stderr, /MCP secrets left out \(values emptied\): .*hst\.url\.host\[0\]/);
    const { all } = await packedText(root);
    assert.ok(!all.includes(TOK), "the token is in the snapshot");
    assert.ok(all.includes("https://.mcp.example.com/sse"), all);
    const list = await ok(["mcp", "list"], root);
    assert.ok(!(list.stdout + list.stderr).includes(TOK), list.stdout);
    assert.ok(list.stdout.includes("[redacted:mcp:hst.url.host[0]].mcp.example.com"), list.stdout);
  });
});

Deno.test("ordinary MCP host names are plain", () => {
  for (
    const url of [
      "https://mcp.example.com/sse",
      "https://api-v2.eu-west-1.example.com/mcp",
      "http://127.0.0.1:8080/mcp",
      "http://[::1]:3000/mcp",
      "http://localhost:3000/mcp",
      "https://mcp.node18.example.co.uk/",
    ]
  ) {
    assert.deepEqual(urlSecrets(url), [], url);
    assert.equal(urlWithoutSecrets(url), url);
  }
  assert.deepEqual(urlSecrets(`https://a.${TOK}.example.com/`), [
    { where: "url.host[1]", value: TOK },
  ]);
});

/** Red team final5 N6, N7, N9 (new/n02_mcp_url_host_pieces.sh): host labels judged whole. */
const DASHED = "k9tq-2lm7-rv4w-p8zn-3bc5";
const LETTERS = "qzxkvbnmwrtplhjgfdsayc";
const REMOTE = "h7kq-3mz9-x2pw-8rtn";

Deno.test("agent snapshot and mcp list leave out host labels that are tokens judged whole (N6, N7, N9)", async () => {
  await withRoot(async (root) => {
    await ok(
      ["mcp", "add", "dsh", "--no-test", "--url", `https://${DASHED}.mcp.example.com/sse`],
      root,
    );
    await ok(
      ["mcp", "add", "ltr", "--no-test", "--url", `https://${LETTERS}.mcp.example.com/sse`],
      root,
    );
    await runCliOk(mcpRemoteArgs(root, "rem", `https://mcp.${REMOTE}.example.com/sse`));
    const r = await ok(["agent", "snapshot"], root);
    assert.match(r.stderr, /dsh\.url\.host\[0\]/);
    assert.match(r.stderr, /ltr\.url\.host\[0\]/);
    assert.match(r.stderr, /rem\.args\[2\]\.host\[1\]/);
    const { all } = await packedText(root);
    const list = await ok(["mcp", "list"], root);
    for (const tok of [DASHED, LETTERS, REMOTE]) {
      assert.ok(!all.includes(tok), `${tok} is in the snapshot`);
      assert.ok(!(list.stdout + list.stderr).includes(tok), `mcp list shows ${tok}`);
    }
    assert.ok(all.includes("https://mcp..example.com/sse"), all);
  });
});

Deno.test("host labels: tokens judged whole are secrets, real host names are plain", () => {
  const secret = [
    DASHED,
    LETTERS,
    REMOTE,
    "4821937465019283746",
    "q9-zk-2l-m7-rv-4w-p8",
    "k9tq2lm7-rv4wp8zn",
  ];
  for (const label of secret) {
    assert.deepEqual(urlSecrets(`https://${label}.example.com/`), [
      { where: "url.host[0]", value: label },
    ], label);
  }
  for (
    const host of [
      "api-eu-west-1.example.com",
      "my-company-prod.example.com",
      "mcp.linear.app",
      "copilot-proxy.example.com",
      "us-east-1-prod-cluster-01.example.com",
      "ec2-54-123-45-67.compute-1.amazonaws.com",
      "raw.githubusercontent.com",
      "nyc3.digitaloceanspaces.com",
    ]
  ) assert.deepEqual(urlSecrets(`https://${host}/mcp`), [], host);
});
