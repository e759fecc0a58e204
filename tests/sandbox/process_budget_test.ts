// The process budget (lib/sandbox/_process_budget.ts): the process limits of the commands one
// penguin runs at once add up to at most its budget. With a small budget forced, commands that
// hold (a `read` on stdin, released by the test) use it up; the next gets the floor, then one is
// refused with an error saying why; a command's share comes back when its status is reported,
// whether it ended, was killed or its signal aborted it. In a sandbox of its own and in the kept
// sandbox. Bounded: at most 5 sandboxes of `read`.
import assert from "node:assert/strict";
import { type SandboxedProcess, type SandboxPolicy } from "../../lib/sandbox/mod.ts";
import { spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { poolFacts } from "../../lib/sandbox/_pool.ts";
import {
  _pinBudget,
  budgetFacts,
  budgetOf,
  cgroupCapOf,
  MAX_BUDGET,
  MIN_SHARE,
} from "../../lib/sandbox/_process_budget.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { withPolicyWorkspace } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();

/** The policy's limit; the budget is twice it, so half of it is kept for commands at the floor. */
const WANTED = 200;
const TOTAL = 2 * WANTED;

interface Holding {
  child: SandboxedProcess;
  /** The process limit the command runs with (`ulimit -u` inside). */
  limit: number;
}

/** Start a command that prints its limit and waits for a line on stdin; resolves once it printed. */
async function hold(
  policy: SandboxPolicy,
  reuse: boolean,
  signal?: AbortSignal,
): Promise<Holding> {
  let out = "";
  const { promise: printed, resolve } = Promise.withResolvers<void>();
  const child = await spawnSandboxed({
    shell: "ulimit -u; read -r x; echo done",
    policy,
    reuse,
    ...(signal ? { signal } : {}),
    onOutput: (chunk) => {
      out += chunk;
      if (out.includes("\n")) resolve();
    },
  });
  await Promise.race([printed, child.status]);
  const limit = Number(out.split("\n")[0]);
  assert.ok(Number.isInteger(limit), `the command printed its limit: ${JSON.stringify(out)}`);
  return { child, limit };
}

async function refused(policy: SandboxPolicy, reuse: boolean): Promise<PenguinError> {
  try {
    const child = await spawnSandboxed({ shell: "true", policy, reuse, onOutput: () => {} });
    await child.kill();
  } catch (err) {
    assert.ok(err instanceof PenguinError, String(err));
    return err;
  }
  assert.fail("the command past the budget started");
}

for (const reuse of [false, true]) {
  const where = reuse ? "kept sandbox" : "own sandbox";
  Deno.test({
    name: `commands running at once share one process budget (${where})`,
    ignore: !bwrap,
    fn: () =>
      withPolicyWorkspace(async (base) => {
        const policy = { ...base, maxProcesses: WANTED, hideOtherDataRoots: false };
        const keeping = reuse ? keepStandIns() : undefined;
        const running: Holding[] = [];
        _pinBudget(TOTAL);
        try {
          // The first has its policy's limit: it leaves the half kept for commands at the floor.
          running.push(await hold(policy, reuse));
          assert.equal(running[0]!.limit, WANTED);
          if (reuse) {
            assert.deepEqual(poolFacts().pids, [running[0]!.child.pid], "the kept sandbox");
          }
          // The next get the floor, while it fits: 200 + 3 × 64 = 392 of 400.
          for (let i = 0; i < 3; i++) running.push(await hold(policy, reuse));
          assert.deepEqual(running.map((r) => r.limit), [WANTED, MIN_SHARE, MIN_SHARE, MIN_SHARE]);
          assert.deepEqual(budgetFacts(), { total: TOTAL, held: 392, commands: 4 });

          // 8 left: refused, saying what holds the budget and what to do.
          const err = await refused(policy, reuse);
          assert.match(err.message, /4 commands are running with 392 processes allowed in all/);
          assert.match(err.message, /may hold 400 at once/);
          assert.match(err.message, /wait for one to end or kill one/);
          assert.equal(budgetFacts().held, 392, "a refused command holds nothing");

          // One ends: its share comes back once its status is reported.
          const ended = running.pop()!;
          await ended.child.write("\n");
          assert.deepEqual(await ended.child.status, { code: 0, signal: null });
          assert.equal(budgetFacts().held, 392 - MIN_SHARE);
          running.push(await hold(policy, reuse));
          assert.equal(running[3]!.limit, MIN_SHARE);

          // One killed: the same.
          const killed = running.pop()!;
          await killed.child.kill(0);
          assert.equal(budgetFacts().held, 392 - MIN_SHARE);

          // One whose signal aborts it (a timeout): the same.
          const abort = new AbortController();
          running.push(await hold(policy, reuse, abort.signal));
          assert.equal(budgetFacts().held, 392);
          abort.abort();
          await running.pop()!.child.status;
          assert.equal(budgetFacts().held, 392 - MIN_SHARE);

          // The first ends: a new one has the policy's limit again.
          const first = running.shift()!;
          await first.child.write("\n");
          await first.child.status;
          assert.equal(budgetFacts().held, 2 * MIN_SHARE);
          running.push(await hold(policy, reuse));
          assert.equal(
            running.at(-1)!.limit,
            WANTED - 2 * MIN_SHARE,
            "what fits above the kept half",
          );
        } finally {
          for (const r of running) await r.child.kill(0);
          _pinBudget(undefined);
          await keeping?.end();
        }
        assert.deepEqual(budgetFacts().held, 0, "nothing is held once every command ended");
      }),
  });
}

Deno.test({
  name: "the budget is read from the machine: at most half its PIDs, and enough for a command",
  ignore: !bwrap,
  fn: () =>
    withPolicyWorkspace(async (policy) => {
      const child = await spawnSandboxed({ shell: "ulimit -u", policy, onOutput: () => {} });
      await child.status;
      const { total } = budgetFacts();
      const read = (p: string) => Number(Deno.readTextFileSync(p).trim());
      const ceiling = Math.min(
        read("/proc/sys/kernel/pid_max"),
        read("/proc/sys/kernel/threads-max"),
      );
      assert.ok(total !== undefined && total <= ceiling / 2, `${total} of ${ceiling}`);
      assert.ok(total >= MIN_SHARE, `${total}`);
    }),
});

Deno.test("the budget is never more than MAX_BUDGET, whatever ceiling /proc shows", () => {
  // Attack round 17 bounded L8: inside a PID namespace /proc showed the namespace's own ceiling
  // (4194304), and the budget was 96,369 against the host's 32768 PIDs.
  assert.equal(budgetOf({ ceiling: 4_194_304, threads: 500 }, 0), MAX_BUDGET);
  assert.equal(budgetOf({ ceiling: 192_000, threads: 0 }, 0), MAX_BUDGET);
  // Below it, half of what is free, as before.
  assert.equal(budgetOf({ ceiling: 32_768, threads: 1_000 }, 0), 15_884);
  assert.equal(budgetOf({ ceiling: 32_768, threads: 1_000 }, 600), 16_184);
  assert.equal(MAX_BUDGET, 16_384);
});

Deno.test("an administrator's pids.max above penguin caps one penguin process's commands (round 30 p03)", () => {
  // 400 allowed to the job, 390 in use, 380 of them this process's commands' shares: half of the
  // 390 its commands may have in all; the machine's budget is left alone.
  const machine = { ceiling: 32768, threads: 500, cgroup: { max: 400, current: 390 } };
  assert.equal(cgroupCapOf(machine, 380), 195);
  assert.equal(budgetOf(machine, 380), 16_324);
  // Others' processes in the job shrink it; no limit: no cap.
  assert.equal(cgroupCapOf({ ...machine, cgroup: { max: 1000, current: 600 } }, 0), 200);
  assert.equal(cgroupCapOf({ ceiling: 32768, threads: 500 }, 0), undefined);
  // A small container's limit: two commands' worth still, the kernel holding them to it.
  assert.equal(cgroupCapOf({ ...machine, cgroup: { max: 100, current: 20 } }, 0), 128);
});

Deno.test({
  name: "the facts name the tightest pids.max of the cgroups penguin runs in",
  ignore: Deno.uid() !== 0 || !(await Deno.stat("/sys/fs/cgroup/pids/cgroup.procs").then(
    () => true,
    () => false,
  )),
  fn: async () => {
    const own = (await Deno.readTextFile("/proc/self/cgroup")).split("\n")
      .find((l) => l.split(":")[1] === "pids")?.split(":").slice(2).join(":").replace(/\/$/, "") ??
      "";
    const admin = `/sys/fs/cgroup/pids${own}/penguin-test-facts-${crypto.randomUUID().slice(0, 8)}`;
    await Deno.mkdir(admin);
    try {
      await Deno.writeTextFile(`${admin}/pids.max`, "300");
      const url = new URL("../../lib/sandbox/_proc_facts.ts", import.meta.url).href;
      const o = await new Deno.Command("bash", {
        args: [
          "-c",
          'echo $$ > "$0/cgroup.procs" && exec "$1" eval "$2"',
          admin,
          Deno.execPath(),
          `import { hostFacts } from ${JSON.stringify(url)};` +
          "console.log(JSON.stringify((await hostFacts()).pidsCgroup));",
        ],
      }).output();
      assert.ok(o.success, new TextDecoder().decode(o.stderr));
      const got = JSON.parse(new TextDecoder().decode(o.stdout));
      assert.equal(got.max, 300);
      assert.ok(got.current > 0 && got.current < 300, JSON.stringify(got));
    } finally {
      await Deno.remove(admin);
    }
  },
});
