// A workspace that is, or lies inside, a home directory penguin hides as credentials (`~/.ssh`,
// `~/.aws`, `~/.config`…) is refused: hidden entries are hidden below a workspace, never the
// workspace itself, so `--workspace ~/.config` showed the gh and rclone tokens it holds and
// `--workspace ~/.ssh` its keys (attack round 25 concgit c06b, c06c, c28). A workspace inside
// `~/.config` (`~/.config/nvim`) stays allowed: the other entries are hidden beside it.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { runCli } from "../support/cli.ts";

Deno.test("penguin run refuses a workspace that is or lies in a home credentials directory", async () => {
  const server = await startModelServer({
    handler: () => turn.toolCall("exec_command", { cmd: "cat gh/hosts.yml id_rsa 2>&1; echo end" }),
    maxRequests: 40,
  });
  const sb = await makeRoot(server, { visible: true });
  try {
    const home = join(sb.base, "home");
    await Deno.mkdir(join(home, ".config", "gh"), { recursive: true });
    await Deno.mkdir(join(home, ".config", "nvim"), { recursive: true });
    await Deno.mkdir(join(home, ".ssh", "config.d"), { recursive: true });
    await Deno.writeTextFile(join(home, ".config", "gh", "hosts.yml"), "oauth_token: gho_MARKER\n");
    await Deno.writeTextFile(join(home, ".ssh", "id_rsa"), "PRIVATE-KEY-MARKER\n");
    for (const ws of [".config", ".ssh", ".ssh/config.d"]) {
      const before = server.requests.length;
      const r = await runCli(
        ["--root", sb.root, "run", "--workspace", join(home, ws), "-m", "go", "--max-turns", "1"],
        { env: { HOME: home } },
      );
      assert.notEqual(r.code, 0, `${ws}: ${r.stdout}`);
      assert.match(r.stderr, /which penguin hides from the model's commands as credentials/, ws);
      assert.equal(server.requests.length, before, `${ws}: a request was sent`);
      assert.equal((r.stdout + r.stderr).includes("MARKER"), false);
    }
    const inside = await runCli(
      [
        "--root",
        sb.root,
        "run",
        "--workspace",
        join(home, ".config", "nvim"),
        "-m",
        "go",
        "--max-turns",
        "1",
      ],
      { env: { HOME: home } },
    );
    assert.doesNotMatch(inside.stderr, /as credentials/, inside.stderr);
    assert.ok(server.requests.length > 0, "a workspace inside ~/.config runs");
    assert.equal(JSON.stringify(server.requests.at(-1)?.body ?? "").includes("MARKER"), false);
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
