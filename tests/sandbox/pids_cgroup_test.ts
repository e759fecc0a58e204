// The kernel's ceiling on the processes of this penguin process's sandboxes (lib/sandbox/_pids_cgroup.ts):
// where the machine lets penguin make a pids cgroup (root, a pids hierarchy), every sandbox's
// launcher joins it before it starts anything. A fast fork bomb is then refused by the kernel at
// the ceiling, whether or not the init's count gets the CPU to act (attack round 18: the machine's
// PIDs ran out). Bounded: at most 40 processes (the pinned ceiling).
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { _pinCgroupCeiling, cgroupDir } from "../../lib/sandbox/_pids_cgroup.ts";
import { _pinBudget } from "../../lib/sandbox/_process_budget.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { withPolicyWorkspace } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { cgroupsHere } from "./_cgroups.ts";

useTestRunDir();
// This process's budget alone (other penguins of the machine do not change the shares here), and
// a ceiling far below the commands' own limit (2048, counted by the init): what stops a fork past
// it is the kernel.
_pinBudget(8192);
_pinCgroupCeiling(40);

const ignore = !bwrap || !cgroupsHere();

for (const reuse of [false, true]) {
  const where = reuse ? "kept sandbox" : "own sandbox";
  Deno.test({
    name: `a running command's processes are in penguin's pids cgroup (${where})`,
    ignore,
    fn: () =>
      withPolicyWorkspace(async (base) => {
        const policy = { ...base, maxProcesses: 2048, hideOtherDataRoots: false };
        const keeping = reuse ? keepStandIns() : undefined;
        try {
          let out = "";
          const { promise, resolve } = Promise.withResolvers<void>();
          const child = await spawnSandboxed({
            shell: "echo up; read -r x; echo done",
            policy,
            reuse,
            onOutput: (chunk) => {
              out += chunk;
              if (out.includes("up\n")) resolve();
            },
          });
          await Promise.race([promise, child.status]);
          const dir = cgroupDir();
          assert.ok(dir !== undefined, "the cgroup was made with the first share");
          assert.equal((await Deno.readTextFile(join(dir, "pids.max"))).trim(), "40");
          const members = (await Deno.readTextFile(join(dir, "cgroup.procs"))).trim()
            .split("\n").filter(Boolean);
          assert.ok(members.length >= 2, `the sandbox's processes joined: ${members}`);
          await child.write("go\n");
          await child.status;
          assert.match(out, /done/);
        } finally {
          await keeping?.end();
        }
      }),
  });
}

Deno.test({
  name: "a fork past the cgroup's ceiling is refused by the kernel, below the command's own limit",
  ignore,
  fn: () =>
    withPolicyWorkspace(async (base) => {
      let out = "";
      const child = await spawnSandboxed({
        // dash reports a failed fork at once (bash retries for seconds, then dies).
        shell:
          "sh -c 'i=0; while [ $i -lt 100 ]; do sleep 30 >/dev/null 2>&1 & i=$((i+1)); done' " +
          "2>&1; echo sh ended $?",
        policy: { ...base, maxProcesses: 2048, hideOtherDataRoots: false },
        onOutput: (chunk) => void (out += chunk),
      });
      const status = await child.status;
      assert.equal(status.code, 0, out);
      assert.match(out, /Cannot fork/);
      assert.match(out, /sh ended [1-9]/);
    }),
});
