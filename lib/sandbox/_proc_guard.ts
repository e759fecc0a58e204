/**
 * The process-count guard: a bash function run beside every sandboxed
 * command, because RLIMIT_NPROC (`ulimit -u`, the policy's `maxProcesses`)
 * is not enforced for root. The kernel exempts the host's uid 0, also inside
 * a user namespace that maps 0 to 0 (measured: as root, `ulimit -u 50` then
 * 200 background `sleep`s all start), so a fork bomb from a command of
 * penguin running as root would exhaust the host's PIDs.
 *
 * `guard N` runs as a child of the sandbox's init (the wrapper of
 * `_supervisor.ts` or the launcher of `_launcher.ts`), ignoring the signals
 * penguin forwards. Every 30 ms (`read -t` on fd 9, a pipe nobody writes:
 * no `sleep` process) it counts the `/proc/<pid>/task/<tid>` entries, the threads of
 * the namespace's processes (every thread takes a host PID, so a thread bomb
 * counts as a fork bomb does); a glob, no process started.
 * When the count exceeds N plus the init and itself, it prints
 * {@linkcode guardMessage} on stdout (the command's output, before anything
 * is killed, so the line is in the pipe before the command's status) and
 * SIGKILLs every process of the namespace but the init and itself
 * (`kill -KILL -1`) until none is left, then exits 0.
 *
 * The init waits for the command or the guard, whichever ends first
 * (`wait -n`): a guard that ends first, tripped or killed by the command,
 * makes the init kill everything too, so a command cannot disable the guard
 * and go on. A guard that is still running when the command ends is killed
 * with the rest of the namespace. The exit statuses of ordinary commands do
 * not change; a command the guard stopped ends as SIGKILLed (137).
 *
 * A cgroup `pids.max` would be stronger but needs a delegated cgroup v2
 * pids controller, which many hosts (cgroup v1 or hybrid) lack.
 *
 * @module
 */

/** The line a command stopped by the guard gets in its output. */
export function guardMessage(limit: number | string): string {
  return `[penguin: the command started more than ${limit} processes; everything it started was killed]`;
}

/** The line a command gets when it stopped the guard itself. */
/** (No quote characters: the scripts print it in single quotes.) */
export const GUARD_STOPPED =
  "[penguin: the command stopped the process-count guard of its sandbox; everything it started was killed]";

/** Bash function `guard N` (see the module doc); needs fd 9 open on a pipe nobody writes. */
export const PROC_GUARD = `guard() {
  trap '' INT QUIT TERM HUP TSTP TTIN TTOU USR1 USR2 ALRM
  local -a p
  local x
  while :; do
    read -r -t 0.03 -u 9 x
    p=(/proc/[0-9]*/task/[0-9]*)
    [ "\${#p[@]}" -gt $(($1 + 2)) ] && break
  done
  printf '%s\\n' "${guardMessage("$1")}"
  while kill -s KILL -1 2>/dev/null; do read -r -t 0.002 -u 9 x; done
  exit 0
}`;
