// MCP server URLs under the closed rule (issue 26 item 5, red team final7 N26–N37): the userinfo,
// path, query and fragment of every MCP URL (and of a URL argument of a stdio server) are secrets
// whatever they look like. Each shape a randomness heuristic let through (a token cut across a host
// label and a path segment, a path segment and the query, a path segment and the fragment; a
// 24-letter segment with normal vowels; a 24-digit segment; a 20-digit query value) is added with
// a real `mcp add`: `agent snapshot` packs none of it (the URL cut to `scheme://host[:port]`, the
// server marked), `mcp list` shows `scheme://host/…`, and `agent import` names the `mcp add` line
// that completes each server. The host is kept: it is sent in clear (DNS, TLS SNI).
import assert from "node:assert/strict";
import { join } from "node:path";
import { mcpSecrets } from "../../lib/mcp/secrets.ts";
import { urlSecretParts, urlShown } from "../../lib/state/mcp_url_secrets.ts";
import { maskSecrets } from "../../lib/tools/secret_mask.ts";
import { runCliOk } from "../support/cli.ts";
import { mcpRemoteArgs, packedText } from "./_mcp_snapshot.ts";
import { withRoot } from "../support/roots.ts";

/** [server, URL, the secret pieces it holds]. */
const SHAPES: [string, string, string[]][] = [
  // N26: host label + path segment; the label is the host, kept.
  ["n26", "https://nolchkwnfzck.mcp.example.com/fdtgdjxwwcbz/sse", ["fdtgdjxwwcbz"]],
  // N28: path segment + query value.
  ["n28", "https://mcp.example.com/plkrtzvnmqcx?ref=hgfdszxcvbnm", [
    "plkrtzvnmqcx",
    "hgfdszxcvbnm",
  ]],
  // N32: path segment + fragment.
  ["n32", "https://mcp.example.com/trwqxzplkmnb#vcxzlkjhgtrw", ["trwqxzplkmnb", "vcxzlkjhgtrw"]],
  // N33: 24 random letters with normal vowels.
  ["n33", "https://mcp.example.com/xqoajrtlpevmkbiuwdnzcyha/sse", ["xqoajrtlpevmkbiuwdnzcyha"]],
  // N35: a 24-digit segment.
  ["n35", "https://mcp.example.com/mcp/827364519283746501928374/sse", ["827364519283746501928374"]],
  // N37: a 20-digit query value under a plain name.
  ["n37", "https://mcp.example.com:8443/sse?id=82736451928374650192", ["82736451928374650192"]],
];
const REMOTE = "https://mcp.example.com/Zqzkvbnmwrtplhjgfdsyc/sse";

Deno.test("agent snapshot packs no piece of an MCP URL's path, query or fragment; mcp list elides them; agent import names the mcp add line", async () => {
  await withRoot(async (root) => {
    for (const [name, url] of SHAPES) {
      await runCliOk(["--root", root, "mcp", "add", name, "--no-test", "--url", url]);
    }
    await runCliOk(mcpRemoteArgs(root, "rem", REMOTE));
    await runCliOk([
      "--root",
      root,
      "mcp",
      "add",
      "bare",
      "--no-test",
      "--url",
      "https://h.example",
    ]);
    const snap = await runCliOk(["--root", root, "agent", "snapshot"]);
    for (
      const w of ["n26.url.path", "n28.url.query", "n32.url.hash", "n37.url.id", "rem.args[2].path"]
    ) {
      assert.ok(snap.stderr.includes(w), `${w} not named: ${snap.stderr}`);
    }
    const { all, config } = await packedText(root);
    const pieces = [...SHAPES.flatMap(([, , p]) => p), "Zqzkvbnmwrtplhjgfdsyc", "/sse", "ref="];
    for (const p of pieces) assert.ok(!all.includes(p), `${p} is in the snapshot:\n${config}`);
    assert.match(config, /url: https:\/\/nolchkwnfzck\.mcp\.example\.com # penguin: /);
    assert.match(config, /url: https:\/\/mcp\.example\.com:8443 # penguin: /);
    assert.match(config, /- https:\/\/mcp\.example\.com # penguin: argument left out/);
    assert.match(config, /url: https:\/\/h\.example\n/);

    const list = await runCliOk(["--root", root, "mcp", "list"]);
    const shown = list.stdout + list.stderr;
    for (const p of pieces.slice(0, -2)) assert.ok(!shown.includes(p), `mcp list shows ${p}`);
    assert.match(shown, /n26 {2}http {2}https:\/\/nolchkwnfzck\.mcp\.example\.com\/…/);
    assert.match(shown, /n37 {2}http {2}https:\/\/mcp\.example\.com:8443\/…/);
    assert.match(shown, /rem {2}stdio {2}npx -y … https:\/\/mcp\.example\.com\/…/);
    assert.match(shown, /bare {2}http {2}https:\/\/h\.example\n/);

    await withRoot(async (other) => {
      const dir = join(root, "default_project", "agents", "default_agent", "snapshots");
      const [file] = (await Array.fromAsync(Deno.readDir(dir))).map((e) => join(dir, e.name));
      const imp = await runCliOk(["--root", other, "agent", "import", file!, "--yes"]);
      assert.match(imp.stdout, /MCP servers to set up/);
      assert.match(
        imp.stdout,
        / {2}penguin mcp add 'n26' --url 'https:\/\/nolchkwnfzck\.mcp\.example\.com\/…'/,
      );
      assert.match(
        imp.stdout,
        / {2}penguin mcp add 'n37' --url 'https:\/\/mcp\.example\.com:8443\/…'/,
      );
      assert.ok(!/ 'bare' /.test(imp.stdout), imp.stdout);
    });
  });
});

Deno.test("MCP URL parts are masked like vault values; paths under 12 characters are not masked", () => {
  const secrets = mcpSecrets(
    SHAPES.map(([name, url]) => ({
      name,
      transport: "http",
      url,
      headers: {},
    })) as unknown as Parameters<typeof mcpSecrets>[0],
  );
  for (const [name, , pieces] of SHAPES) {
    for (const p of pieces) {
      const text = maskSecrets(`got ${p} back`, secrets);
      assert.ok(!text.includes(p.slice(0, 8)), `${name}: ${text}`);
      assert.match(text, /\[redacted:mcp:n\d+\.url\./, text);
    }
  }
  const short = mcpSecrets(
    [{
      name: "s",
      transport: "http",
      url: "https://u:pw-Secret-77@mcp.example.com/v1/mcp",
      headers: {},
    }] as unknown as Parameters<typeof mcpSecrets>[0],
  );
  assert.equal(maskSecrets("GET /v1/mcp ok", short), "GET /v1/mcp ok");
  assert.equal(maskSecrets("pw-Secret-77", short), "[redacted:mcp:s.url.password]");
  assert.deepEqual(urlSecretParts("https://mcp.example.com/").map((s) => s.where), []);
  assert.equal(urlShown("https://u:p@mcp.example.com/"), "https://mcp.example.com/…");
  assert.equal(urlShown("https://mcp.example.com"), "https://mcp.example.com");
});
