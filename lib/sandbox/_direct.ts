/**
 * Start bubblewrap as penguin's own child, with no supervisor process in
 * between: the fast path of every sandboxed command on Linux.
 *
 * The chain is penguin → `sh` → (exec) bwrap → the wrapper (the sandbox's
 * init, PID 1 of its namespace) → the command in the wrapper's subshell:
 * one small shell more than a bare `bwrap … bash -c`, where the supervised
 * path (`_supervisor.ts`) adds a setpriv, a bash and a fork in front of
 * bwrap. What the supervisor did is done otherwise:
 * - the seccomp filter reaches bwrap's `--seccomp 3` from the filter file
 *   of `_seccomp_file.ts`, which `sh` opens as fd 3 before it execs bwrap
 *   (penguin cannot hand a child a fourth descriptor without a fork that
 *   costs about 1 ms per 25 MB of its memory); no file, no direct path;
 * - bwrap's `--die-with-parent` ties the sandbox to penguin (bwrap dies
 *   with penguin's main thread, the init with bwrap), as setpriv's
 *   `--pdeathsig` tied the supervisor;
 * - a signal is delivered by a short bash ({@linkcode SIGNALLER}) started
 *   only when one is sent (a timeout, an interrupt): it finds the init as
 *   bwrap's only child, checks that bwrap is still penguin's child and the
 *   init still bwrap's, and signals the init's process group, which holds
 *   the command (the init itself ignores it). The hard kill SIGKILLs the
 *   init: the kernel then kills every process of the namespace, and bwrap,
 *   which waits for its init, exits only once they are all gone. So the
 *   status still arrives only when nothing the command started is left.
 *   bwrap itself is never sent a signal but SIGKILL as a last resort (it
 *   dies of most signals, taking the sandbox down without a grace period);
 * - bwrap runs in penguin's process group unless penguin has a controlling
 *   terminal: then it gets a session of its own (a fork instead of a
 *   vfork) so that the terminal's Ctrl-C, Ctrl-\\ and Ctrl-Z never reach it.
 *   Without a terminal no terminal signal can arrive.
 *
 * @module
 */
import { errorMessage, PenguinError } from "../protocol/errors.ts";
import {
  handleFor,
  type HandleOptions,
  mayRun,
  type RawChild,
  type SandboxedProcess,
  toExitStatus,
} from "./_process.ts";
import { CHECKED_INIT, type PinnedPath, pinnedRootArgs, WS_OPEN } from "./_supervisor.ts";
import { cgroupJoinEnv, JOIN_CGROUP } from "./_pids_cgroup.ts";
import { NO_COMMAND, signallerInOrder } from "./_signaller.ts";

/** The fd bwrap reads the seccomp filter from on the direct path (`--seccomp 3`). */
export const DIRECT_SECCOMP_FD = 3;

/**
 * `sh -c` program: open the filter file (`$0`) as fd 3, the pinned roots
 * (`$1` of them, then fd, path and inode of each: `pinnedRootArgs`), each
 * checked to be its inode (see `WS_OPEN`), and become bwrap (the rest).
 */
export const OPEN_AND_EXEC = `${JOIN_CGROUP}
${WS_OPEN}
exec 3<"$0" || exit 126
n=$1
shift
while [ "$n" -gt 0 ]; do
  rootopen "$1" "$2" "$3" || exit 126
  shift 3
  n=$((n - 1))
done
exec "$@"`;

/**
 * The signaller: `$1` bwrap's host PID, `$2` the signal name (`INT`,
 * `QUIT`, `TERM`, `HUP`, or `KILL` for the hard kill). Exits 0 when the
 * signal was sent, 3 when bwrap is no longer penguin's child (gone, its PID
 * possibly reused: nothing is sent), 4 when bwrap has no init (yet, or any
 * more).
 */
export const SIGNALLER = `b=$1 sig=$2 line= init=
${CHECKED_INIT}
if [ "$sig" = KILL ]; then kill -s KILL "$init"; else kill -s "$sig" -- "-$init"; fi
`;

/** Options of {@linkcode startDirect}. */
export interface DirectOptions extends HandleOptions {
  /** Absolute bash path, for the signaller. */
  bash: string;
  /** Absolute path of the `sh` that opens the filter and execs bwrap (penguin may run it). */
  sh: string;
  /** Absolute bwrap path. */
  bwrap: string;
  /** bwrap's arguments, with `--seccomp 3`, `--die-with-parent` and `--as-pid-1`. */
  args: string[];
  /** The seccomp filter file (see `_seccomp_file.ts`). */
  filter: string;
  /** The roots to open and check for bwrap's `--bind-fd` (`plan.workspaceId`, `plan.rootIds`); on `DIRECT_ROOT_FDS` besides the workspace. */
  roots?: readonly PinnedPath[] | undefined;
  /** bwrap's environment (the wrapper rebuilds the command's from it). */
  env: Record<string, string>;
  /** Directory bwrap starts in. */
  cwd: string;
  /** Start bwrap in a session of its own (penguin has a controlling terminal). */
  detached: boolean;
}

/** Where the direct path's `sh` may be (penguin's permission set names `sh`). */
const SH_PATHS = ["/usr/bin/sh", "/bin/sh"];

/** The `sh` the direct path starts bwrap with, or undefined when penguin may run none. */
export function directShellPath(): string | undefined {
  if (Deno.build.os !== "linux") return undefined;
  return SH_PATHS.find((p) => mayRun(p));
}

let terminal: boolean | undefined;

/** Whether this process has a controlling terminal (whose signals would reach its process group). */
export function hasControllingTerminal(): boolean {
  if (terminal === undefined) {
    try {
      Deno.openSync("/dev/tty", { read: true }).close();
      terminal = true;
    } catch {
      terminal = false;
    }
  }
  return terminal;
}

/**
 * Start bwrap directly and wrap it in a {@linkcode SandboxedProcess}; in
 * merged mode wait until the wrapper inside reports ready. Throws a runtime
 * {@linkcode PenguinError} when bwrap cannot start or the sandbox cannot be
 * set up.
 */
export async function startDirect(opts: DirectOptions): Promise<SandboxedProcess> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(opts.sh, {
      args: [
        "-c",
        OPEN_AND_EXEC,
        opts.filter,
        ...pinnedRootArgs(opts.roots ?? []),
        opts.bwrap,
        ...opts.args,
      ],
      cwd: opts.cwd,
      clearEnv: true,
      env: { ...opts.env, ...cgroupJoinEnv() },
      stdin: opts.stdin === "piped" ? "piped" : "null",
      stdout: "piped",
      stderr: "piped",
      detached: opts.detached,
    }).spawn();
  } catch (err) {
    throw new PenguinError("runtime", `Cannot start ${opts.describe}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  const raw: RawChild = {
    pid: child.pid,
    stdin: opts.stdin === "piped" ? child.stdin : null,
    stdout: child.stdout,
    stderr: child.stderr,
    status: child.status.then(toExitStatus),
  };
  const last = () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  };
  const send = signallerInOrder(opts.bash, SIGNALLER, child.pid);
  return await handleFor(raw, {
    soft: (sig) => void send(sig.slice(3)),
    // No init to kill (bwrap is still starting it, or it is gone): killing bwrap takes the
    // sandbox down through the init's death signal.
    hard: () => void send("KILL").then((code) => code === NO_COMMAND && last()),
    last,
  }, opts);
}
