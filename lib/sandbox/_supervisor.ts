/**
 * The two small bash programs every child runs under, as text.
 *
 * The supervisor is the process Deno spawns (in its own session). It starts
 * the job (bwrap, sandbox-exec, or the command itself) in its own process
 * group, forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT to the sandboxed command's
 * process group, hard-kills everything on SIGUSR2, and exits with the job's
 * status. It exists because Deno's production permissions can signal only
 * the direct child (`Deno.kill` needs unscoped `--allow-run`) and cannot read
 * `/proc/<pid>` (needs `--allow-all`), while bubblewrap neither forwards
 * signals nor exposes the command's host PID. Under bubblewrap the
 * command's process group is the group of the sandbox's init process, the
 * child of the outer bwrap; the supervisor finds it in `/proc`. If `setpriv`
 * supports `--pdeathsig`, the supervisor re-executes itself under it so it
 * dies when penguin dies (and bwrap's `--die-with-parent` takes the sandbox
 * down with it).
 *
 * The wrapper runs as the first program *inside* the sandbox. It closes
 * every descriptor above 2, applies the process limit, reports readiness on
 * stderr (the control channel) when asked, merges stderr into stdout, and
 * execs the command. Nothing from the model is ever spliced into either
 * script: commands travel as separate argv entries.
 *
 * @module
 */

/** The line the wrapper prints on the control channel once the sandbox is set up. */
export const READY = "penguin-sandbox: ready";

/** How the supervisor reaches the command's process group. */
export type SupervisorKind =
  /** bubblewrap: signal the group of the outer bwrap's child (the sandbox init). */
  | "ns"
  /** no PID namespace: signal the job's own process group. */
  | "group";

/**
 * Supervisor. `$1` setpriv path or `-`, `$2` kind (`ns`|`group`), `$3` `1` to
 * feed `--setenv` pairs built from the `__PSE_<n>=NAME=VALUE` variables to
 * the job on fd 3 (bwrap `--args 3`), `$4` `1` to feed the seccomp filter,
 * `\xHH` escapes in `__PSF`, on fd 4 (bwrap `--seccomp 4`), `$5` `1` to read
 * bwrap's `--info-fd 5` for the host PID of the sandbox's init, then the job
 * argv.
 *
 * With the init's PID known (kind `ns`), signals go to its process group,
 * a hard kill SIGKILLs the init (the kernel then kills every process of
 * the PID namespace), and once the job has ended the supervisor kills the
 * init too and waits (at most 60 s) until it is gone or a zombie: the
 * kernel makes a namespace's init a zombie only after every other process
 * of the namespace is reaped, so when the supervisor exits nothing the
 * command started is left, fork bombs included. The wait is bounded by
 * wall-clock time (60 s, `$SECONDS`), not by a count of polls: on a loaded
 * machine the kernel can take many seconds to reap thousands of processes,
 * and a poll count gave up while most of a bomb was still alive. (bwrap itself returns as
 * soon as the command's first process exits, while its init may still be
 * killing the rest.) The init is recognised by PID and start time, so a
 * reused PID is never signalled.
 *
 * This teardown, not a process count, is what contains a fork bomb when
 * penguin runs as root (the kernel exempts uid 0 from RLIMIT_NPROC): a
 * cgroup pids limit would need a delegated cgroup v2 pids controller, which
 * hosts on cgroup v1 or hybrid hierarchies (this one included) do not have.
 */
export const SUPERVISOR = `if [ "$1" != - ]; then
  sp=$1; shift
  if [ "$1" = ns ]; then ds=KILL; else ds=USR2; fi
  exec "$sp" --pdeathsig "$ds" -- "$BASH" -c "$BASH_EXECUTION_STRING" "$0" - "$@"
fi
shift
kind=$1 envfd=$2 filter=$3 info=$4
shift 4
c= pend= init= istart= ist= isst=
kids() {
  local f line rest
  for f in /proc/[0-9]*/stat; do
    read -r line 2>/dev/null <"$f" || continue
    rest=\${line##*) }; rest=\${rest#* }
    [ "\${rest%% *}" = "$1" ] && printf '%s\\n' "\${line%% *}"
  done
}
pstat() {
  local line
  read -r line 2>/dev/null <"/proc/$1/stat" || return 1
  set -- \${line##*) }
  ist=$1 isst=\${20}
}
ours() {
  [ -n "$init" ] && pstat "$init" && [ "$isst" = "$istart" ] && [ "$ist" != Z ]
}
fwd() {
  local t
  if [ -z "$c" ]; then pend=$1; return; fi
  if [ "$kind" = group ]; then kill -s "$1" -- "-$c" 2>/dev/null; return; fi
  if ours; then kill -s "$1" -- "-$init" 2>/dev/null; return; fi
  for t in $(kids "$c"); do kill -s "$1" -- "-$t" 2>/dev/null; done
}
hard() {
  local t
  if [ -z "$c" ]; then pend=KILL; return; fi
  if [ "$kind" = group ]; then kill -s KILL -- "-$c" 2>/dev/null; return; fi
  if ours; then kill -s KILL "$init" 2>/dev/null; return; fi
  t=$(kids "$c")
  kill -s KILL "$c" $t 2>/dev/null
}
settle() {
  local end=$((SECONDS+61))
  ours || return 0
  kill -s KILL "$init" 2>/dev/null
  while [ $SECONDS -lt $end ] && ours; do
    read -r -t 0.01 -u 5 _ 2>/dev/null
  done
}
trap 'fwd INT' INT
trap 'fwd TERM' TERM
trap 'fwd HUP' HUP
trap 'fwd QUIT' QUIT
trap 'hard' USR2
[ "$envfd" = 1 ] && exec 3< <(for v in "\${!__PSE_@}"; do kv=\${!v}; printf -- '--setenv\\0%s\\0%s\\0' "\${kv%%=*}" "\${kv#*=}"; done)
[ "$filter" = 1 ] && exec 4< <(printf '%b' "$__PSF")
[ "$info" = 1 ] && exec 5<> <(:)
set -m
"$@" 0<&0 &
c=$!
set +m
exec 3<&- 4<&-
if [ "$info" = 1 ]; then
  acc=
  while :; do
    if IFS= read -r -t 0.05 -u 5 l; then
      l=$acc$l acc=
      case $l in *'"child-pid":'*)
        l=\${l#*: }; l=\${l%%[!0-9]*}
        [ -n "$l" ] && pstat "$l" && init=$l istart=$isst
        break ;;
      esac
    else
      acc=$acc$l
      kill -0 "$c" 2>/dev/null || break
    fi
  done
fi
if [ "$pend" = KILL ]; then hard; elif [ -n "$pend" ]; then fwd "$pend"; fi
while :; do
  wait "$c" 2>/dev/null
  rc=$?
  kill -0 "$c" 2>/dev/null || break
done
wait "$c" 2>/dev/null
r=$?
[ "$r" != 127 ] && rc=$r
settle
exit "$rc"
`;

/**
 * Wrapper. `$1` RLIMIT_NPROC or `-`, `$2` `1` to print {@linkcode READY} on
 * stderr and then merge stderr into stdout, then the command argv.
 */
export const WRAPPER = `for f in /proc/$$/fd/* /dev/fd/*; do
  n=\${f##*/}
  case $n in 0|1|2|*[!0-9]*) ;; *) eval "exec $n>&-" ;; esac
done
if [ "$1" != - ]; then ulimit -u "$1" 2>/dev/null; fi
if [ "$2" = 1 ]; then printf '%s\\n' '${READY}' >&2; exec 2>&1; fi
shift 2
exec "$@"
`;

/** The argv of the wrapper running `command` (bash path first). */
export function wrapperArgv(
  bash: string,
  command: string[],
  opts: { maxProcesses?: number; control: boolean },
): string[] {
  const limit = opts.maxProcesses !== undefined && opts.maxProcesses > 0
    ? String(opts.maxProcesses)
    : "-";
  return [bash, "-c", WRAPPER, "penguin-sandbox", limit, opts.control ? "1" : "0", ...command];
}

/** The arguments after the bash binary that run `job` under the supervisor. */
export function supervisorArgs(
  job: string[],
  opts: {
    setpriv?: string;
    kind: SupervisorKind;
    envFd: boolean;
    seccompFd?: boolean;
    infoFd?: boolean;
  },
): string[] {
  return [
    "-c",
    SUPERVISOR,
    "penguin-supervisor",
    opts.setpriv ?? "-",
    opts.kind,
    opts.envFd ? "1" : "0",
    opts.seccompFd ? "1" : "0",
    opts.infoFd ? "1" : "0",
    ...job,
  ];
}

/** The fd the supervisor feeds the seccomp filter on (`--seccomp 4`). */
export const SECCOMP_FD = 4;
/** The fd bwrap reports the sandbox's init PID on (`--info-fd 5`). */
export const INFO_FD = 5;

/** The supervisor environment that carries `env` as inert `__PSE_<n>` data for `--args 3`. */
export function envAsData(
  env: Record<string, string>,
  base: Record<string, string>,
): Record<string, string> {
  const out = { ...base };
  Object.keys(env).sort().forEach((k, i) => {
    out[`__PSE_${i}`] = `${k}=${env[k]}`;
  });
  return out;
}
