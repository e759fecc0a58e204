// Issue 26 (review2 finding 2): a nested repository's missing conventional hook directories
// (.githooks, .husky, .hooks, .git-hooks) get no stand-ins and no pins, so a plain clone below
// the workspace can be moved and emptied; one a command fills is disarmed when it ends, even
// when the repository is otherwise the same one the plan found.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { hostRun } from "../support/host_git.ts";
import { collect, exists, visibleTempDir } from "./_helpers.ts";

async function withWs(fn: (base: string, ws: string) => Promise<void>): Promise<void> {
  const base = await visibleTempDir("penguin-nested-conv-");
  try {
    const ws = join(base, "ws");
    await Deno.mkdir(join(ws, "vendor", "clone"), { recursive: true });
    const o = await hostRun(base, join(ws, "vendor", "clone"), "git", ["init", "-q"]);
    assert.equal(o.code, 0, o.out);
    await Deno.writeTextFile(join(ws, "vendor", "clone", "a.txt"), "a\n");
    await fn(base, ws);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

async function sh(ws: string, shell: string): Promise<string> {
  const policy = createPolicy({
    workspace: ws,
    home: "",
    hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: ws },
  });
  return (await collect(await spawnSandboxed({ shell, policy, stdin: "null" }))).out;
}

Deno.test("a plain nested clone can be moved and emptied: no stand-ins or pins hold it", async () => {
  await withWs(async (_base, ws) => {
    const out = await sh(
      ws,
      "mv vendor/clone vendor/moved 2>&1 && echo moved; rm -rf vendor/moved 2>&1; echo end",
    );
    assert.match(out, /moved\n/);
    assert.match(out, /end/);
    assert.doesNotMatch(out, /busy/i);
    assert.equal(await exists(join(ws, "vendor", "clone")), false);
    // Only its git directory stays: read-only to commands, whatever the repository.
    const left = (await Array.fromAsync(Deno.readDir(join(ws, "vendor", "moved")))).map((e) =>
      e.name
    );
    assert.deepEqual(left, [".git"]);
  });
});

Deno.test("a known nested repository whose .husky a command fills is disarmed", async () => {
  await withWs(async (base, ws) => {
    const clone = join(ws, "vendor", "clone");
    const marker = join(base, "ran-husky");
    const out = await sh(
      ws,
      `mkdir vendor/clone/.husky && printf '#!/bin/sh\\ntouch ${marker}\\n' > ` +
        `vendor/clone/.husky/pre-commit && chmod +x vendor/clone/.husky/pre-commit && echo planted`,
    );
    assert.match(out, /planted/);
    assert.equal(await exists(join(clone, ".git")), false);
    assert.equal(await exists(join(clone, ".git-disarmed-by-penguin")), true);
    // The user's later shell runs hooks from .husky (a configuration penguin never saw).
    const ha = join(base, "ha");
    await Deno.mkdir(ha);
    await Deno.writeTextFile(join(ha, ".gitconfig"), "[core]\n\thooksPath = .husky\n");
    await hostRun(ha, clone, "git", ["commit", "-q", "--allow-empty", "-m", "x"]);
    assert.equal(await exists(marker), false, "the user's git ran the model's hook");
  });
});
