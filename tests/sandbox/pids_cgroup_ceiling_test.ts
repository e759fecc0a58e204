// The ceiling of penguin's pids cgroup (lib/sandbox/_pids_cgroup.ts) follows the running
// commands' shares: one command at a time never changes it (the floor is the default limit),
// two at once raise it before the second starts, and it comes back down once they ended. Bounded:
// two sandboxes of `read`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import {
  _cgroupWritten,
  ceilingFor,
  cgroupDir,
  FLOOR,
  SLACK,
} from "../../lib/sandbox/_pids_cgroup.ts";
import { _pinBudget } from "../../lib/sandbox/_process_budget.ts";
import type { SandboxedProcess, SandboxPolicy } from "../../lib/sandbox/mod.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { withPolicyWorkspace } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { cgroupsHere } from "./_cgroups.ts";

useTestRunDir();
_pinBudget(16384);

Deno.test("the cgroup ceiling: the commands' shares, at least the default limit, plus the slack", () => {
  assert.equal(ceilingFor(0, false), String(FLOOR + SLACK));
  assert.equal(ceilingFor(2048, false), String(2048 + SLACK));
  assert.equal(ceilingFor(4096, false), String(4096 + SLACK));
  assert.equal(ceilingFor(100, true), "max");
});

/** Start a command that waits for a line on stdin; resolves once it runs. */
async function holding(policy: SandboxPolicy): Promise<SandboxedProcess> {
  let out = "";
  const { promise, resolve } = Promise.withResolvers<void>();
  const child = await spawnSandboxed({
    shell: "echo up; read -r x",
    policy,
    onOutput: (chunk) => {
      out += chunk;
      if (out.includes("up\n")) resolve();
    },
  });
  await Promise.race([promise, child.status]);
  return child;
}

Deno.test({
  name: "the cgroup ceiling rises for two commands at once and comes back once they ended",
  ignore: !bwrap || !cgroupsHere(),
  fn: () =>
    withPolicyWorkspace(async (base) => {
      const policy = { ...base, maxProcesses: 2048, hideOtherDataRoots: false };
      const max = async () => (await Deno.readTextFile(join(cgroupDir()!, "pids.max"))).trim();
      const first = await holding(policy);
      assert.equal(await max(), String(2048 + SLACK), "one command: the floor");
      const second = await holding(policy);
      assert.equal(await max(), String(2 * 2048 + SLACK), "raised before the second started");
      for (const c of [first, second]) {
        await c.write("\n");
        await c.status;
      }
      await _cgroupWritten();
      assert.equal(await max(), String(FLOOR + SLACK), "back down once both ended");
    }),
});
