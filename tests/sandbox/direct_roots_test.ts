// A session has five writable roots besides its workspace (scratchpad, two memory directories,
// shared environment, a granted one): the direct path's `sh` opens and checks them all, so its
// commands do not take the slower supervised path (issue 32); a plan with more roots (or shown
// home paths, each opened too) still runs directly, opened by bash, which names fds past 9, and
// supervised when pinned so. Every root is writable and no descriptor of a root reaches the command.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, detectSandbox, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { _pinLaunch } from "../../lib/sandbox/spawn.ts";
import { collect, readUntil, visibleTempDir } from "./_helpers.ts";

const report = await detectSandbox();
const bwrap = report.kind === "bwrap" && report.usable;

for (
  const [others, direct] of [[5, true], [6, true], [40, true], [6, false]] as const
) {
  Deno.test({
    name: `a plan with ${others} other writable roots runs ${
      direct ? "on the direct path" : "supervised (pinned so)"
    }, every root bound from its descriptor`,
    ignore: !bwrap,
    fn: async () => {
      _pinLaunch(direct ? {} : { direct: false });
      const base = await visibleTempDir("penguin-direct-roots-");
      try {
        const ws = join(base, "ws");
        const roots = Array.from({ length: others }, (_, i) => join(base, `r${i}`));
        for (const d of [ws, ...roots]) await Deno.mkdir(d);
        const policy = createPolicy({
          workspace: ws,
          scratchpad: roots[0]!,
          revealWritable: roots.slice(1),
          home: "",
          hostEnv: { PATH: "/usr/bin:/bin" },
        });
        assert.equal(Object.keys(policy.rootIds ?? {}).length, others);
        const writes = roots.map((r, i) => `echo ${i} > ${r}/out`).join(" && ");
        const child = await spawnSandboxed({
          shell: `${writes} && ls /proc/self/fd && echo up && read -r line`,
          policy,
        });
        const out = await readUntil(child, "up");
        // On the direct path penguin's own child is bubblewrap; supervised, it is the supervisor.
        const ran = (await Deno.readTextFile(`/proc/${child.pid}/comm`)).trim() === "bwrap";
        await child.write("x\n");
        const rest = await collect(child);
        assert.equal(rest.code, 0, out + rest.out);
        assert.equal(ran, direct, `launched ${ran ? "directly" : "supervised"}`);
        roots.forEach((r, i) => assert.equal(Deno.readTextFileSync(join(r, "out")), `${i}\n`));
        // 0, 1, 2 and the listing's own: no root's descriptor is left open in the sandbox.
        const fds = out.split("\n").filter((l) => /^\d+$/.test(l)).map(Number);
        assert.deepEqual(fds.filter((fd) => fd > 3), [], out);
      } finally {
        _pinLaunch({});
        await Deno.remove(base, { recursive: true });
      }
    },
  });
}
