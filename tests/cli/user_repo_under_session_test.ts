// The user's own repository in ws/sub is left alone when the user starts a session there while a
// session on ws runs (attack round 29 i10, round 28 e31): the inner session's stand-ins for the
// repository's missing hook directories (`.husky`, `.hooks`, …) changed its identity, so the
// repository no longer matched the enclosing session's record of it, and its `.githooks/pre-commit`
// naming a missing `./lint.sh` made it count as armed: penguin renamed the user's `.git` aside,
// without a word, and no model had done anything.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { heldRun } from "../support/run_session.ts";
import { hostGit } from "../support/host_git.ts";

Deno.test("a session on the user's repository inside another session's workspace keeps its .git", async () => {
  const base = await visibleTempDir("penguin-user-repo-under-");
  const ws = join(base, "ws");
  const sub = join(ws, "sub");
  const home = join(base, "home");
  await Deno.mkdir(sub, { recursive: true });
  await Deno.mkdir(home);
  // The user's repository, made before any session, with a hook that names a missing script.
  assert.equal((await hostGit(home, sub, ["init", "-q"])).code, 0);
  assert.equal((await hostGit(home, sub, ["commit", "-q", "--allow-empty", "-m", "init"])).code, 0);
  await Deno.mkdir(join(sub, ".githooks"));
  await Deno.writeTextFile(join(sub, ".githooks", "pre-commit"), "#!/bin/sh\n./lint.sh\n");
  const a = await heldRun(join(base, "data-a"), ws);
  const server = await startModelServer({
    handler: (_rec, i) =>
      i === 0
        ? turn.of(item.toolCall("exec_command", { cmd: "echo B ran" }, { id: "b1" }))
        : turn.text("done"),
    maxRequests: 4,
  });
  try {
    const rootB = join(base, "data-b");
    await addServerModel(rootB, server);
    const b = await runCli(["--root", rootB, "run", "--workspace", sub, "-m", "go"]);
    assert.equal(b.code, 0, b.stderr);
    assert.doesNotMatch(b.stderr, /disarmed-by-penguin|renamed/);
    assert.equal((await Deno.lstat(join(sub, ".git"))).isDirectory, true);
    const log = await hostGit(home, sub, ["log", "--oneline"]);
    assert.match(log.out, /init/);
    const outA = await a.end();
    assert.equal(outA.code, 0, new TextDecoder().decode(outA.stderr));
    assert.equal((await Deno.lstat(join(sub, ".git"))).isDirectory, true);
  } finally {
    await a.close();
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});
