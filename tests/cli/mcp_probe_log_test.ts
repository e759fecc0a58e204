// The stderr log of a server `mcp add` / `mcp test` starts lies in the data root (the agent's
// mcp_logs, as a session's server logs do), which every other session's sandbox hides: it lay in the
// host's /tmp, where a session working in /tmp read the token the server printed (attack round 28
// e19).
import assert from "node:assert/strict";
import { join } from "node:path";
import { mcpAddArgs, runCli, runCliOk } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";

Deno.test("mcp test keeps a server's stderr log in the agent's mcp_logs, not in /tmp", async () => {
  await withTempDir("penguin-mcp-log-", async (base) => {
    const root = join(base, "data");
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    const env = {};
    await runCliOk(["--root", root, "skills", "list"], { env });
    await runCliOk(
      mcpAddArgs(
        root,
        "leaky",
        "--no-test",
        "--env",
        "T_TOKEN=leaky-token-5d2c9e1f7a3b",
        "--",
        "/bin/sh",
        "-c",
        // Where its stderr goes, as the server itself sees it, then the token, then a failure.
        `readlink /proc/self/fd/2 > "${join(ws, "logpath")}"; echo "token=$T_TOKEN" >&2; exit 3`,
      ),
      { env },
    );
    const r = await runCli(["--root", root, "mcp", "test", "leaky", "--workspace", ws], { env });
    assert.equal(r.code, 1, r.stderr);
    const log = (await Deno.readTextFile(join(ws, "logpath"))).trim();
    const logs = join(await Deno.realPath(root), "default_project/agents/default_agent/mcp_logs");
    assert.match(log, new RegExp(`^${logs}/probe-[^/]+/leaky/stderr\\.log$`));
    // Removed with the probe.
    assert.deepEqual(await Array.fromAsync(Deno.readDir(logs)), []);
  });
});
