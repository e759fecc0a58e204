// A workspace (or a parent of it) swapped for a link to another directory by a process that may
// rename it, such as a session whose workspace encloses this one: the sandbox binds only the
// directory the session started with, or refuses.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy } from "../../lib/sandbox/mod.ts";
import type { SandboxPolicy } from "../../lib/sandbox/mod.ts";
import { WS_OPEN } from "../../lib/sandbox/_supervisor.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { visibleTempDir } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { runOrRefusal as run, startSwapper, SWAP_REFUSED as REFUSED } from "./_swap_support.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";

// The stand-in registry of this test process is its own: no other penguin's sweep acts on A's
// records while the test looks at what A leaves.
useTestRunDir();

interface Layout {
  base: string;
  ws: string;
  /** Directory holding the names exchanged. */
  dir: string;
  /** The name swapped: the workspace itself or a parent. */
  name: string;
  /** Where the link leads: a directory outside every workspace. */
  victim: string;
  policy: SandboxPolicy;
}

/** `outer/ws` and a link `outer/swap -> ../victim`; with `ancestor`, `outer/mid/ws` and a link to `victimroot` (holding `ws/`). */
async function layout(ancestor: boolean): Promise<Layout> {
  const base = await visibleTempDir("penguin-swap-");
  const dir = join(base, "outer");
  const name = ancestor ? "mid" : "ws";
  const ws = ancestor ? join(dir, "mid", "ws") : join(dir, "ws");
  const victim = join(base, ancestor ? "victimroot" : "victim");
  await Deno.mkdir(ws, { recursive: true });
  await Deno.mkdir(ancestor ? join(victim, "ws") : victim, { recursive: true });
  await Deno.symlink(`../${ancestor ? "victimroot" : "victim"}`, join(dir, "swap"));
  const policy = createPolicy({
    workspace: ws,
    home: "",
    hostEnv: { PATH: Deno.env.get("PATH") ?? "", HOME: ws },
  });
  return { base, ws, dir, name, victim, policy };
}

/** Every path below `dir` (relative). */
async function tree(dir: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(join(dir, rel))) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    out.push(p);
    if (e.isDirectory) out.push(...await tree(dir, p));
  }
  return out.sort();
}

/** The victim's entries the layout made itself. */
const initial = (ancestor: boolean) => ancestor ? ["ws"] : [];

for (const ancestor of [false, true]) {
  const what = ancestor ? "a parent of the workspace" : "the workspace";
  Deno.test({
    name:
      `${what} replaced by a link to another directory: commands are refused, nothing lands there`,
    ignore: !bwrap,
    fn: async () => {
      const l = await layout(ancestor);
      try {
        const before = await run(l.policy, "echo x > before");
        assert.equal(before.code, 0, before.out);
        // The swap a renaming process makes, held: the name now leads to the victim.
        await Deno.rename(join(l.dir, l.name), join(l.dir, "moved"));
        await Deno.rename(join(l.dir, "swap"), join(l.dir, l.name));
        const r = await run(l.policy, "echo x > PWN; mkdir .git");
        assert.match(r.out, REFUSED);
        assert.equal(r.code, undefined, "refused before anything ran");
        assert.deepEqual(await tree(l.victim), initial(ancestor));
      } finally {
        await Deno.remove(l.base, { recursive: true });
      }
    },
  });

  Deno.test({
    name:
      `${what} swapped with a link in a loop by another process: A's writes stay in A's workspace`,
    ignore: !bwrap,
    fn: async () => {
      const l = await layout(ancestor);
      const stop = join(l.base, "stop");
      const swapper = startSwapper(l.dir, l.name, "swap", stop, 2000000);
      // A's session: its stand-ins are kept from its first command until it ends.
      const session = keepStandIns();
      try {
        await swapper.swapping();
        const outputs: { out: string; code?: number }[] = [];
        for (let i = 0; i < 30; i++) {
          outputs.push(await run(l.policy, `echo x > PWN-${i}; mkdir .git && echo MADE-GIT`));
        }
        assert.ok(await swapper.stop() > 0, `the swapper ran; first output: ${outputs[0]?.out}`);
        // A ends once the swapping has stopped: its stand-ins go, none is left in its workspace
        // (nor named as left).
        await session.end();
        const lines: string[] = [];
        await session.settle((line) => lines.push(line));
        assert.deepEqual(lines, []);
        const left = (await tree(l.ws)).filter((p) => !p.startsWith("PWN-"));
        assert.deepEqual(left, [], "nothing of penguin's left in A's workspace");
        // Nothing landed outside: none of A's writes, and none of penguin's own stand-ins (made
        // and removed only inside the directory the plan saw, see _standin_ops.ts).
        assert.deepEqual(await tree(l.victim), initial(ancestor), "nothing landed outside");
        for (const o of outputs) {
          if (o.code !== undefined) assert.doesNotMatch(o.out, /MADE-GIT/);
          // Each command ran in the workspace, or was refused with the reason.
          // (A plan whose stand-in's directory moved while it was made is planned again, and
          // refused when it keeps moving; bwrap may also find the bound directory moved; the walk
          // for nested repositories refuses a tree that keeps changing under it.)
          if (o.code === undefined) {
            assert.match(
              o.out,
              /session started|no longer lies in the directory|failed to set up|was removed while the sandbox was being set up|kept changing while penguin walked them|while penguin walks them for git repositories/,
            );
          }
        }
        const ran = outputs.filter((o) => o.code !== undefined).length;
        const pwn = (await tree(l.ws)).filter((p) => p.startsWith("PWN-")).length;
        // A parent swapped after the mount leaves the command's path leading to the read-only
        // host view: its write fails, and lands nowhere.
        assert.ok(pwn <= ran, "what was written went into the workspace");
      } finally {
        await swapper.close();
        await session.end();
        await Deno.remove(l.base, { recursive: true });
      }
    },
  });
}

Deno.test("the launcher opens the workspace and checks its inode before bwrap binds it", async () => {
  const dir = await visibleTempDir("penguin-swap-");
  try {
    const ino = (await Deno.stat(dir)).ino!;
    const check = async (want: number) =>
      await new Deno.Command("/bin/sh", {
        args: ["-c", `${WS_OPEN}\nwsopen "$1" "$2"`, "sh", dir, String(want)],
        stderr: "piped",
      }).output();
    assert.equal((await check(ino)).code, 0);
    const other = await check(ino + 1);
    assert.notEqual(other.code, 0);
    assert.match(new TextDecoder().decode(other.stderr), REFUSED);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
