// The pseudo-terminal cap of the sandbox's init (lib/sandbox/_proc_guard.ts, PTY_MAX): the kernel
// counts the ptys of every sandbox's devpts instance against one machine-wide pool, and one command
// took them all while other sessions' commands got none (attack round 27 c13). A command holding
// more than PTY_MAX is stopped with a line saying so, in a sandbox of its own and in the one kept
// for a session; one holding a few is not. Bounded: PTY_MAX + 16 ptys at most.
import assert from "node:assert/strict";
import { spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { PTY_MAX, ptyGuardMessage } from "../../lib/sandbox/_proc_guard.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { withPolicyWorkspace } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();

/**
 * Open `n` ptys and hold them until stdin closes (at most 300 s: without the cap the test fails
 * then instead of hanging); prints `held=<n>` once it has them all.
 */
function opener(n: number): string {
  return `python3 -c 'import os, select, sys
f = [os.openpty() for _ in range(${n})]
print("held=%d" % len(f), flush=True)
select.select([sys.stdin], [], [], 300)'`;
}

for (const reuse of [false, true]) {
  const where = reuse ? "kept sandbox" : "own sandbox";
  Deno.test({
    name: `a command holding more than ${PTY_MAX} pseudo-terminals is stopped (${where})`,
    ignore: !bwrap,
    fn: () =>
      withPolicyWorkspace(async (base) => {
        const keeping = reuse ? keepStandIns() : undefined;
        try {
          let out = "";
          const child = await spawnSandboxed({
            shell: opener(PTY_MAX + 16),
            policy: { ...base, hideOtherDataRoots: false },
            reuse,
            stdin: "piped",
            onOutput: (chunk) => void (out += chunk),
          });
          const status = await child.status;
          assert.ok(out.includes(ptyGuardMessage()), out);
          assert.ok(status.code === 137 || status.signal === "SIGKILL", JSON.stringify(status));
        } finally {
          await keeping?.end();
        }
      }),
  });
}

Deno.test({
  name: "a command holding a few pseudo-terminals runs on",
  ignore: !bwrap,
  fn: () =>
    withPolicyWorkspace(async (base) => {
      let out = "";
      const { promise: held, resolve } = Promise.withResolvers<void>();
      const child = await spawnSandboxed({
        shell: `${opener(8)}; echo ended`,
        policy: { ...base, hideOtherDataRoots: false },
        stdin: "piped",
        onOutput: (chunk) => {
          out += chunk;
          if (out.includes("held=8")) resolve();
        },
      });
      await Promise.race([held, child.status]);
      await child.closeStdin();
      const status = await child.status;
      assert.equal(status.code, 0, out);
      assert.match(out, /held=8[\s\S]*ended/);
      assert.ok(!out.includes(ptyGuardMessage()), out);
    }),
});
