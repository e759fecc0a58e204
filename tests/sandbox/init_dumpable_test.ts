// The sandbox's init cannot be traced by the command it runs: in a sandbox of its own (the
// wrapper of lib/sandbox/_supervisor.ts, started directly or by the supervisor) and in the kept
// sandbox (the launcher of _launcher.ts), PID 1 runs from an unreadable copy of bash, so the
// kernel refuses the command `ptrace` and `/proc/1/mem`. A command that could trace it would stop
// the process-count guard (_proc_guard.ts) and fork past the limit. Bounded: the command starts
// 100 `sleep`s at most, against a limit of 40, and kills them itself if the guard does not.
import assert from "node:assert/strict";
import { type SandboxPolicy } from "../../lib/sandbox/mod.ts";
import { _pinLaunch, spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { poolFacts } from "../../lib/sandbox/_pool.ts";
import { guardMessage } from "../../lib/sandbox/_proc_guard.ts";
import { LAUNCHER_PATH } from "../../lib/sandbox/_launcher.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { withPolicyWorkspace } from "./_helpers.ts";
import { eventually, pidsWithArg, uniqueSleep } from "../tools/_process_probes.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { evalInRunDir } from "./_run_dir_eval.ts";

useTestRunDir();

const LIMIT = 40;
const FORKS = 100;
const python = await Deno.stat("/usr/bin/python3").then(() => true, () => false);

/**
 * The attack: open PID 1's memory for writing, seize PID 1 with ptrace and interrupt it (then wait
 * for its ptrace-stop: the guard no longer counts), start FORKS `sleep <s>`, report how many
 * threads the namespace holds, and kill the sleeps (leaving the tracer detaches PID 1).
 */
function attack(s: string): string {
  return `exec python3 -c 'import ctypes, glob, os
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
try:
    os.close(os.open("/proc/1/mem", os.O_RDWR))
    print("mem opened", flush=True)
except OSError as e:
    print("mem refused", e.errno, flush=True)
if libc.ptrace(0x4206, 1, None, None) == 0:
    libc.ptrace(0x4207, 1, None, None)
    os.waitpid(1, 0x40000000)
    print("init stopped", flush=True)
else:
    print("ptrace refused", ctypes.get_errno(), flush=True)
kids = []
for _ in range(${FORKS}):
    p = os.fork()
    if p == 0:
        os.execvp("sleep", ["sleep", "${s}"])
    kids.append(p)
print("running", len(glob.glob("/proc/[0-9]*/task/[0-9]*")), flush=True)
for k in kids:
    os.kill(k, 9)
for k in kids:
    os.waitpid(k, 0)
print("done", flush=True)'`;
}

async function run(policy: SandboxPolicy, shell: string, reuse: boolean) {
  let out = "";
  const child = await spawnSandboxed({
    shell,
    policy: { ...policy, maxProcesses: LIMIT },
    reuse,
    onOutput: (chunk) => void (out += chunk),
  });
  const status = await child.status;
  await child.outputClosed;
  return { out, status };
}

async function assertRefused(r: Awaited<ReturnType<typeof run>>, s: string) {
  assert.match(r.out, /^mem refused \d+$/m, r.out);
  assert.match(r.out, /^ptrace refused \d+$/m, r.out);
  assert.doesNotMatch(r.out, /init stopped|mem opened|^done$/m, r.out);
  // The init went on counting: the sleeps past the limit were stopped by the guard.
  assert.ok(r.out.includes(guardMessage(LIMIT)), r.out);
  assert.ok(r.status.code === 137 || r.status.signal === "SIGKILL", JSON.stringify(r.status));
  assert.ok(await eventually(() => pidsWithArg(s).length === 0), "nothing it started is left");
}

const paths: [string, { direct?: boolean }][] = [
  ["a sandbox of its own (direct)", {}],
  ["a sandbox of its own (supervised)", { direct: false }],
];
for (const [where, pin] of paths) {
  Deno.test({
    name: `a command cannot ptrace or write the memory of its sandbox's init: ${where}`,
    ignore: !bwrap || !python,
    fn: () =>
      withPolicyWorkspace(async (policy) => {
        _pinLaunch(pin);
        try {
          const s = uniqueSleep();
          await assertRefused(await run(policy, attack(s), false), s);
          // The wrapper still runs ordinary commands and keeps their status.
          const ok = await run(policy, "echo fine; exit 3", false);
          assert.deepEqual([ok.out, ok.status.code], ["fine\n", 3]);
        } finally {
          _pinLaunch({});
        }
      }),
  });
}

Deno.test({
  name: "a command cannot ptrace or write the memory of its sandbox's init: the kept sandbox",
  ignore: !bwrap || !python,
  fn: () =>
    withPolicyWorkspace(async (policy) => {
      const keeping = keepStandIns();
      try {
        await run(policy, "true", true);
        const s = uniqueSleep();
        const r = await run(policy, attack(s), true);
        assert.equal(poolFacts().live, 1, "run in the kept sandbox");
        await assertRefused(r, s);
      } finally {
        await keeping.end();
      }
    }),
});

// Where no unreadable copy of bash can be made (here: the bash named is no file), the wrapper runs
// from ordinary bash only where tracing it gains nothing: not root (the kernel holds the command
// to RLIMIT_NPROC), or no process limit. As root with a limit the command does not run.
Deno.test("without an unreadable bash the init falls back only where the kernel holds the limit", async () => {
  const run = await Deno.makeTempDir({ prefix: "penguin-init-run-" });
  try {
    const mod = new URL("../../lib/sandbox/_init_binary.ts", import.meta.url).href;
    const out = await evalInRunDir(
      `import { initProgram } from ${JSON.stringify(mod)};
      const o = { describe: "the command", hint: "(hint)" };
      const none = "/nonexistent/bash";
      const user = await initProgram(none, 40, { ...o, uid: 1000 });
      const unlimited = await initProgram(none, 0, { ...o, uid: 0 });
      const root = await initProgram(none, 40, { ...o, uid: 0 }).catch((e) => e.message);
      // Last: the copy, once made, is kept for the process.
      const good = await initProgram("/bin/bash", 40, { ...o, uid: 0 });
      const mode = (await Deno.stat(good.binds[1])).mode & 0o7777;
      console.log(JSON.stringify({ good: [good.bash, good.binds[0], good.binds[2], mode], user, unlimited, root }));`,
      run,
    );
    const r = JSON.parse(out);
    assert.deepEqual(r.good, [LAUNCHER_PATH, "--ro-bind", LAUNCHER_PATH, 0o111]);
    assert.deepEqual(r.user, { bash: "/nonexistent/bash", binds: [] });
    assert.deepEqual(r.unlimited, { bash: "/nonexistent/bash", binds: [] });
    assert.match(r.root, /^Cannot run the command: the sandbox's init would be traceable/);
    assert.match(r.root, /\(hint\)$/);
  } finally {
    await Deno.remove(run, { recursive: true });
  }
});
