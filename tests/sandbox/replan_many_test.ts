// A clean-up removing many directories while a command starts (other data roots, a red team's temp
// directories): each attempt may find another hidden path gone before bubblewrap gets to it, and
// penguin plans again until one holds, a bounded number of times, instead of failing the command.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, detectSandbox, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { collect, visibleTempDir } from "./_helpers.ts";

const bwrap = Deno.build.os === "linux" && (await detectSandbox()).kind === "bwrap";

Deno.test({
  name: "four hidden directories removed one per start attempt: the command still runs",
  ignore: !bwrap,
  async fn() {
    const base = await visibleTempDir("penguin-replan-many-");
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    const gone = [1, 2, 3, 4].map((i) => join(base, `other-data-root-${i}`));
    for (const d of gone) await Deno.mkdir(d);
    // Each start spawns bubblewrap (through sh or the supervisor) after its plan: one goes then.
    const Real = Deno.Command;
    let removed = 0;
    class Removing extends Real {
      constructor(cmd: string | URL, opts?: Deno.CommandOptions) {
        if (removed < gone.length && JSON.stringify([cmd, opts?.args ?? []]).includes("bwrap")) {
          Deno.removeSync(gone[removed++]!);
        }
        super(cmd, opts);
      }
    }
    (Deno as { Command: typeof Deno.Command }).Command = Removing;
    try {
      const policy = createPolicy({
        workspace: ws,
        home: "",
        hostEnv: { PATH: "/usr/bin:/bin" },
        hide: gone,
      });
      const r = await collect(await spawnSandboxed({ shell: "echo ran", policy, stdin: "null" }));
      assert.equal(removed, gone.length, "every directory went away during a start");
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /^ran$/m);
    } finally {
      (Deno as { Command: typeof Deno.Command }).Command = Real;
      await Deno.remove(base, { recursive: true });
    }
  },
});
