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
 * the job on fd 3 (bwrap `--args 3`), then the job argv.
 */
export const SUPERVISOR = `if [ "$1" != - ]; then
  sp=$1; shift
  if [ "$1" = ns ]; then ds=KILL; else ds=USR2; fi
  exec "$sp" --pdeathsig "$ds" -- "$BASH" -c "$BASH_EXECUTION_STRING" "$0" - "$@"
fi
shift
kind=$1 envfd=$2
shift 2
c= pend=
kids() {
  local f line rest
  for f in /proc/[0-9]*/stat; do
    read -r line 2>/dev/null <"$f" || continue
    rest=\${line##*) }; rest=\${rest#* }
    [ "\${rest%% *}" = "$1" ] && printf '%s\\n' "\${line%% *}"
  done
}
fwd() {
  local t
  if [ -z "$c" ]; then pend=$1; return; fi
  if [ "$kind" = group ]; then kill -s "$1" -- "-$c" 2>/dev/null; return; fi
  for t in $(kids "$c"); do kill -s "$1" -- "-$t" 2>/dev/null; done
}
hard() {
  local t
  if [ -z "$c" ]; then pend=KILL; return; fi
  if [ "$kind" = group ]; then kill -s KILL -- "-$c" 2>/dev/null; return; fi
  t=$(kids "$c")
  kill -s KILL "$c" $t 2>/dev/null
}
trap 'fwd INT' INT
trap 'fwd TERM' TERM
trap 'fwd HUP' HUP
trap 'fwd QUIT' QUIT
trap 'hard' USR2
set -m
if [ "$envfd" = 1 ]; then
  "$@" 0<&0 3< <(for v in "\${!__PSE_@}"; do kv=\${!v}; printf -- '--setenv\\0%s\\0%s\\0' "\${kv%%=*}" "\${kv#*=}"; done) &
else
  "$@" 0<&0 &
fi
c=$!
set +m
if [ "$pend" = KILL ]; then hard; elif [ -n "$pend" ]; then fwd "$pend"; fi
while :; do
  wait "$c" 2>/dev/null
  rc=$?
  kill -0 "$c" 2>/dev/null || break
done
wait "$c" 2>/dev/null
r=$?
[ "$r" != 127 ] && rc=$r
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
  opts: { setpriv?: string; kind: SupervisorKind; envFd: boolean },
): string[] {
  return [
    "-c",
    SUPERVISOR,
    "penguin-supervisor",
    opts.setpriv ?? "-",
    opts.kind,
    opts.envFd ? "1" : "0",
    ...job,
  ];
}

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
