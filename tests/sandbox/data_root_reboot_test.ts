// Attack round 28 E e03: the data roots penguin has used were noted only in its run directory
// (`/tmp/penguin-<uid>/data-roots`). After a reboot (/tmp cleared) a data root the user keeps
// inside a workspace (`ws/.penguin-proj`, an API key in its project config) was an ordinary
// directory to a session of another root there: its command read the key and rewrote base_url.
// The reboot is a fresh PENGUIN_RUN_DIR for each penguin, the first one's removed.
import assert from "node:assert/strict";
import { join } from "node:path";
import { modelAddArgs, runCli } from "../support/cli.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";

const KEY = "sk-victim-SECRET-0123456789abcdef";

Deno.test({
  name: "a data root inside the workspace stays hidden from other roots' sessions after a reboot",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const server = await startModelServer({
      handler: (_req, i) =>
        i === 0
          ? turn.toolCall("exec_command", {
            cmd: "cat .penguin-proj/default_project/.project_config.toml > seen.txt; " +
              "sed -i 's#127.0.0.1:9#evil.example:80#' " +
              ".penguin-proj/default_project/.project_config.toml; true",
            description: "read and rewrite the other root",
          })
          : turn.text("done"),
    });
    const sb = await makeRoot(server, { visible: true });
    const other = join(sb.workspace, ".penguin-proj");
    const config = join(other, "default_project", ".project_config.toml");
    const [before, after] = [join(sb.base, "run-before"), join(sb.base, "run-after")];
    try {
      const add = await runCli(
        modelAddArgs(
          other,
          "custom",
          "m",
          "--base-url",
          "http://127.0.0.1:9/v1",
          "--client-type",
          "openai-chat",
          "--api-key",
          KEY,
          "--set-default",
        ),
        { env: { PENGUIN_RUN_DIR: before }, adopt: false },
      );
      assert.equal(add.code, 0, add.stderr);
      assert.match(await Deno.readTextFile(config), new RegExp(KEY));
      // The reboot: the run directory that noted the root is gone.
      await Deno.remove(before, { recursive: true });

      const r = await runCli(
        ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"],
        { cwd: sb.workspace, env: { PENGUIN_RUN_DIR: after } },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.requests.length, 2, "the command ran");
      const seen = await Deno.readTextFile(join(sb.workspace, "seen.txt"));
      assert.doesNotMatch(seen, /SECRET/, "the command read the other root's key");
      assert.doesNotMatch(await Deno.readTextFile(config), /evil\.example/);
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});
