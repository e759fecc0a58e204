// `penguin mcp add` writes its entries in block style (one key a line) into
// the agent's system_config.yaml, whose default says `mcpServers: []`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";

Deno.test("mcp add writes block-style YAML, also into the default one-line empty list", async () => {
  await withRoot(async (root) => {
    for (const [name, arg] of [["files", "one"], ["notes", "two"]]) {
      const r = await runCli(["--root", root, "mcp", "add", name!, "--", "echo", arg!]);
      assert.equal(r.code, 0, r.stderr);
    }
    const path = join(
      root,
      "default_project",
      "agents",
      "default_agent",
      "agent_state",
      "system_config.yaml",
    );
    const text = await Deno.readTextFile(path);
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
