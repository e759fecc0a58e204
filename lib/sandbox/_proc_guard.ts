/**
 * The process-count guard: a bash function the init of every sandbox (the
 * wrapper of `_supervisor.ts` or the launcher of `_launcher.ts`) runs while
 * it waits for a command, because RLIMIT_NPROC (`ulimit -u`, the policy's
 * `maxProcesses`) is not enforced for root. The kernel exempts the host's
 * uid 0, also inside a user namespace that maps 0 to 0 (measured: as root,
 * `ulimit -u 50` then 200 background `sleep`s all start), so a fork bomb
 * from a command of penguin running as root would exhaust the host's PIDs.
 *
 * `guard N C` runs in the init itself, PID 1 of the sandbox's PID namespace,
 * and returns once its child C (the command) has ended. The kernel never
 * delivers SIGSTOP or SIGKILL sent from inside a PID namespace to its init,
 * nor any signal the init has no handler for, so no process of the command
 * can stop or kill the counting (an earlier design counted in a separate
 * process beside the command, which the command could SIGSTOP and then
 * fork past the limit). Every round it waits on fd 9 (`read -t`, a pipe
 * nobody writes: no `sleep` process), counts the `/proc/<pid>/task/<tid>`
 * entries, the threads of the namespace's processes (every thread takes a
 * host PID, so a thread bomb counts as a fork bomb does; a glob, no process
 * started), and checks whether C has ended: `/proc/C` gone (bash reaps its
 * children as soon as the read returns). Every 32nd round it also reads
 * `/proc/C/stat` and ends on a C with another start time (its PID reused)
 * or on a zombie C (not reaped) that has no other thread: a command whose
 * main thread ended (`pthread_exit`) shows as a zombie while its other
 * threads run on and fork, so the count goes on while any is left
 * (`/proc/C/task`); the file is read whole (`read -d ''`): the
 * command names itself and may put `) ` or a newline in its name, which
 * only the last `) ` of the file is sure to follow.
 *
 * The first rounds are short (1 ms growing to 20 ms, about half the time
 * elapsed), then 30 ms: bash blocks SIGCHLD while `read -t` waits
 * (measured, bash 5.2: a CHLD trap runs only after the read timed out), so
 * a command's end is seen at the end of a round, and a short command must
 * not wait 30 ms for it. Traps on other signals (the launcher's
 * forwarding) run during the read, which still ends at its deadline: a
 * flood of signals does not put off the count.
 *
 * When the count exceeds N plus the init, it prints {@linkcode guardMessage}
 * on stdout (the command's output, before anything is killed, so the line
 * is in the pipe before the command's status) and SIGKILLs every process of
 * the namespace but the init (`kill -KILL -1`) until none is left. The
 * caller then collects C's status with `wait`: unchanged for ordinary
 * commands, SIGKILLed (137) for a command the guard stopped.
 *
 * The init must not end on a signal either (its end kills the command
 * and, in a kept sandbox, the sandbox): `read -t` makes bash install
 * handlers for its terminating signals (measured, bash 5.2: SIGINT, SIGSEGV,
 * SIGUSR2, …), and the kernel delivers a signal the init handles, also one
 * a command sends it. So while the guard runs the init ignores
 * {@linkcode GUARD_IGNORED} (and every signal it does not trap), set before
 * the command is forked; the command's subshell restores them, so it still
 * starts with them at their defaults. (Set after the fork, they left a moment
 * in which a command that signalled the init at once ended it.)
 *
 * Each round also counts the ptys of the sandbox's devpts instance
 * (`/dev/pts/<n>`): past {@linkcode PTY_MAX} it prints
 * {@linkcode ptyGuardMessage} and kills as above (the kernel's pool of ptys is
 * shared by every sandbox of the machine).
 *
 * Each round also checks that the sandbox's mounts inside its roots are all
 * still there (`mheld` of `_mount_watch.ts`): one removed from outside
 * prints {@linkcode mountGoneMessage} and kills as above.
 *
 * A cgroup `pids.max` would be stronger but needs a delegated cgroup v2
 * pids controller, which many hosts (cgroup v1 or hybrid) lack.
 *
 * @module
 */

import { mountGoneMessage, MOUNTS_HELD } from "./_mount_watch.ts";

/** The line a command stopped by the guard gets in its output. */
export function guardMessage(limit: number | string): string {
  return `[penguin: the command started more than ${limit} processes; everything it started was killed]`;
}

/**
 * Pseudo-terminals one sandbox may hold at once. Every sandbox has a devpts
 * instance of its own, but the kernel counts the ptys of all of them against
 * one machine-wide pool (`kernel.pty.max` less `kernel.pty.reserve`, 3,072 by
 * default): one command took them all, and other sessions' commands got none
 * while it ran (attack round 27 c13). At 32 each, even a session's 64
 * background commands together leave a third of the pool.
 */
export const PTY_MAX = 32;

/** The line a command stopped for holding too many pseudo-terminals gets in its output. */
export function ptyGuardMessage(): string {
  return `[penguin: the command opened more than ${PTY_MAX} pseudo-terminals; everything it started was killed]`;
}

/**
 * The signals the init ignores while the guard runs, besides those it traps
 * or ignores already (the launcher traps SIGHUP, SIGTERM, SIGUSR1 and
 * SIGALRM to forward them; the wrapper ignores them too): every signal a
 * bash may handle by ending, but SIGCHLD (ignoring it would reap the
 * command unseen) and the job-control stops (which the kernel never
 * delivers to an init without a handler).
 */
export const GUARD_IGNORED =
  "INT QUIT ILL TRAP ABRT BUS FPE USR2 SEGV PIPE STKFLT XCPU XFSZ VTALRM PROF IO PWR SYS";

/**
 * Bash function `guard N C` (see the module doc), for the init of a PID
 * namespace; needs fd 9 open on a pipe nobody writes, and C the init's child.
 */
export const PROC_GUARD = `${MOUNTS_HELD}
guard() {
  local IFS=$' \\t\\n' l= x st n=0
  local -a p q s t d=(0.001 0.001 0.002 0.002 0.003 0.004 0.006 0.009 0.013 0.02)
  read -r -d '' l 2>/dev/null <"/proc/$2/stat"
  s=(\${l##*) })
  st=\${s[19]}
  while [ -d "/proc/$2" ]; do
    read -r -t "\${d[n]:-0.03}" -u 9 x
    n=$((n + 1))
    p=(/proc/[0-9]*/task/[0-9]*)
    if [ "\${#p[@]}" -gt $(($1 + 1)) ]; then
      printf '%s\\n' "${guardMessage("$1")}"
      while kill -s KILL -1 2>/dev/null; do read -r -t 0.002 -u 9 x; done
      return
    fi
    q=(/dev/pts/[0-9]*)
    if [ "\${#q[@]}" -gt ${PTY_MAX} ]; then
      printf '%s\\n' "${ptyGuardMessage()}"
      while kill -s KILL -1 2>/dev/null; do read -r -t 0.002 -u 9 x; done
      return
    fi
    if ! mheld; then
      printf '%s\\n' "${mountGoneMessage("$__PWG", true)}"
      while kill -s KILL -1 2>/dev/null; do read -r -t 0.002 -u 9 x; done
      return
    fi
    [ $((n % 32)) = 0 ] && [ -n "$st" ] || continue
    l=
    read -r -d '' l 2>/dev/null <"/proc/$2/stat"
    s=(\${l##*) })
    [ -n "$l" ] || continue
    [ "\${s[19]}" = "$st" ] || return
    [ "\${s[0]}" = Z ] || continue
    t=(/proc/$2/task/[0-9]*)
    [ "\${#t[@]}" -gt 1 ] || return
  done
}`;
