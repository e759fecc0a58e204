// Issue 26, item 2 (the final concurrency/git pass's #97): the workspace is
// no repository when the session starts, so penguin holds its `.git` name
// with a stand-in (an empty directory). Between two commands of the session
// the user runs `git init` on the host, which fills that stand-in, and sets
// `core.hooksPath .husky`. The next command's plan must read git's
// configuration again and see the repository: the model's `.husky/pre-commit`
// must not be what the user's next plain `git commit` runs.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { hostGit } from "../support/host_git.ts";
import { exists } from "./_helpers.ts";

Deno.test("penguin run: a repository the user makes mid-session guards its hooks path from the next command (#97)", async () => {
  const base = await visibleTempDir("penguin-init-later-");
  const env = { PENGUIN_RUN_DIR: join(base, "run") };
  const root = join(base, "root");
  const ws = join(base, "ws");
  const home = join(base, "home");
  const marker = join(base, "ran-evil");
  await Deno.mkdir(ws);
  await Deno.mkdir(home);
  await Deno.writeTextFile(join(ws, "a.txt"), "a\n");
  const cmd = (id: string, text: string) =>
    turn.of(item.toolCall("exec_command", { description: "x", cmd: text }, { id }));
  let init = "";
  const server = await startModelServer({
    handler: async (_rec, i) => {
      if (i === 0) return cmd("c1", "ls -A; echo first");
      if (i === 1) {
        // Between the two commands: the user's host git makes the workspace a repository.
        init += (await hostGit(home, ws, ["init", "-q"])).out;
        init += (await hostGit(home, ws, ["config", "core.hooksPath", ".husky"])).out;
        return cmd(
          "c2",
          `mkdir -p .husky; printf '#!/bin/sh\\ntouch ${marker}\\n' > .husky/pre-commit; ` +
            `chmod +x .husky/pre-commit; echo tried $?`,
        );
      }
      return turn.text("done");
    },
    maxRequests: 10,
  });
  try {
    await addServerModel(root, server, { api_key: "sk-init-later-0123456789abcdef" });
    const r = await runCli(
      ["--root", root, "run", "--workspace", ws, "--approve", "allow-all", "-m", "go"],
      { env: { ...env, HOME: home } },
    );
    assert.equal(r.code, 0, r.stderr + init);
    const bodies = server.requests.map((r) => JSON.stringify(r.body));
    assert.equal(bodies.length, 3);
    assert.match(bodies[1]!, /first/);
    const second = bodies[2]!.slice(bodies[2]!.lastIndexOf("c2")).slice(0, 600);
    assert.match(second, /tried/);
    assert.match(second, /\.husky.*Read-only file system/);
    assert.equal(await exists(join(ws, ".husky", "pre-commit")), false, "the model's hook");
    // The user's repository is theirs after the session: not taken for a stand-in and removed.
    assert.equal(await exists(join(ws, ".git", "config")), true, "the user's .git stayed");
    const commit = await hostGit(home, ws, ["commit", "-q", "--allow-empty", "-m", "x"]);
    assert.equal(commit.code, 0, commit.out);
    assert.equal(await exists(marker), false, "git ran the model's hook");
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});
