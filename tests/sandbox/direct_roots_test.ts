// A session has five writable roots besides its workspace (scratchpad, two memory directories,
// shared environment, a granted one): the direct path's `sh` opens and checks them all, so its
// commands do not take the slower supervised path (issue 32); a plan with more roots still runs,
// supervised. Either way every root is writable and no descriptor of a root reaches the command.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, detectSandbox, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { collect, readUntil, visibleTempDir } from "./_helpers.ts";

const report = await detectSandbox();
const bwrap = report.kind === "bwrap" && report.usable;

for (const others of [5, 6]) {
  Deno.test({
    name: `a plan with ${others} other writable roots runs ${
      others === 5 ? "on the direct path" : "supervised"
    }, every root bound from its descriptor`,
    ignore: !bwrap,
    fn: async () => {
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
        const direct = (await Deno.readTextFile(`/proc/${child.pid}/comm`)).trim() === "bwrap";
        await child.write("x\n");
        const rest = await collect(child);
        assert.equal(rest.code, 0, out + rest.out);
        assert.equal(direct, others === 5, `launched ${direct ? "directly" : "supervised"}`);
        roots.forEach((r, i) => assert.equal(Deno.readTextFileSync(join(r, "out")), `${i}\n`));
        // 0, 1, 2 and the listing's own: no root's descriptor is left open in the sandbox.
        const fds = out.split("\n").filter((l) => /^\d+$/.test(l)).map(Number);
        assert.deepEqual(fds.filter((fd) => fd > 3), [], out);
      } finally {
        await Deno.remove(base, { recursive: true });
      }
    },
  });
}
