// MCP URL credentials cut into pieces each too short to judge (issue 26 item 5, red team final6
// X7–X10): a 24-letter few-vowel path segment, a host token as two 12-letter labels, a token cut
// by `/` into 6-character segments, X7's URL as an `mcp-remote` argument. Judged joined, they are
// emptied by `agent snapshot` and masked by `mcp list`; real MCP URLs stay plain.
import assert from "node:assert/strict";
import { join } from "node:path";
import { readTar } from "../../lib/state/_tar.ts";
import { argSecrets, urlSecrets, urlWithoutSecrets } from "../../lib/state/mcp_inline_secrets.ts";
import { runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";

const PATH_SEG = "bcdfkxqwrtplmnvzhjgsyack";
const L1 = "nolchkwnfzck";
const L2 = "fdtgdjxwwcbz";
const CUT = ["wr7vwb", "ngwgyp", "yniwt2"];

/** Attack URLs and the secrets each must give. */
const ATTACKS: [string, string, string[]][] = [
  ["X7", `https://mcp.example.com/${PATH_SEG}/sse`, [PATH_SEG]],
  ["X8", `https://${L1}.${L2}.mcp.example.com/sse`, [L1, L2]],
  ["X8 under co.uk", `https://${L1}.${L2}.example.co.uk/sse`, [L1, L2]],
  ["X9", `https://mcp-api.example.com:8443/${CUT.join("/")}`, CUT],
  ["few-vowel query value", `https://mcp.example.com/sse?t=${PATH_SEG}`, [PATH_SEG]],
];

const REAL = [
  "https://conda.anaconda.org/conda-forge/linux-64",
  "https://pypi.org/simple",
  "https://mcp.linear.app/sse",
  "https://api.githubcopilot.com/mcp/",
  "https://eu-west-1.console.aws.amazon.com/console/home?region=eu-west-1",
  "https://my-company-prod.example.com/mcp/v1/stream",
  "https://ec2-54-123-45-67.compute-1.amazonaws.com/mcp",
  "https://api.example.com/api/v1/projects/default/items",
  "https://raw.githubusercontent.com/modelcontextprotocol/servers/main/package.json",
];

Deno.test("MCP URLs: tokens cut into pieces are secrets judged joined (X7–X9)", () => {
  for (const [row, url, want] of ATTACKS) {
    const got = urlSecrets(url).map((s) => s.value);
    assert.deepEqual(got, want, `${row}: ${url}`);
    const kept = urlWithoutSecrets(url);
    for (const w of want) assert.ok(!kept.includes(w), `${row}: ${kept}`);
  }
  assert.deepEqual(
    urlWithoutSecrets(`https://${L1}.${L2}.mcp.example.com/sse`),
    "https://..mcp.example.com/sse",
  );
  const rem = argSecrets(["-y", "mcp-remote", `https://mcp.example.com/${PATH_SEG}/sse`]);
  assert.deepEqual(rem.map((s) => [s.where, s.value]), [["args[2].path[1]", PATH_SEG]]);
});

Deno.test("MCP URLs: real URLs are plain", () => {
  for (const url of REAL) {
    assert.deepEqual(urlSecrets(url), [], url);
    assert.equal(urlWithoutSecrets(url), url);
  }
});

async function ok(args: string[], root: string): Promise<{ stdout: string; stderr: string }> {
  const r = await runCli(["--root", root, ...args]);
  assert.equal(r.code, 0, `penguin ${args.join(" ")} failed (${r.code}): ${r.stderr}`);
  return r;
}

Deno.test("agent snapshot and mcp list leave out MCP URL tokens cut into pieces (X7–X10)", async () => {
  await withRoot(async (root) => {
    const pth = `https://mcp.example.com/${PATH_SEG}/sse`;
    await ok(["mcp", "add", "pth", "--no-test", "--url", pth], root);
    await ok(["mcp", "add", "two", "--no-test", "--url", ATTACKS[1]![1]], root);
    await ok(["mcp", "add", "seg", "--no-test", "--url", ATTACKS[3]![1]], root);
    await ok(["mcp", "add", "rem", "--no-test", "--", "npx", "-y", "mcp-remote", pth], root);
    await ok(["mcp", "add", "lin", "--no-test", "--url", "https://mcp.linear.app/sse"], root);
    const r = await ok(["agent", "snapshot"], root);
    for (
      const w of ["pth.url.path[1]", "two.url.host[0]", "seg.url.path[1]", "rem.args[2].path[1]"]
    ) {
      assert.ok(r.stderr.includes(w), `${w} not named: ${r.stderr}`);
    }
    const dir = join(root, "default_project", "agents", "default_agent", "snapshots");
    const [snap] = (await Array.fromAsync(Deno.readDir(dir))).map((e) => join(dir, e.name));
    const stream = (await Deno.open(snap!)).readable.pipeThrough(new DecompressionStream("gzip"));
    const entries = readTar(new Uint8Array(await new Response(stream).arrayBuffer()));
    const all = entries.map((e) => new TextDecoder().decode(e.data)).join("\n");
    const list = await ok(["mcp", "list"], root);
    for (const tok of [PATH_SEG, L1, L2, ...CUT]) {
      assert.ok(!all.includes(tok), `${tok} is in the snapshot`);
      assert.ok(!(list.stdout + list.stderr).includes(tok), `mcp list shows ${tok}`);
    }
    assert.ok(all.includes("https://mcp.linear.app/sse"), "a real URL is packed");
    assert.ok(list.stdout.includes("https://mcp.linear.app/sse"), list.stdout);
  });
});
