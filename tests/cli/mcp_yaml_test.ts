// `penguin mcp add` writes its entries in block style (one key a line) into
// the agent's system_config.yaml, whose default says `mcpServers: []`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { mcpAddArgs, REPO, runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";
import { defaultAgentConfig } from "../support/mcp.ts";

Deno.test("mcp add writes block-style YAML, also into the default one-line empty list", async () => {
  await withRoot(async (root) => {
    for (const [name, arg] of [["files", "one"], ["notes", "two"]]) {
      const r = await runCli(mcpAddArgs(root, name!, "--no-test", "--", "echo", arg!));
      assert.equal(r.code, 0, r.stderr);
    }
    const text = await Deno.readTextFile(defaultAgentConfig(root));
    const at = text.indexOf("  mcpServers:");
    assert.ok(at >= 0, text);
    assert.equal(
      text.slice(at, text.indexOf("\n", text.indexOf("- two", at)) + 1),
      [
        "  mcpServers:",
        "    - name: files",
        "      config:",
        "        command: echo",
        "        args:",
        "          - one",
        "    - name: notes",
        "      config:",
        "        command: echo",
        "        args:",
        "          - two",
        "",
      ].join("\n"),
    );
    const list = await runCli(["--root", root, "mcp", "list", "--json"]);
    const servers = (JSON.parse(list.stdout) as { servers: Array<{ name: string }> }).servers;
    assert.deepEqual(servers.map((s) => s.name), ["files", "notes"], "the file reads back");
  });
});

Deno.test("mcp add --cwd workspace starts the server in the session's workspace; --cwd <dir> in that directory", async () => {
  await withRoot(async (root) => {
    const ws = await runCli(
      mcpAddArgs(root, "files", "--no-test", "--cwd", "workspace", "--", "srv"),
    );
    assert.equal(ws.code, 0, ws.stderr);
    const dir = await Deno.makeTempDir({ dir: root });
    const abs = await runCli(mcpAddArgs(root, "notes", "--no-test", "--cwd", dir, "--", "srv"));
    assert.equal(abs.code, 0, abs.stderr);
    const text = await Deno.readTextFile(defaultAgentConfig(root));
    assert.match(
      text,
      /^ {4}- name: files\n {6}config:\n {8}command: srv\n {8}sandbox:\n {10}cwd: workspace\n/m,
    );
    assert.ok(text.includes(`        cwd: ${dir}\n`), text);
    const url = await runCli(
      mcpAddArgs(root, "web", "--url", "http://127.0.0.1:1/mcp", "--cwd", "workspace"),
    );
    assert.equal(url.code, 2);
    assert.match(url.stderr, /--cwd applies to stdio servers only/);
  });
});

Deno.test("what docs/cli/mcp.md says its mcp add examples write is what they write", async () => {
  const doc = await Deno.readTextFile(join(REPO, "docs", "cli", "mcp.md"));
  const sh = /```sh\n([\s\S]*?)```/.exec(doc)![1]!;
  const yaml = /which writes:\n\n```yaml\n([\s\S]*?)```/.exec(doc)![1]!;
  // The stdio examples (the yaml block shows those); their words need no shell quoting.
  const adds = sh.split("\n").filter((l) => l.startsWith("penguin mcp add") && l.includes(" -- "));
  assert.equal(adds.length, 2, sh);
  await withRoot(async (root) => {
    for (const line of adds) {
      // What is written, not whether npx and node/opt/search-mcp are here: untested.
      const [, sub, add, ...rest] = line.split(/\s+/);
      const r = await runCli(["--root", root, sub!, add!, "--no-test", ...rest]);
      assert.equal(r.code, 0, `${line}: ${r.stderr}`);
    }
    const text = await Deno.readTextFile(defaultAgentConfig(root));
    // The servers' part of `tools:` (a new agent's file also lists the built-in tools there).
    const servers = (t: string) => {
      const at = t.indexOf("  mcpServers:\n");
      assert.ok(at >= 0, t);
      const rest = t.slice(at);
      const end = rest.slice(1).search(/^\S|^ {2}\S/m);
      return end < 0 ? rest : rest.slice(0, end + 1);
    };
    assert.equal(servers(text), servers(yaml.replace(/ # .*$/gm, "")));
  });
});
