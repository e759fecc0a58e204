/**
 * Signallers: short bash programs penguin starts to deliver one signal to a
 * command's process group from outside, having checked in `/proc` that
 * every process on the way is still the one penguin started (so a reused
 * PID is never signalled).
 *
 * The direct path (`_direct.ts`) and the launcher pool always deliver this
 * way. The supervised path delivers a soft signal this way too, on Linux,
 * and falls back to asking its supervisor (`_supervisor.ts`) only when the
 * command is not found (not started yet, or gone): a supervisor forwards
 * from a bash `trap` run while the `wait` builtin blocks, and under load one
 * forwarded signal in a few thousand never arrived (the trap did not run
 * until the command ended, which a command waiting for that signal never
 * does).
 *
 * @module
 */
import { INIT_OF, type SupervisorKind } from "./_supervisor.ts";

/** A signaller's exit code when the signal was sent. */
export const SENT = 0;
/** A signaller's exit code when the process it starts from is not penguin's child (any more). */
export const NOT_OURS = 3;
/** A signaller's exit code when the command's process group was not found (yet, or any more). */
export const NO_COMMAND = 4;

/**
 * bash (with `INIT_OF` and its `kids`): `leaderof PID` sets `lead` to the child of
 * PID that leads a process group of its own and is not a zombie (the job a
 * supervisor started with `set -m`; a process substitution's child does
 * not lead one); false when there is none.
 */
const LEADER_OF = `${INIT_OF}
leaderof() {
  local k ks f
  lead=
  if [ -e "/proc/$1/task/$1/children" ]; then
    read -r -a ks 2>/dev/null <"/proc/$1/task/$1/children"
  else
    mapfile -t ks < <(kids "$1")
  fi
  for k in "\${ks[@]}"; do
    read -r f 2>/dev/null <"/proc/$k/stat" || continue
    set -- \${f##*) }
    if [ "$1" != Z ] && [ "$3" = "$k" ]; then lead=$k; return 0; fi
  done
  return 1
}`;

/**
 * The supervised path's signaller for `kind`: `$1` the supervisor's host
 * PID, `$2` the signal name (`INT`, `QUIT`, `TERM`, `HUP`). Exits
 * {@linkcode SENT}, {@linkcode NOT_OURS} when the supervisor is no longer
 * penguin's child (nothing is sent), {@linkcode NO_COMMAND} when its job (or,
 * under bubblewrap, the job's init) is not found.
 *
 * With `group` (no PID namespace) the job's process group is the command's.
 * With `ns` the job is bwrap, whose only child is the sandbox's init, whose
 * process group holds the command (the init itself ignores the signal).
 */
function supervisedSignaller(kind: SupervisorKind): string {
  const deliver = kind === "group"
    ? `kill -s "$sig" -- "-$lead"`
    : `initof "$lead" || exit ${NO_COMMAND}
read -r line 2>/dev/null <"/proc/$init/stat" || exit ${NO_COMMAND}
set -- \${line##*) }
[ "$2" = "$lead" ] && [ "$1" != Z ] || exit ${NO_COMMAND}
kill -s "$sig" -- "-$init"`;
  return `s=$1 sig=$2 line= init= lead=
${LEADER_OF}
read -r line 2>/dev/null <"/proc/$s/stat" || exit ${NOT_OURS}
set -- \${line##*) }
[ "$2" = "$PPID" ] && [ "$1" != Z ] || exit ${NOT_OURS}
leaderof "$s" || exit ${NO_COMMAND}
${deliver}
`;
}

/** {@linkcode supervisedSignaller} of each kind, built once. */
export const SUPERVISED_SIGNALLER: Readonly<Record<SupervisorKind, string>> = {
  group: supervisedSignaller("group"),
  ns: supervisedSignaller("ns"),
};

/**
 * Run a signaller script as `bash -c <script> penguin-signal <PID> <signal>`,
 * with an empty environment but `PATH`; its exit code (1 when it could not
 * be run).
 */
export async function runSignaller(
  bash: string,
  script: string,
  pid: number,
  sig: string,
): Promise<number> {
  try {
    const run = await new Deno.Command(bash, {
      args: ["-c", script, "penguin-signal", String(pid), sig],
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin" },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return run.code;
  } catch {
    return 1;
  }
}

/**
 * Send signals through `script` for the child `pid` one signaller at a time,
 * so they arrive in the order they were sent; each call's promise is that
 * signaller's exit code ({@linkcode SENT} without running one once `live`
 * says the child is no longer worth signalling).
 */
export function signallerInOrder(
  bash: string,
  script: string,
  pid: number,
  live: () => boolean = () => true,
): (sig: string) => Promise<number> {
  let queue: Promise<unknown> = Promise.resolve();
  return (sig) => {
    const sent = queue.then(() => live() ? runSignaller(bash, script, pid, sig) : SENT);
    queue = sent;
    return sent;
  };
}
