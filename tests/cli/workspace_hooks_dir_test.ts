// A workspace that is itself a directory the user's git configuration runs from (the global
// `core.hooksPath`) cannot be bound read-only at its top: the plan went on with it writable, and
// the model's `pre-commit` ran at the user's next host `git commit` (attack round 25 concgit
// c29). Such a workspace is refused when the session starts, naming the setting.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { runCli } from "../support/cli.ts";

Deno.test("a workspace that is the global core.hooksPath directory is refused, naming the setting", async () => {
  const server = await startModelServer({
    turns: [
      turn.toolCall("exec_command", {
        cmd: "printf '#!/bin/sh\\ntouch PWNED\\n' > pre-commit && chmod +x pre-commit; echo ran",
      }),
      turn.text("done"),
    ],
  });
  const sb = await makeRoot(server, { visible: true });
  try {
    const home = join(sb.base, "home");
    const hooks = join(home, ".githooks");
    await Deno.mkdir(hooks, { recursive: true });
    await Deno.writeTextFile(
      join(home, ".gitconfig"),
      `[user]\n\tname = U\n\temail = u@example.com\n[core]\n\thooksPath = ${hooks}\n`,
    );
    const r = await runCli(
      ["--root", sb.root, "run", "--workspace", hooks, "-m", "go"],
      { env: { HOME: home } },
    );
    const out = r.stdout + r.stderr + JSON.stringify(server.requests.map((q) => q.body));
    assert.match(out, /is what git runs \(core\.hooksPath/, out.slice(-3000));
    assert.notEqual(r.code, 0, "the workspace is refused");
    assert.equal(server.requests.length, 0, "refused before any request");
    await assert.rejects(Deno.stat(join(hooks, "pre-commit")), Deno.errors.NotFound);
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
