// More git repositories below the workspace than a plan guards (MAX_GUARDED_REPOS): the plan stops
// its walk there and refuses, saying so, instead of guarding each (20,000 bare repositories one
// command made took penguin past 450 MB and minutes a command, then past the kernel's argument
// limit: attack round 21 bounded #4).
import assert from "node:assert/strict";
import { join } from "node:path";
import { findNestedRepos, MAX_GUARDED_REPOS } from "../../lib/sandbox/git_nested.ts";
import { detectSandbox } from "../../lib/sandbox/detect.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { makeRoot } from "../support/roots.ts";
import { toolOutputsById } from "../agent/_subagent_support.ts";

const SANDBOX = Deno.build.os === "linux" && (await detectSandbox()).kind === "bwrap";

/** `n` bare-repository lookalikes (`r/<i>/{HEAD,objects,refs}`) below `dir`. */
async function bareRepos(dir: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const b = join(dir, "r", String(i));
    await Deno.mkdir(join(b, "objects"), { recursive: true });
    await Deno.mkdir(join(b, "refs"));
    await Deno.writeTextFile(join(b, "HEAD"), "ref: refs/heads/main\n");
  }
}

Deno.test("the walk stops once it found more repositories than it may, and says so", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await bareRepos(dir, 12);
    const all = await findNestedRepos(dir);
    assert.equal(all.repos.length, 12);
    assert.equal(all.tooManyRepos, undefined);
    const capped = await findNestedRepos(dir, Infinity, [], 10);
    assert.deepEqual([capped.tooManyRepos, capped.complete, capped.repos], [true, false, []]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "a command in a workspace of more repositories than penguin guards is refused, naming why",
  ignore: !SANDBOX,
  async fn() {
    const server = await startModelServer({
      turns: [
        turn.of(item.toolCall("exec_command", { cmd: "echo ran" }, { id: "c0" })),
        turn.text("done"),
      ],
    });
    const sb = await makeRoot(server);
    try {
      await bareRepos(sb.workspace, MAX_GUARDED_REPOS + 1);
      const r = await runCli(inRoot(sb, "run", "-m", "Run it."));
      const out = toolOutputsById(server.requests).get("c0") ?? "";
      assert.doesNotMatch(out, /^ran$/m, "the command did not run");
      assert.match(
        out + r.stderr,
        new RegExp(`holds more than ${MAX_GUARDED_REPOS} git repositories`),
        out + r.stderr,
      );
    } finally {
      await server.close();
      await Deno.remove(sb.base, { recursive: true });
    }
  },
});
