/**
 * The program a sandbox of its own starts its init from: the per-command
 * wrapper of `_supervisor.ts` (PID 1 of the sandbox's PID namespace) runs
 * from the unreadable copy of bash the kept sandbox's launcher runs from
 * ({@linkcode launcherBinary}), bound read-only at {@linkcode LAUNCHER_PATH}.
 *
 * Why: the kernel marks a process that executed a file it may not read
 * non-dumpable, and then refuses `ptrace` and `/proc/<pid>/mem` to every
 * process without `CAP_SYS_PTRACE` (bwrap drops every capability), the
 * same uid included. The seccomp filter allows `ptrace` and there may be no
 * Yama LSM, so a wrapper run from ordinary bash could be seized by its own
 * command, which would stop the process-count guard of `_proc_guard.ts`
 * (and the wrapper's signal handling and status) and then fork past the
 * limit (measured: 100 `sleep`s under a limit of 40).
 *
 * When no such copy can be made (penguin's private run directory cannot
 * hold it) or the mark would not be set (`fs.suid_dumpable` is 1), the
 * wrapper runs from ordinary bash, and is traceable, only where that costs
 * nothing: penguin is not root (the kernel itself holds the command to
 * RLIMIT_NPROC, which the guard only repeats) or the policy sets no process
 * limit (there is no guard). As root with a limit it fails closed: the
 * command does not run, and the error says why. A tracer of the wrapper
 * gains nothing else: its environment and descriptors are the command's
 * own, and the hard kill SIGKILLs it from outside.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import { LAUNCHER_PATH, launcherBinary } from "./_launcher.ts";
import { hostFacts } from "./_proc_facts.ts";

/** How the init of a sandbox of its own is started. */
export interface InitProgram {
  /** The bash the wrapper runs from, as the sandbox sees it. */
  bash: string;
  /** The bwrap arguments that bind it into the sandbox (none for ordinary bash). */
  binds: string[];
}

/** Whether `fs.suid_dumpable` is 1, so an unreadable binary would not make its process non-dumpable. */
async function dumpableAnyway(): Promise<boolean> {
  // Through bash: Deno refuses `/proc` reads under penguin's own permissions. Unknown (no
  // bash, no /proc) counts as dumpable: the unreadable binary is then not relied on.
  const { suidDumpable } = await hostFacts();
  return suidDumpable !== "0" && suidDumpable !== "2";
}

/**
 * The init program for a sandbox whose command runs under a process limit
 * of `maxProcesses` (none when not positive): from the unreadable copy of
 * `bash` when it can be made, else ordinary `bash` where that is safe (see
 * the module doc), else a runtime {@linkcode PenguinError} naming `describe`
 * was to run and `hint`.
 */
export async function initProgram(
  bash: string,
  maxProcesses: number,
  opts: { describe: string; hint: string; uid?: number | null },
): Promise<InitProgram> {
  const bin = await dumpableAnyway() ? undefined : await launcherBinary(bash);
  if (bin !== undefined) return { bash: LAUNCHER_PATH, binds: ["--ro-bind", bin, LAUNCHER_PATH] };
  const uid = opts.uid === undefined ? Deno.uid() : opts.uid;
  if (uid !== 0 || maxProcesses <= 0) return { bash, binds: [] };
  throw new PenguinError(
    "runtime",
    `Cannot run ${opts.describe}: the sandbox's init would be traceable by the command ` +
      `(no unreadable copy of bash could be made in penguin's run directory, or ` +
      `fs.suid_dumpable is 1), and as root only the init holds the command to its process ` +
      `limit. Set fs.suid_dumpable to 0 or 2, or run penguin as another user. ${opts.hint}`,
  );
}
