// The process-count guard (lib/sandbox/_proc_guard.ts): RLIMIT_NPROC does not hold for root, so a
// command that starts more processes than the policy's limit is stopped by the sandbox's init, in
// a sandbox per command and in the sandbox kept for a session, with a line saying so, and nothing
// it started is left. Bounded: 114 processes at most, against a limit of 64.
import assert from "node:assert/strict";
import { type SandboxedProcess, type SandboxPolicy } from "../../lib/sandbox/mod.ts";
import { spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { poolFacts } from "../../lib/sandbox/_pool.ts";
import { guardMessage } from "../../lib/sandbox/_proc_guard.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { withPolicyWorkspace } from "./_helpers.ts";
import { eventually, pidsWithArg, uniqueSleep } from "../tools/_process_probes.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { assertSameUnlessReplanned } from "./_same_sandbox.ts";

useTestRunDir();

const LIMIT = 64;
const root = Deno.uid() === 0;

/**
 * Fork LIMIT + 50 `sleep <s>` (perl: no retry loop when fork fails, as it does for a user the
 * kernel holds to the limit), then, only if every fork succeeded, hang in a short sleep.
 */
function bomb(s: string): string {
  return `perl -e 'my $n = 0; for (1..${LIMIT + 50}) { my $p = fork; last unless defined $p; ` +
    `if (!$p) { exec "sleep", "${s}"; exit 1 } $n++ } print "forked=$n\\n"; ` +
    `exec "sleep", "20" if $n == ${LIMIT + 50}'`;
}

async function run(policy: SandboxPolicy, shell: string, reuse: boolean) {
  let out = "";
  // With onOutput, as the command tool runs them: only then is the kept sandbox used.
  const child: SandboxedProcess = await spawnSandboxed({
    shell,
    policy,
    reuse,
    onOutput: (chunk) => void (out += chunk),
  });
  const status = await child.status;
  await child.outputClosed;
  return { out, status, pid: child.pid };
}

async function assertStopped(r: Awaited<ReturnType<typeof run>>, s: string) {
  const held = /forked=(\d+)/.exec(r.out);
  if (root || !held || Number(held[1]) === LIMIT + 50) {
    // Root (or a user the limit did not hold): the guard stopped it.
    assert.ok(r.out.includes(guardMessage(LIMIT)), r.out);
    assert.ok(r.status.code === 137 || r.status.signal === "SIGKILL", JSON.stringify(r.status));
  }
  assert.ok(
    await eventually(() => pidsWithArg(s).length === 0),
    "nothing the command started is left",
  );
}

/**
 * `policy` with the test's process limit (and without other processes' data roots, which come and
 * go in every plan and would give the kept sandbox's next command a new one).
 */
function limited(policy: SandboxPolicy): SandboxPolicy {
  return { ...policy, maxProcesses: LIMIT, hideOtherDataRoots: false };
}

Deno.test({
  name: "a command over the process limit is stopped in a sandbox of its own, also as root",
  ignore: !bwrap,
  fn: () =>
    withPolicyWorkspace(async (policy) => {
      const s = uniqueSleep();
      await assertStopped(await run(limited(policy), bomb(s), false), s);
      // An ordinary command keeps its status.
      const ok = await run(limited(policy), "echo fine; exit 3", false);
      assert.equal(ok.out, "fine\n");
      assert.deepEqual(ok.status, { code: 3, signal: null });
    }),
});

Deno.test({
  name: "a command over the process limit is stopped in the kept sandbox, which goes on",
  ignore: !bwrap,
  fn: () =>
    withPolicyWorkspace(async (base) => {
      const policy = limited(base);
      const keeping = keepStandIns();
      try {
        await run(policy, "true", true);
        const s = uniqueSleep();
        const r = await run(policy, bomb(s), true);
        assert.equal(poolFacts().live, 1, "run in the kept sandbox");
        await assertStopped(r, s);
        const next = await run(policy, "echo /proc/[0-9]*; exit 5", true);
        // The same sandbox, or a new one only for a new plan (a parallel test's run directory).
        assertSameUnlessReplanned(r.pid, next.pid);
        assert.match(
          next.out,
          /^\/proc\/1 \/proc\/\d+\n$/,
          "the launcher (counting), this command",
        );
        assert.deepEqual(next.status, { code: 5, signal: null });
      } finally {
        await keeping.end();
      }
    }),
});

// The guard runs in the sandbox's init, which the kernel shields from SIGSTOP and SIGKILL sent from
// inside its PID namespace. The command stops the init (ignored), every process whose parent is the
// init but itself (a guard beside it, if there were one), then everything else (`kill -STOP -1`
// spares only the init and the caller), and then starts more than the limit.
const STOP_ALL =
  `kill -STOP 1 2>/dev/null; for f in /proc/[0-9]*/stat; do read -r l < "$f" || continue; ` +
  `set -- \${l##*) }; p=\${l%% *}; [ "$2" = 1 ] && [ "$p" != $$ ] && kill -STOP "$p"; done; ` +
  `kill -STOP -1 2>/dev/null; echo stopped; `;

// The command renames itself (its name in /proc/<pid>/stat) with ") " and a newline, which a
// line-by-line reading of its stat would take for the end of its name, waits past the guard's
// periodic look at that file (every 32nd round, within 2 s), then starts more than the limit.
function renamed(s: string): string {
  return `exec perl -e 'open(my $f, ">", "/proc/self/comm") or die; syswrite($f, ") 9 Z\\nx"); ` +
    `close $f; select(undef, undef, undef, 2); my $n = 0; for (1..${
      LIMIT + 50
    }) { my $p = fork; last unless defined $p; ` +
    `if (!$p) { exec "sleep", "${s}"; exit 1 } $n++ } print "forked=$n\\n"; ` +
    `exec "sleep", "20" if $n == ${LIMIT + 50}'`;
}

// The command sends the init every signal bash may end on (the launcher forwards SIGHUP, SIGTERM,
// SIGUSR1 and SIGALRM to the command's group, so those only in a sandbox of its own), then starts
// more than the limit: an init that ended on one would take the command with it before the guard
// line.
function signalsInit(reuse: boolean): string {
  const own = reuse ? "" : " HUP TERM USR1 ALRM";
  return `for g in INT QUIT ILL TRAP ABRT BUS FPE USR2 SEGV PIPE XCPU XFSZ VTALRM SYS${own}; ` +
    `do kill -s $g 1 || exit 9; done; `;
}

// The command's main thread ends (`pthread_exit`) while another thread lives on: the command's
// process shows as a zombie in /proc/<pid>/stat, which the guard took for its end. The thread waits
// until the init has gone through 200 more rounds (its voluntary context switches, one at least per
// round: past the guard's look at that file every 32nd round; an init that stopped counting stops
// switching, and the thread then gives up waiting), then starts more than the limit.
function mainThreadEnds(s: string): string {
  const py = `
import ctypes, os, threading, time
def switches():
    for line in open("/proc/1/status"):
        if line.startswith("voluntary_ctxt_switches"):
            return int(line.split()[1])
def state():
    return open("/proc/%d/stat" % os.getpid()).read().rsplit(") ", 1)[1][0]
def work():
    while state() != "Z":
        time.sleep(0.01)
    first = last = switches()
    still = 0
    while last - first < 200 and still < 300:
        time.sleep(0.01)
        now = switches()
        still = still + 1 if now == last else 0
        last = now
    n = 0
    for _ in range(${LIMIT + 50}):
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "${s}"])
        n += 1
    print("forked=%d" % n, flush=True)
    time.sleep(20)
threading.Thread(target=work).start()
ctypes.CDLL(None).pthread_exit(None)
`;
  return `exec python3 -c '${py}'`;
}

const python = ["/usr/bin/python3", "/bin/python3"].some((p) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
});

for (const reuse of [false, true]) {
  const where = reuse ? "kept sandbox" : "own sandbox";
  const attacks: [string, (s: string) => string][] = [
    ["stops every other process", (s) => STOP_ALL + bomb(s)],
    ["renames itself with a newline", renamed],
    ["signals the init", (s) => signalsInit(reuse) + bomb(s)],
    ...(python
      ? [["ends its main thread", mainThreadEnds] as [string, (s: string) => string]]
      : []),
  ];
  for (const [what, shell] of attacks) {
    Deno.test({
      name: `a command that ${what} is still held to the process limit (${where})`,
      ignore: !bwrap,
      fn: () =>
        withPolicyWorkspace(async (base) => {
          const policy = limited(base);
          const keeping = reuse ? keepStandIns() : undefined;
          try {
            if (reuse) await run(policy, "true", true);
            const s = uniqueSleep();
            const r = await run(policy, shell(s), reuse);
            if (reuse) assert.equal(poolFacts().live, 1, "run in the kept sandbox");
            assert.ok(r.out.includes(guardMessage(LIMIT)), r.out);
            assert.ok(
              r.status.code === 137 || r.status.signal === "SIGKILL",
              JSON.stringify(r.status),
            );
            assert.deepEqual(pidsWithArg(s), [], "nothing it started outlives its status");
            if (reuse) {
              const next = await run(policy, "echo next", true);
              assert.deepEqual([next.out, next.status.code], ["next\n", 0]);
            }
          } finally {
            await keeping?.end();
          }
        }),
    });
  }
}

Deno.test({
  name: "threads count against the process limit: one process with too many threads is stopped",
  ignore: !bwrap || !(await Deno.stat("/usr/bin/python3").then(() => true, () => false)),
  fn: () =>
    withPolicyWorkspace(async (policy) => {
      // Every thread takes a host PID. Threads by clone(2) with CLONE_THREAD are not forks, so
      // a count of processes alone never sees them. python3 starts them plainly.
      const s = uniqueSleep();
      const threads = `exec -a ${s} python3 -c 'import threading, time
ts = [threading.Thread(target=time.sleep, args=(20,), daemon=True) for _ in range(${LIMIT + 50})]
[t.start() for t in ts]
print("threads", threading.active_count(), flush=True)
time.sleep(20)'`;
      const r = await run(limited(policy), threads, false);
      assert.ok(r.out.includes(guardMessage(LIMIT)), r.out);
      assert.ok(r.status.code === 137 || r.status.signal === "SIGKILL", JSON.stringify(r.status));
      assert.ok(await eventually(() => pidsWithArg(s).length === 0), "nothing is left");
    }),
});
