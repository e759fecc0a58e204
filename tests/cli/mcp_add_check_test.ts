// `penguin mcp add` starts the server it adds, as a session would, before
// saving it: it reports the tools found, or why the server failed and what
// fixes it (and then saves nothing); `--no-test` saves without starting it.
import assert from "node:assert/strict";
import { join } from "node:path";
import { mcpAddArgs, runCli, testHome } from "../support/cli.ts";
import { cacheServers, denoServer, TEST_SERVER } from "../support/mcp.ts";
import { visibleTempDir, withRoot } from "../support/roots.ts";

function configText(root: string): Promise<string> {
  return Deno.readTextFile(
    join(root, "default_project", "agents", "default_agent", "agent_state", "system_config.yaml"),
  ).catch(() => "");
}

/** `--env K=V` flags and the command of the Deno-run test server. */
function testServerArgs(extra: string[] = []): { env: string[]; argv: string[] } {
  const cfg = denoServer(TEST_SERVER, extra);
  return {
    env: Object.entries(cfg.env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
    argv: [cfg.command, ...cfg.args],
  };
}

/** An executable shell script at `path`. */
async function script(path: string, body: string): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
}

Deno.test("mcp add starts a working server, lists its tools and saves it", async () => {
  await cacheServers();
  await withRoot(async (root) => {
    const ws = await visibleTempDir();
    try {
      const { env, argv } = testServerArgs();
      const r = await runCli(
        mcpAddArgs(
          root,
          "t",
          "--workspace",
          ws,
          ...env,
          "--connect-timeout-ms",
          "120000",
          "--",
          ...argv,
        ),
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /^Added MCP server t for agent default_agent: connected in \d+\.\ds, 10 tool\(s\): echo, .*write/,
      );
      assert.match(await configText(root), /- name: t\n/);
    } finally {
      await Deno.remove(ws, { recursive: true });
    }
  });
});

Deno.test("mcp add of a program that is not installed says so, names the runtime and saves nothing", async () => {
  await withRoot(async (root) => {
    const r = await runCli(["--root", root, "mcp", "add", "py", "--", "uvx", "mcp-server-time"], {
      env: { PATH: "/nonexistent-penguin-path" },
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /MCP server py failed to start: /);
    assert.match(r.stderr, /fix: uvx is not installed \(not found on PATH\): install uv /);
    assert.match(r.stderr, /Nothing was saved\. .*--no-test/);
    assert.doesNotMatch(await configText(root), /name: py/);
  });
});

Deno.test("mcp add of an npx server with the network off says to install it first or turn the network on", async () => {
  await withRoot(async (root) => {
    const bin = await visibleTempDir();
    try {
      // An npx that fails as npx does when it cannot reach the registry.
      await script(join(bin, "npx"), 'echo "npm error code EAI_AGAIN" >&2; exit 1');
      const args = ["-y", "@modelcontextprotocol/server-filesystem", "."];
      const r = await runCli(mcpAddArgs(root, "files", "--", join(bin, "npx"), ...args));
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        /fix: npx downloads the server's package when it is not installed, and this server's network is off: install the package first and run its own command, or add --network on/,
      );
      assert.match(r.stderr, /Its stderr ended with:\nnpm error code EAI_AGAIN/);
      assert.doesNotMatch(await configText(root), /name: files/);

      const untested = await runCli(
        mcpAddArgs(root, "files", "--no-test", "--", join(bin, "npx"), ...args),
      );
      assert.equal(untested.code, 0, untested.stderr);
      assert.match(
        untested.stdout,
        /^Added MCP server files .*Check it with: penguin mcp test files/,
      );
      assert.match(await configText(root), /- name: files\n/);
    } finally {
      await Deno.remove(bin, { recursive: true });
    }
  });
});

Deno.test("mcp add of a server installed in the hidden home names the path and --readable, which fixes it", async () => {
  await cacheServers();
  await withRoot(async (root) => {
    const dir = join(testHome(), `tools-${crypto.randomUUID()}`);
    const ws = await visibleTempDir();
    try {
      const { env, argv } = testServerArgs();
      const launcher = join(dir, "srv");
      await script(launcher, `exec ${argv.map((a) => `'${a}'`).join(" ")}`);
      const add = (extra: string[]) =>
        runCli(
          mcpAddArgs(
            root,
            "home",
            "--workspace",
            ws,
            ...env,
            "--connect-timeout-ms",
            "120000",
            ...extra,
            "--",
            launcher,
          ),
        );
      const hidden = await add([]);
      assert.equal(hidden.code, 1, hidden.stderr);
      assert.ok(
        hidden.stderr.includes(
          `fix: ${launcher} is in your home directory, which the sandbox hides: ` +
            `reveal it to this server read-only with --readable ${dir}`,
        ),
        hidden.stderr,
      );
      assert.doesNotMatch(await configText(root), /name: home/);

      const shown = await add(["--readable", dir]);
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, /connected in .*10 tool\(s\)/);
      const text = await configText(root);
      assert.ok(text.includes(`readable:\n            - ${dir}\n`), text);
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await Deno.remove(ws, { recursive: true });
    }
  });
});
