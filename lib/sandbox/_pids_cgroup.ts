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
 * round 18: every fork on the host failed). The cgroup's `pids.max` is what
 * this process's running commands may hold in all (their shares of the
 * process budget, `_process_budget.ts`) plus {@linkcode SLACK} for the
 * sandboxes' own processes and the ones that run no command; `max` while a
 * command without a limit runs. The kernel refuses a fork past it, so the
 * processes of all the user's penguins stay within the budget, half the
 * machine's free PIDs, however slowly the count runs.
 *
 * The shell Deno spawns for a sandbox (the direct launcher or the
 * supervisor) writes its own PID into the cgroup's `cgroup.procs` first,
 * before it starts anything, from `__PSCG` in its environment (unset before
 * bwrap starts): everything it starts is in the cgroup. A cgroup that cannot
 * be joined fails the start (the command does not run). The cgroup is
 * `penguin-<pid>-<random>` under the hierarchy's root, made at the first
 * sandbox and removed when the process exits (one left by a killed penguin
 * is empty, and stays until the machine restarts). Where none can be made
 * (not root, no pids controller), only the count holds the limit.
 *
 * @module
 */
import { join } from "node:path";

/** Processes allowed beyond the commands' shares: the sandboxes' own and the unlimited helpers'. */
export const SLACK = 512;

/** Where a cgroup may be made: v1's `pids` hierarchy, v2's root. */
const CANDIDATES = ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"] as const;

const state: {
  tried: boolean;
  dir?: string | undefined;
  /** Forced ceiling (tests): `pids.max` is this whatever the shares. */
  pinned?: number | undefined;
  /** Processes the running commands' shares hold, and how many run without a limit. */
  held: number;
  unlimited: number;
} = { tried: false, held: 0, unlimited: 0 };

function readOrNone(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
}

/** Whether `base` is a hierarchy root where a pids cgroup can be made and joined. */
function usable(base: string): boolean {
  if (readOrNone(join(base, "cgroup.procs")) === undefined) return false;
  if (base.endsWith("/pids")) return readOrNone(join(base, "pids.max")) === undefined;
  const controllers = readOrNone(join(base, "cgroup.controllers"));
  const subtree = readOrNone(join(base, "cgroup.subtree_control"));
  return controllers !== undefined && subtree !== undefined &&
    /(^|\s)pids(\s|$)/.test(subtree);
}

function ceiling(): string {
  if (state.pinned !== undefined) return String(state.pinned);
  return state.unlimited > 0 ? "max" : String(state.held + SLACK);
}

/** Make this process's cgroup (once); undefined where none can be made. */
function ensure(): string | undefined {
  if (state.tried) return state.dir;
  state.tried = true;
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) return undefined;
  const base = CANDIDATES.find(usable);
  if (base === undefined) return undefined;
  const rand = [...crypto.getRandomValues(new Uint8Array(4))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  const dir = join(base, `penguin-${Deno.pid}-${rand}`);
  try {
    Deno.mkdirSync(dir);
  } catch {
    return undefined;
  }
  try {
    Deno.writeTextFileSync(join(dir, "pids.max"), ceiling());
  } catch {
    try {
      Deno.removeSync(dir);
    } catch {
      // left empty
    }
    return undefined;
  }
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(dir);
    } catch {
      // A sandbox still ending: the empty cgroup stays.
    }
  });
  state.dir = dir;
  return dir;
}

function apply(): void {
  if (state.dir === undefined) return;
  try {
    Deno.writeTextFileSync(join(state.dir, "pids.max"), ceiling());
  } catch {
    // The cgroup went away (removed by hand): the next join fails the start.
  }
}

/**
 * The environment entry that makes a sandbox's launcher join the cgroup
 * (`__PSCG`: the path of its `cgroup.procs`), or none where there is none.
 */
export function cgroupJoinEnv(): Record<string, string> {
  const dir = ensure();
  return dir === undefined ? {} : { __PSCG: join(dir, "cgroup.procs") };
}

/**
 * A command's share of `limit` processes starts (0 or less: a command without
 * a limit); returns its end. The ceiling is raised before the command starts
 * and lowered when its end is called.
 */
export function cgroupShare(limit: number): () => void {
  if (limit > 0) state.held += limit;
  else state.unlimited++;
  apply();
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    if (limit > 0) state.held -= limit;
    else state.unlimited--;
    apply();
  };
}

/** This process's cgroup directory and its ceiling now (tests); undefined where there is none. */
export function cgroupFacts(): { dir: string; max: string } | undefined {
  const dir = ensure();
  return dir === undefined ? undefined : { dir, max: ceiling() };
}

/** Force the ceiling (tests only); undefined goes back to the shares'. */
export function _pinCgroupCeiling(n: number | undefined): void {
  state.pinned = n;
  ensure();
  apply();
}

/**
 * sh (dash and bash alike), the first lines of a sandbox's launcher: join the
 * cgroup `__PSCG` names, if any, or fail the start with exit status 125.
 */
export const JOIN_CGROUP = `if [ -n "\${__PSCG:-}" ]; then
  if ! echo $$ 2>/dev/null >"$__PSCG"; then
    echo "penguin: cannot join the process-limit cgroup ($__PSCG); the command did not run" >&2
    exit 125
  fi
fi
unset __PSCG`;
