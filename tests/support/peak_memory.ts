/**
 * Peak memory of real processes, for tests that bound it: the high-water
 * mark of a live process (`VmHWM` in /proc/<pid>/status), the processes
 * descending from one whose command line names a test's own directory, and
 * the peak of a command that has ended (its `ru_maxrss`, reported by a
 * parent that waited for it). Linux only.
 *
 * @module
 */
import { join } from "node:path";
import { adoptTestRoot, penguinArgv, penguinEnv, REPO, runText } from "./cli.ts";
import { hostHas } from "./host_tools.ts";

/** A process's peak resident set in bytes (VmHWM), or undefined when it is gone. */
export function peakRss(pid: number): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function cmdline(pid: number): string[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0");
  } catch {
    return [];
  }
}

function parent(pid: number): number | undefined {
  try {
    const m = /^PPid:\s+(\d+)$/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

function ancestors(pid: number): number[] {
  const out: number[] = [];
  for (let p = parent(pid); p !== undefined && p > 1 && out.length < 32; p = parent(p)) out.push(p);
  return out;
}

/**
 * Live processes whose command line has the argument `arg` and that descend
 * from a process whose command line mentions `ancestorMark` (e.g. the
 * test's own data root), so processes of other tests are not counted. Of a
 * chain of such processes (a launcher passing the argument on, as bwrap
 * does) only the last is kept: the one that does the work. A fork that
 * still has its parent's command line (a subshell of the sandbox's init,
 * such as its process-count guard) is not a worker and is left out.
 */
export function descendantsWithArg(arg: string, ancestorMark: string): number[] {
  const found = new Map<number, number[]>();
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const pid = Number(e.name);
    if (!cmdline(pid).includes(arg)) continue;
    const up = ancestors(pid);
    const own = cmdline(pid).join("\0");
    if (up[0] !== undefined && cmdline(up[0]).join("\0") === own) continue;
    if (up.some((p) => cmdline(p).some((a) => a.includes(ancestorMark)))) found.set(pid, up);
  }
  const launchers = new Set([...found.values()].flat());
  return [...found.keys()].filter((pid) => !launchers.has(pid));
}

/** What {@linkcode runCliPeak} saw. */
export interface PeakRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Peak resident set of the penguin process, in bytes. */
  peakBytes: number;
}

/** Whether {@linkcode runCliPeak} can run here (it needs python3's `os.wait4`). */
export const CAN_MEASURE_PEAK: boolean = Deno.build.os === "linux" && hostHas("/usr/bin/python3");

// Runs argv[2:] in a session of its own (no controlling terminal), waits for it with wait4 and writes its ru_maxrss (KiB on Linux) to argv[1].
const WAITER = [
  "import os, sys",
  "pid = os.fork()",
  "if pid == 0:",
  "    os.setsid()",
  "    os.execv(sys.argv[2], sys.argv[2:])",
  "_, status, usage = os.wait4(pid, 0)",
  "open(sys.argv[1], 'w').write(str(usage.ru_maxrss))",
  "sys.exit(os.waitstatus_to_exitcode(status))",
].join("\n");

/**
 * Run `penguin <args>` (as `runCli` does, with no terminal) and measure its
 * peak resident set: a python3 parent waits for it with `wait4` and writes
 * `ru_maxrss` to a file in `dir`, so nothing is mixed into penguin's output.
 */
export async function runCliPeak(
  args: string[],
  dir: string,
  killAfterSeconds?: number,
): Promise<PeakRun> {
  const report = join(dir, `peak-${crypto.randomUUID()}`);
  await adoptTestRoot(args, penguinEnv()); // a root the test filled is the user's (see runCli)
  // With killAfterSeconds, `timeout` SIGKILLs a penguin still running then (exit 137).
  const cut = killAfterSeconds === undefined
    ? []
    : ["/usr/bin/timeout", "-s", "KILL", String(killAfterSeconds)];
  const out = await runText("/usr/bin/python3", {
    args: ["-c", WAITER, report, ...cut, Deno.execPath(), ...penguinArgv(), ...args],
    cwd: REPO,
    env: penguinEnv(),
  });
  const kib = Number(await Deno.readTextFile(report));
  await Deno.remove(report);
  return { ...out, peakBytes: kib * 1024 };
}
