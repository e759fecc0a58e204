// The kernel's ceiling on the processes of this penguin process's sandboxes (lib/sandbox/_pids_cgroup.ts):
// where the machine lets penguin make a pids cgroup (root, a pids hierarchy), every sandbox's
// launcher joins it before it starts anything, and its `pids.max` follows the shares of the
// commands running. A fast fork bomb is then refused by the kernel at the ceiling, whether or not
// the init's count gets the CPU to act (attack round 18: the machine's PIDs ran out). Bounded: at
// most 40 processes (the pinned ceiling) plus one sandbox of `read`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { type SandboxedProcess } from "../../lib/sandbox/mod.ts";
import { spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { _pinCgroupCeiling, cgroupFacts, SLACK } from "../../lib/sandbox/_pids_cgroup.ts";
import { _pinBudget } from "../../lib/sandbox/_process_budget.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { withPolicyWorkspace } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();
// This process's budget alone: other penguins of the machine do not change the shares here.
_pinBudget(8192);

const facts = Deno.build.os === "linux" && Deno.uid() === 0 ? cgroupFacts() : undefined;
const ignore = !bwrap || facts === undefined;

/** Start `shell`, resolving once its output holds `mark`. */
async function started(
  shell: string,
  policy: Parameters<typeof spawnSandboxed>[0]["policy"],
  reuse: boolean,
  mark: string,
): Promise<{ child: SandboxedProcess; out: () => string }> {
  let out = "";
  const { promise, resolve } = Promise.withResolvers<void>();
  const child = await spawnSandboxed({
    shell,
    policy,
    reuse,
    onOutput: (chunk) => {
      out += chunk;
      if (out.includes(mark)) resolve();
    },
  });
  await Promise.race([promise, child.status]);
  return { child, out: () => out };
}

for (const reuse of [false, true]) {
  const where = reuse ? "kept sandbox" : "own sandbox";
  Deno.test({
    name:
      `a running command's processes are in penguin's pids cgroup, whose ceiling follows its share (${where})`,
    ignore,
    fn: () =>
      withPolicyWorkspace(async (base) => {
        const policy = { ...base, maxProcesses: 300, hideOtherDataRoots: false };
        const keeping = reuse ? keepStandIns() : undefined;
        try {
          const { child, out } = await started(
            "echo pid $$; read -r x; echo done",
            policy,
            reuse,
            "\n",
          );
          const max = (await Deno.readTextFile(join(facts!.dir, "pids.max"))).trim();
          assert.equal(Number(max), 300 + SLACK, "the ceiling holds the command's share");
          const members = (await Deno.readTextFile(join(facts!.dir, "cgroup.procs"))).trim()
            .split("\n").filter(Boolean);
          assert.ok(members.length >= 2, `the sandbox's processes joined: ${members}`);
          await child.write("go\n");
          await child.status;
          assert.match(out(), /done/);
          assert.equal(
            (await Deno.readTextFile(join(facts!.dir, "pids.max"))).trim(),
            String(SLACK),
            "the share is given back",
          );
        } finally {
          await keeping?.end();
        }
      }),
  });
}

Deno.test({
  name: "a fork past the cgroup's ceiling is refused by the kernel, before any count",
  ignore,
  fn: () =>
    withPolicyWorkspace(async (base) => {
      // The command's own limit (2048, counted by the init) is far above the ceiling: what stops
      // the 100 background sleeps is the kernel.
      _pinCgroupCeiling(40);
      try {
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
      } finally {
        _pinCgroupCeiling(undefined);
      }
    }),
});
