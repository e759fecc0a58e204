// A FIFO (or device) the model puts where penguin reads a small file of a git directory
// (`commondir`, `config`, a `.git` file) cannot stop penguin: such files are opened without
// blocking and checked as opened (attack round 21 concgit break 3: a FIFO `commondir` hung the walk
// after a command, so an armed repository beside it was never disarmed, and the session never ended).
import assert from "node:assert/strict";
import { join } from "node:path";
import { readRegularNow } from "../../lib/sandbox/_look.ts";
import { detectSandbox } from "../../lib/sandbox/detect.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { makeRoot } from "../support/roots.ts";

const SANDBOX = Deno.build.os === "linux" && (await detectSandbox()).kind === "bwrap";

async function mkfifo(path: string): Promise<void> {
  assert.ok((await new Deno.Command("mkfifo", { args: [path] }).output()).success);
}

Deno.test("readRegularNow reads a regular file and returns at once for anything else", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "f"), "gitdir: x\n");
    await mkfifo(join(dir, "fifo"));
    await Deno.symlink("f", join(dir, "link"));
    assert.equal(
      new TextDecoder().decode(readRegularNow(join(dir, "f"), 100) as Uint8Array),
      "gitdir: x\n",
    );
    assert.equal(readRegularNow(join(dir, "fifo"), 100), "other");
    assert.equal(readRegularNow(join(dir, "missing"), 100), "missing");
    assert.equal(readRegularNow(dir, 100), "directory");
    assert.equal(readRegularNow(join(dir, "f"), 4), "too-large");
    assert.equal(readRegularNow(join(dir, "link"), 100, false), "other");
    assert.ok(readRegularNow(join(dir, "link"), 100) instanceof Uint8Array);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

for (const fifo of ["commondir", "config"]) {
  Deno.test({
    name:
      `a FIFO named ${fifo} in a git directory leaves the walk to end and disarm a repository beside it`,
    ignore: !SANDBOX,
    async fn() {
      const cmd = `git init -q z/r && git -C z/r config core.fsmonitor "touch planted; false"; ` +
        `mkdir -p f/.git/objects f/.git/refs && echo 'ref: refs/heads/master' > f/.git/HEAD && ` +
        `mkfifo f/.git/${fifo}; echo made`;
      const server = await startModelServer({
        turns: [
          turn.of(item.toolCall("exec_command", { cmd, yield_time_ms: 20000 }, { id: "c0" })),
          turn.text("done"),
        ],
      });
      const sb = await makeRoot(server);
      try {
        // Before the fix this run never ended: the test then hangs, which the suite reports.
        const r = await runCli(inRoot(sb, "run", "-m", "Make them."));
        assert.equal(r.code, 0, r.stderr);
        const disarmed = await Deno.lstat(join(sb.workspace, "z/r/.git-disarmed-by-penguin"))
          .then(() => true, () => false);
        assert.equal(disarmed, true, "the armed repository beside the FIFO was disarmed");
      } finally {
        await server.close();
        await Deno.remove(sb.base, { recursive: true });
      }
    },
  });
}
