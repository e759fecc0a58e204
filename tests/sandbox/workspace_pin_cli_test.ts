// A session's workspace is the directory the user named, taken once at start (issue 26, red team
// C32): a parent of it swapped for a link to another directory by a session whose workspace
// encloses it, before or while `penguin run` starts, never becomes the workspace.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { readUntil } from "../support/child_lines.ts";
import { startSwapper } from "./_swap_support.ts";
import { dirNames as names } from "../support/dir_names.ts";

interface Layout {
  base: string;
  root: string;
  /** `outer`: the enclosing session's workspace. */
  outer: string;
  /** `outer/mid/ws`: the workspace the user names. */
  ws: string;
  /** `victimroot/ws`: where `outer/mid/ws` leads while `mid` is swapped. */
  victim: string;
  server: Awaited<ReturnType<typeof startModelServer>>;
}

/** Two requests a run: one command, then done. */
async function layout(cmd: string): Promise<Layout> {
  const base = await visibleTempDir("penguin-pin-");
  const outer = join(base, "outer");
  const ws = join(outer, "mid", "ws");
  const victim = join(base, "victimroot", "ws");
  await Deno.mkdir(ws, { recursive: true });
  await Deno.mkdir(victim, { recursive: true });
  await Deno.writeTextFile(join(victim, "keep.txt"), "the user's\n");
  await Deno.symlink("../victimroot", join(outer, "swap"));
  const server = await startModelServer({
    handler: (_req, i) =>
      i % 2 === 0
        ? turn.of(item.toolCall("exec_command", { cmd, description: "x" }, { id: `c${i}` }))
        : turn.text("done"),
  });
  const root = join(base, "data");
  await addServerModel(root, server);
  return { base, root, outer, ws, victim, server };
}

const run = (l: Layout) => runCli(["--root", l.root, "run", "--workspace", l.ws, "-m", "go"]);

Deno.test({
  name: "a parent of the named workspace swapped for a link before start: the run is refused",
  ignore: !bwrap,
  fn: async () => {
    const l = await layout("echo x > PWN");
    try {
      // The swap a renaming session makes, held: outer/mid now leads to victimroot.
      await Deno.rename(join(l.outer, "mid"), join(l.outer, "moved"));
      await Deno.rename(join(l.outer, "swap"), join(l.outer, "mid"));
      const r = await run(l);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /Cannot use the workspace ".*outer\/mid\/ws"/);
      assert.match(r.stderr, /symbolic link ".*outer\/mid"/);
      assert.match(r.stderr, /victimroot\/ws/, "the message names where the path leads now");
      assert.equal(l.server.requests.length, 0, "no request, no command");
      assert.deepEqual(await names(l.victim), ["keep.txt"]);
      // Back in place, the same workspace is accepted and the command runs there.
      await Deno.rename(join(l.outer, "mid"), join(l.outer, "swap"));
      await Deno.rename(join(l.outer, "moved"), join(l.outer, "mid"));
      const ok = await run(l);
      assert.equal(ok.code, 0, ok.stderr);
      assert.deepEqual(await names(l.ws), ["PWN"]);
      assert.deepEqual(await names(l.victim), ["keep.txt"]);
    } finally {
      await l.server.close();
      await Deno.remove(l.base, { recursive: true });
    }
  },
});

Deno.test({
  name: "a parent of the named workspace swapped in a loop while runs start: none works outside",
  ignore: !bwrap,
  fn: async () => {
    const l = await layout("echo x > PWN-$$");
    const stop = join(l.base, "stop");
    const swapper = startSwapper(l.outer, "mid", "swap", stop, 100000000);
    const lines = swapper.lines;
    try {
      // Started once the swapper is swapping.
      const head = await readUntil(lines, "swapping");
      assert.match(head, /swapping/);
      let ran = 0;
      for (let i = 0; i < 6; i++) {
        const r = await run(l);
        if (r.code === 0) ran++;
        // Or its last walk could not settle while the swapper ran: it says so and exits non-zero.
        else {
          assert.match(
            r.stderr,
            /Cannot use the workspace|Cannot sandbox|session started|kept changing during penguin's last walk/,
          );
        }
      }
      assert.ok(await swapper.stop() > 0, "the swapper swapped");
      assert.deepEqual(await names(l.victim), ["keep.txt"], "nothing landed outside");
      const pwn = (await names(l.ws)).filter((n) => n.startsWith("PWN-"));
      assert.ok(pwn.length <= ran, "what was written went into the named workspace");
    } finally {
      await swapper.close();
      await l.server.close();
      await Deno.remove(l.base, { recursive: true });
    }
  },
});
