// A clean-up removing many directories while a command starts (other data roots, a red team's temp
// directories): each attempt may find another hidden path gone before bubblewrap gets to it, and
// penguin plans again until one holds, a bounded number of times, instead of failing the command;
// a hidden path already gone when the sandbox starts is left out at once.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, detectSandbox, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { collect, exists, visibleTempDir } from "./_helpers.ts";
import { _pinLaunch } from "../../lib/sandbox/spawn.ts";

const bwrap = Deno.build.os === "linux" && (await detectSandbox()).kind === "bwrap";

/** `fn` run with `onStart` called with the argv of each start of bubblewrap (through sh or the supervisor) is spawned. */
async function onBwrapStarts<T>(
  onStart: (argv: string) => void,
  fn: () => Promise<T>,
): Promise<T> {
  const Real = Deno.Command;
  class Hooked extends Real {
    constructor(cmd: string | URL, opts?: Deno.CommandOptions) {
      const argv = JSON.stringify([cmd, opts?.args ?? []]);
      if (argv.includes("bwrap")) onStart(argv);
      super(cmd, opts);
    }
  }
  (Deno as { Command: typeof Deno.Command }).Command = Hooked;
  try {
    return await fn();
  } finally {
    (Deno as { Command: typeof Deno.Command }).Command = Real;
  }
}

Deno.test({
  name: "four hidden directories removed one per start attempt: the command still runs",
  ignore: !bwrap,
  async fn() {
    const base = await visibleTempDir("penguin-replan-many-");
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    const gone = [1, 2, 3, 4].map((i) => join(base, `other-data-root-${i}`));
    for (const d of gone) await Deno.mkdir(d);
    // Each start spawns bubblewrap after its plan: one goes then.
    let removed = 0;
    const goOne = () => {
      if (removed < gone.length) Deno.removeSync(gone[removed++]!);
    };
    try {
      const policy = createPolicy({
        workspace: ws,
        home: "",
        hostEnv: { PATH: "/usr/bin:/bin" },
        hide: gone,
      });
      const r = await onBwrapStarts(
        goOne,
        async () =>
          await collect(await spawnSandboxed({ shell: "echo ran", policy, stdin: "null" })),
      );
      assert.equal(removed, gone.length, "every directory went away during a start");
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /^ran$/m);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test({
  name: "hidden directories gone by the time the sandbox starts are left out of the start",
  ignore: !bwrap,
  async fn() {
    const base = await visibleTempDir("penguin-replan-gone-");
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    // Another penguin's run directory and data root, removed with their parent when it ends.
    const other = join(base, "other");
    const gone = [join(other, "run"), join(other, "root")];
    for (const d of gone) await Deno.mkdir(d, { recursive: true });
    // Every start, not only the first: under a loaded parallel suite another test's directory in
    // the plan may vanish too, and penguin then rightly plans again.
    const starts: string[] = [];
    _pinLaunch({ afterPlan: () => Deno.remove(other, { recursive: true }) });
    try {
      const policy = createPolicy({
        workspace: ws,
        home: "",
        hostEnv: { PATH: "/usr/bin:/bin" },
        hide: gone,
      });
      const r = await onBwrapStarts(
        (argv) => starts.push(argv),
        async () =>
          await collect(await spawnSandboxed({ shell: "echo ran", policy, stdin: "null" })),
      );
      assert.equal(await exists(other), false, "the directories went away after the plan");
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /^ran$/m);
      assert.ok(starts.length >= 1, "bubblewrap started");
      starts.forEach((argv, i) =>
        assert.ok(
          !argv.includes(other),
          `start ${i + 1} of ${starts.length} names a gone directory`,
        )
      );
    } finally {
      _pinLaunch({});
      await Deno.remove(base, { recursive: true });
    }
  },
});
