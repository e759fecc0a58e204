/**
 * A kernel-enforced ceiling on the processes all of this penguin process's
 * sandboxes hold together: a pids cgroup of its own, where the machine lets
 * penguin make one (root on a cgroup v1 `pids` hierarchy, or on a cgroup v2
 * root whose `pids` controller is enabled for its children).
 *
 * The count each sandbox's init makes every 30 ms (`_proc_guard.ts`) holds a
 * command to its limit, but it is a process like the bomb's: a fast fork bomb
 * (`x(){ x|x& };x`) made runnable processes by the thousand, the init got
 * too little of the CPU to count, and the machine's PIDs ran out (attack
 * round 18: every fork on the host failed). The cgroup's `pids.max` follows
 * what this process's running commands may hold ({@linkcode ceilingFor}: their
 * shares of the process budget, `_process_budget.ts`, at least
 * {@linkcode FLOOR}, plus {@linkcode SLACK} for the sandboxes' own processes;
 * `max` while a command without a limit runs): raised before a command whose
 * share needs more starts, lowered after one ends. The kernel refuses a fork
 * past it, however the count is doing.
 *
 * Deno's permission set refuses penguin every `/sys` access, so a short bash
 * makes the cgroup when this process takes its first share (removing, on the
 * way, the empty `penguin-*` cgroups of penguin processes that are gone),
 * another changes its ceiling (only when the ceiling must change: one command
 * at a time never does), and another removes it when the process exits. The shell Deno spawns for each
 * sandbox (the direct launcher or the supervisor) writes its own PID into the
 * cgroup's `cgroup.procs` first, before it starts anything, from `__PSCG` in
 * its environment (unset before bwrap starts): everything it starts is in the
 * cgroup. A cgroup that cannot be joined fails the start (the command does
 * not run). Where none can be made (not root, no pids controller), only the
 * count holds the limit.
 *
 * @module
 */
import { findBash } from "./_executables.ts";
import { runFactScript } from "./_fact_script.ts";
import { removeCgroupAtExit } from "./_cgroup_exit.ts";
import { memoryJoinEnv } from "./_memory_cgroup.ts";

/** Processes allowed beyond the commands' part of the budget: the sandboxes' own. */
export const SLACK = 512;

/**
 * The commands' part of the ceiling is never set below this (the default `maxProcesses`), so
 * one command at a time never changes it.
 */
export const FLOOR = 2048;

/** The ceiling for commands holding `held` processes in all (`unlimited`: one has no limit). */
export function ceilingFor(held: number, unlimited: boolean): string {
  return unlimited ? "max" : String(Math.max(held, FLOOR) + SLACK);
}

/** bash: `$1` the cgroup, `$2` the ceiling to write. */
const SET = `echo "$2" >"$1/pids.max"`;

/**
 * bash: `$1` the ceiling. Finds where a pids cgroup can be made: on v1, below
 * the `pids` cgroup penguin runs in (an administrator's `pids.max` there, a
 * CI job's or systemd's `TasksMax`, still holds its commands: made at the
 * hierarchy's root, they escaped it, attack round 29 i06); else v2's root
 * with `pids` enabled for its children (a v2 cgroup with processes cannot
 * have children with controllers). Removes the empty cgroups of penguin
 * processes that are gone (there, and at the root where earlier versions
 * made them), makes
 * `penguin-<penguin's pid>-<random>` with `pids.max` set, and prints
 * `dir <path>`.
 */
const MAKE = `max=$1 base= top= own=
if [ -e /sys/fs/cgroup/pids/cgroup.procs ] && [ ! -e /sys/fs/cgroup/pids/pids.max ]; then
  top=/sys/fs/cgroup/pids base=$top
  while IFS=: read -r _ ctl path; do
    [ "$ctl" = pids ] && own=\${path%/}
  done </proc/self/cgroup
  [ -n "$own" ] && [ -d "$top$own" ] && base=$top$own
elif [ -e /sys/fs/cgroup/cgroup.subtree_control ]; then
  read -r sub 2>/dev/null </sys/fs/cgroup/cgroup.subtree_control
  case " $sub " in *" pids "*) base=/sys/fs/cgroup top=$base ;; esac
fi
[ -n "$base" ] || exit 0
for d in "$base"/penguin-*-* "$top"/penguin-*-*; do
  [ -d "$d" ] || continue
  p=\${d##*/penguin-}; p=\${p%%-*}
  [ -d "/proc/$p" ] || rmdir "$d" 2>/dev/null
done
d=$base/penguin-$PPID-$RANDOM$RANDOM
mkdir "$d" 2>/dev/null || exit 0
if ! echo "$max" 2>/dev/null >"$d/pids.max"; then rmdir "$d"; exit 0; fi
echo "dir $d"`;

const state: {
  tried?: Promise<string | undefined>;
  dir?: string | undefined;
  pinned?: number | undefined;
  /** The ceiling last written (or being written). */
  written?: string | undefined;
  /** Writes of the ceiling, one at a time, in order. */
  queue: Promise<unknown>;
} = { queue: Promise.resolve() };

/** Make the cgroup with the ceiling `n` whatever is asked (tests only; before its first share). */
export function _pinCgroupCeiling(n: number): void {
  state.pinned = n;
}

/**
 * Make this process's cgroup with the ceiling `max` (once; later calls
 * return the first answer). Undefined where none can be made.
 */
export function ensureCgroup(max: string): Promise<string | undefined> {
  state.tried ??= make(state.pinned !== undefined ? String(state.pinned) : max);
  return state.tried;
}

/**
 * Set the ceiling to `max` (a {@linkcode ceilingFor} value) once the cgroup
 * exists, making it first if need be; resolves when written. Nothing happens
 * where there is no cgroup, when the ceiling is pinned (tests) or already
 * `max`.
 */
export async function setCeiling(max: string): Promise<void> {
  const dir = await ensureCgroup(max);
  if (dir === undefined || state.pinned !== undefined || state.written === max) return;
  state.written = max;
  const bash = await findBash();
  if (bash === undefined) return;
  const write = () =>
    runFactScript(bash, ["-c", SET, "penguin-cgroup", dir, max]).then(() => {}, () => {});
  const next = state.queue.then(write);
  state.queue = next;
  await next;
}

async function make(max: string): Promise<string | undefined> {
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) return undefined;
  const bash = await findBash();
  if (bash === undefined) return undefined;
  let dir: string | undefined;
  try {
    dir = (await runFactScript(bash, ["-c", MAKE, "penguin-cgroup", max])).facts.get("dir");
  } catch {
    return undefined;
  }
  if (dir === undefined) return undefined;
  state.dir = dir;
  state.written = max;
  removeCgroupAtExit(bash, dir);
  return dir;
}

/**
 * The environment entries that make a sandbox's launcher join the cgroups
 * (`__PSCG`: the path of the pids cgroup's `cgroup.procs`; `__PMCG`: the
 * memory cgroup's, `_memory_cgroup.ts`), none for one that is not there.
 */
export function cgroupJoinEnv(): Record<string, string> {
  return {
    ...(state.dir === undefined ? {} : { __PSCG: `${state.dir}/cgroup.procs` }),
    ...memoryJoinEnv(),
  };
}

/** This process's cgroup directory (tests); undefined where there is none (yet). */
export function cgroupDir(): string | undefined {
  return state.dir;
}

/**
 * sh (dash and bash alike), the first lines of a sandbox's launcher: join the
 * cgroups `__PSCG` and `__PMCG` name, if any, or fail the start with exit
 * status 125.
 */
export const JOIN_CGROUP = `if [ -n "\${__PSCG:-}" ]; then
  if ! echo $$ 2>/dev/null >"$__PSCG"; then
    echo "penguin: cannot join the process-limit cgroup ($__PSCG); the command did not run" >&2
    exit 125
  fi
fi
if [ -n "\${__PMCG:-}" ]; then
  if ! echo $$ 2>/dev/null >"$__PMCG"; then
    echo "penguin: cannot join the memory-limit cgroup ($__PMCG); the command did not run" >&2
    exit 125
  fi
fi
unset __PSCG __PMCG`;

/** Resolves once every change of the ceiling asked for so far is written (tests). */
export function _cgroupWritten(): Promise<void> {
  return state.queue.then(() => {});
}
