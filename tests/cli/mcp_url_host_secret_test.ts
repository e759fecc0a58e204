// An MCP credential in a remote server's host name (issue 26 item 5, red team A16): a token used as
// a subdomain, `https://<token>.mcp.example.com/sse`. A real `mcp add` then `agent snapshot` leaves
// the label out of the archive (emptied, named on stderr) and `mcp list` shows it masked; ordinary
// host names stay plain.
import assert from "node:assert/strict";
import { join } from "node:path";
import { readTar } from "../../lib/state/_tar.ts";
import { urlSecrets, urlWithoutSecrets } from "../../lib/state/mcp_inline_secrets.ts";
import { runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";

const TOK = "k9tq2lm7rv4wp8zn3bc5xd";

async function ok(args: string[], root: string): Promise<{ stdout: string; stderr: string }> {
  const r = await runCli(["--root", root, ...args]);
  assert.equal(r.code, 0, `penguin ${args.join(" ")} failed (${r.code}): ${r.stderr}`);
  return r;
}

Deno.test("agent snapshot and mcp list leave out a token in an MCP URL's host name", async () => {
  await withRoot(async (root) => {
    await ok(
      ["mcp", "add", "hst", "--no-test", "--url", `https://${TOK}.mcp.example.com/sse`],
      root,
    );
    const r = await ok(["agent", "snapshot"], root);
    assert.match(r.stderr, /MCP secrets left out \(values emptied\): .*hst\.url\.host\[0\]/);
    const dir = join(root, "default_project", "agents", "default_agent", "snapshots");
    const [snap] = (await Array.fromAsync(Deno.readDir(dir))).map((e) => join(dir, e.name));
    const stream = (await Deno.open(snap!)).readable.pipeThrough(new DecompressionStream("gzip"));
    const entries = readTar(new Uint8Array(await new Response(stream).arrayBuffer()));
    const all = entries.map((e) => new TextDecoder().decode(e.data)).join("\n");
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
