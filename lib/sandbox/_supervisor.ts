/**
 * The two small bash programs children run under, as text.
 *
 * The wrapper runs inside every sandbox. The supervisor is the process Deno
 * spawns on the supervised path: a command without a sandbox (`off`), under
 * Seatbelt, sharing penguin's terminal, or under bubblewrap when the direct
 * path (`_direct.ts`, bwrap as penguin's own child) is not available. It
 * starts the job (bwrap, sandbox-exec, or the command itself) in its own
 * process group, forwards
 * SIGINT (sent as SIGUSR1), SIGQUIT (as SIGALRM), SIGTERM and SIGHUP to the
 * sandboxed command's process group (on Linux only when penguin's own
 * signaller, `_signaller.ts`, did not find the command), hard-kills
 * everything on SIGUSR2, and
 * exits with the job's status. It ignores a real SIGINT, SIGQUIT and the
 * terminal stop signals: unless it shares penguin's terminal (then it has
 * a session of its own) it is in penguin's process group, which a terminal
 * signals as a whole, and what reaches the command is penguin's decision.
 * It traps them (`:`) while it starts the job, so the job gets their default
 * actions, and ignores them (`''`) from then on. Ignored, not trapped: bash
 * 5.2 loses a child's exit status when a trapped signal lands in the
 * `waitpid` that reaps it (the `wait` builtin jumps out after reaping, before
 * recording), and `wait` then returns -1, which `exit` turns into 255. The
 * signals penguin forwards must stay trapped; penguin sends them only to stop
 * a command, never while it ends on its own.
 *
 * It exists because Deno's production permissions can signal only
 * the direct child (`Deno.kill` needs unscoped `--allow-run`) and cannot read
 * `/proc/<pid>` (needs `--allow-all`), while bubblewrap neither forwards
 * signals nor exposes the command's host PID. Under bubblewrap the
 * sandbox's init is the wrapper (PID 1 of the namespace, bwrap's only
 * child), and the command's process group is the wrapper's; the
 * supervisor finds it in `/proc`. If `setpriv` supports `--pdeathsig`, the
 * supervisor re-executes itself under it so it dies when penguin dies (and
 * bwrap's `--die-with-parent` takes the sandbox down with it).
 *
 * The wrapper runs as the first program *inside* the sandbox. It closes
 * every descriptor above 2, applies the process limit, sets the command's
 * environment, reports readiness on stderr (the control channel) when
 * asked, merges stderr into stdout, and runs the command: as its child when
 * it is the sandbox's init, else by exec. Nothing from the model is ever
 * spliced into either script: commands travel as separate argv entries.
 *
 * Each command costs as few processes as this allows (on some virtual
 * machines a fork or exec costs 10 ms): no process exists only to feed
 * data to bwrap (the environment travels as inert variables, the seccomp
 * filter comes from a file when one is safe, see `_seccomp_file.ts`), and
 * the wrapper takes the place of bwrap's own init.
 *
 * @module
 */

import { GUARD_IGNORED, PROC_GUARD } from "./_proc_guard.ts";
import { mountGoneMessage, WATCH_FROM_DATA } from "./_mount_watch.ts";
import { JOIN_CGROUP } from "./_pids_cgroup.ts";

/** The line the wrapper prints on the control channel once the sandbox is set up. */
export const READY = "penguin-sandbox: ready";

/** How the supervisor reaches the command's process group. */
export type SupervisorKind =
  /** bubblewrap: signal the group of the outer bwrap's child (the sandbox init). */
  | "ns"
  /** no PID namespace: signal the job's own process group. */
  | "group";

/**
 * Bash function `kids <pid>`: the PIDs whose parent is `<pid>`, one a line,
 * found by reading every `/proc/<n>/stat` (where the kernel has no
 * `/proc/<pid>/task/<pid>/children`).
 */
export const KIDS = `kids() {
  local f line rest
  for f in /proc/[0-9]*/stat; do
    read -r line 2>/dev/null <"$f" || continue
    rest=\${line##*) }; rest=\${rest#* }
    [ "\${rest%% *}" = "$1" ] && printf '%s\\n' "\${line%% *}"
  done
}`;

/**
 * bash functions (with {@linkcode KIDS}): `initof PID` sets `init` to the
 * PID of bwrap `PID`'s first child, the sandbox's init (from the kernel's
 * children list, else a scan of `/proc`); false when it has none.
 */
export const INIT_OF = `${KIDS}
initof() {
  if [ -e "/proc/$1/task/$1/children" ]; then
    read -r init 2>/dev/null <"/proc/$1/task/$1/children"
  else
    init=$(kids "$1")
  fi
  init=\${init%%[!0-9]*}
  [ -n "$init" ]
}`;

/**
 * bash (with {@linkcode INIT_OF}), the checks of a signaller run by penguin:
 * with `b` bwrap's host PID, exits 3 unless bwrap is still the signaller's
 * parent's (penguin's) child and not a zombie (gone, its PID possibly
 * reused), 4 when bwrap has no init (yet, or any more) or the init found is
 * not bwrap's child; else `init` is the init's host PID. Uses `line` and
 * the positional parameters.
 */
export const CHECKED_INIT = `${INIT_OF}
read -r line 2>/dev/null <"/proc/$b/stat" || exit 3
set -- \${line##*) }
[ "$2" = "$PPID" ] && [ "$1" != Z ] || exit 3
initof "$b" || exit 4
read -r line 2>/dev/null <"/proc/$init/stat" || exit 4
set -- \${line##*) }
[ "$2" = "$b" ] || exit 4`;

/**
 * bash, run first inside a sandbox (by the wrapper and the launcher): close
 * every descriptor above 2 (listed from `/proc/$$/fd`, else `/dev/fd`).
 */
export const CLOSE_FDS = `d=/proc/$$/fd
[ -d "$d" ] || d=/dev/fd
for f in "$d"/*; do
  n=\${f##*/}
  case $n in 0|1|2|*[!0-9]*) ;; *) eval "exec $n>&-" ;; esac
done
unset d f n`;

/**
 * bash, run inside a sandbox (by the wrapper and the launcher): build the
 * command's environment from the inert `__PSE_<n>=NAME=VALUE` variables
 * {@linkcode envAsData} made, unsetting every variable the shell was started
 * with (so nothing of the starter's own environment is left) and exporting
 * the pairs.
 */
export const ENV_FROM_DATA = `mapfile -d '' __PSA </proc/self/environ
for __PSV in "\${__PSA[@]}"; do
  case $__PSV in __PSE_*) ;; *) unset "\${__PSV%%=*}" 2>/dev/null ;; esac
done
unset __PSA
for __PSV in "\${!__PSE_@}"; do
  __PSW=\${!__PSV}
  unset "$__PSV"
  export "\${__PSW%%=*}=\${__PSW#*=}"
done
unset __PSV __PSW`;

/** The fd the workspace directory reaches bwrap on (`--bind-fd 5`), on both launch paths. */
export const WORKSPACE_FD = 5;

/**
 * The fds the other writable roots and the reveals reach bwrap on, in order: those `sh`
 * (dash) can name (one digit; 3, 4 and 7 carry the seccomp filter and the
 * setup log's stderr), then more that only bash can, so a plan with more
 * than {@linkcode DIRECT_ROOT_FDS} of them takes the supervised path.
 */
export const ROOT_FDS: readonly number[] = [
  6,
  8,
  9,
  ...Array.from({ length: 202 }, (_, i) => 10 + i),
];

/**
 * The fds the other writable roots and the reveals reach bwrap on from the direct path's
 * `sh` (`_direct.ts`), which can name one digit only: those of
 * {@linkcode ROOT_FDS} it can, then 4 and 7, which carry the seccomp filter
 * and the setup log's stderr on the supervised path only (the direct path
 * has no setup log, and its filter is on 3). A plan with more takes
 * {@linkcode DIRECT_MORE_FDS} with bash as its `sh`. The wrapper closes them all inside the sandbox.
 */
export const DIRECT_ROOT_FDS: readonly number[] = [6, 8, 9, 4, 7];

/** {@linkcode DIRECT_ROOT_FDS}, then fds from 10 on, which bash (not dash) can name. */
export const DIRECT_MORE_FDS: readonly number[] = [
  ...DIRECT_ROOT_FDS,
  ...Array.from({ length: 200 }, (_, i) => 10 + i),
];

/** A writable root the launcher opens on `fd` and checks to be inode `ino` before bwrap binds it. */
export interface PinnedRoot {
  fd: number;
  path: string;
  ino: number;
}

/**
 * A path shown read-only (a plan's reveal) the launcher opens on `fd`, checking that it is a
 * `kind` at `path` with no link on the way, before bwrap binds it.
 */
export interface PinnedReveal {
  fd: number;
  path: string;
  kind: "dir" | "file";
}

/** What a launcher opens and checks for bwrap's `--bind-fd` and `--ro-bind-fd`. */
export type PinnedPath = PinnedRoot | PinnedReveal;

/**
 * The launcher arguments for `pins`: their count, then fd, path and, for a root its inode,
 * for a reveal `d` or `f` (see {@linkcode WS_OPEN}).
 */
export function pinnedRootArgs(pins: readonly PinnedPath[]): string[] {
  return [
    String(pins.length),
    ...pins.flatMap((p) => [
      String(p.fd),
      p.path,
      "ino" in p ? String(p.ino) : p.kind === "dir" ? "d" : "f",
    ]),
  ];
}

/**
 * sh functions (dash and bash alike, builtins only): `rootopen FD PATH INO`
 * opens directory PATH as fd FD and checks that the directory opened is
 * inode INO (from `/proc/self/fdinfo/FD`; on kernels before 5.14, which
 * have no `ino:` there, by comparing it with PATH), else says so on stderr
 * and fails; `wsopen PATH INO` does that for the workspace, on fd
 * {@linkcode WORKSPACE_FD}. bwrap then binds each
 * descriptor, so the directory checked is the one bound whatever happens
 * to PATH meanwhile. penguin has checked the device and inode of PATH just
 * before (`plan.ts`).
 *
 * With `d` or `f` for INO, PATH is a path shown read-only (a reveal), which
 * may lie in a directory another session's model can write: a directory is
 * entered (`cd -P`, which never blocks on a FIFO) and opened as `.`, and the
 * kernel's path of the descriptor opened (`cd -P /proc/self/fd/N`, `$PWD`)
 * must be PATH. bash sets `$PWD` from its own look at the name, before its
 * `chdir`: a directory swapped for a link in between passed a check of the
 * name alone (attack round 23 concgit break 1); the descriptor's path is
 * the kernel's, whatever the shell. A file (`f`) is one penguin copied into
 * its private run directory (`_shown_copies.ts`): its directory is checked
 * that way, then the file opened by its name there, which must not be a
 * link and must be the file opened (`-ef`). Anything else refuses the
 * command: what is bound is what lies at PATH, never what a link made
 * meanwhile leads to.
 */
export const WS_OPEN = `revopen() {
  if [ "$3" = d ]; then
    cd -P -- "$2" 2>/dev/null && [ "$PWD" = "$2" ] && eval "exec $1<." &&
      cd -P "/proc/self/fd/$1" 2>/dev/null && [ "$PWD" = "$2" ] && cd / && return 0
  else
    rd=\${2%/*} rn=./\${2##*/}
    cd -P -- "\${rd:-/}" 2>/dev/null && [ "$PWD" = "\${rd:-/}" ] && [ -f "$rn" ] && [ ! -h "$rn" ] &&
      eval "exec $1<\\"\\$rn\\"" && [ ! -h "$rn" ] && [ "$rn" -ef "/proc/self/fd/$1" ] && cd / && return 0
  fi
  cd /
  rw=file
  [ "$3" = d ] && rw=directory
  printf '%s\\n' "penguin: \\"$2\\", shown read-only to commands, is no longer the $rw the plan checked (it or a directory on its way was renamed or replaced by a link); the command did not run" >&2
  return 1
}
rootopen() {
  case $1 in *[!0-9]*|'') return 1 ;; esac
  case $3 in d|f) revopen "$@"; return ;; esac
  eval "exec $1<\\"\\$2\\"" || return 1
  wi=
  while read -r wk wv; do [ "$wk" = ino: ] && wi=$wv; done </proc/self/fdinfo/$1
  if [ -z "$wi" ] && [ "/proc/self/fd/$1" -ef "$2" ]; then wi=$3; fi
  [ "$wi" = "$3" ] && return 0
  if [ "$1" = ${WORKSPACE_FD} ]; then ww="the workspace"; else ww="the writable root"; fi
  printf '%s\\n' "penguin: $ww \\"$2\\" is no longer the directory the session started in (it or one of its parent directories was renamed or replaced by a link); the command did not run" >&2
  return 1
}
wsopen() {
  rootopen ${WORKSPACE_FD} "$1" "$2"
}`;

/**
 * Supervisor. `$1` setpriv path or `-`, `$2` kind (`ns`|`group`), `$3` the
 * seccomp filter for bwrap's `--seccomp 4`: `0` none, `1` from the `\xHH`
 * escapes in `__PSF` (one process substitution), or the absolute path of a
 * file holding it (opened without a fork); `$4` the setup log or `-`; then
 * the roots to open and check for bwrap's `--bind-fd` (see
 * {@linkcode WS_OPEN}, {@linkcode pinnedRootArgs}): their count, then fd,
 * path and inode of each; then the job argv.
 *
 * With a setup log (bubblewrap sharing penguin's stderr, where there is no
 * control channel), the job starts with its stderr on that file and the
 * real stderr on fd 7: whatever bwrap says while it sets up lands in the
 * log, and the wrapper, once running, writes {@linkcode READY} there and
 * takes its stderr back from fd 7. A log without the ready line after the
 * job ended means the sandbox never started (the command did not run).
 *
 * Under bubblewrap (kind `ns`) the sandbox's init is the wrapper, PID 1 of
 * the namespace (`--as-pid-1`), and bwrap's only child: the supervisor
 * looks it up in `/proc/<bwrap>/task/<bwrap>/children` when it first needs
 * it (and checks that it is still bwrap's child before every signal, so a
 * reused PID is never signalled). Signals go to its process group, which
 * holds the command (the init itself ignores them: the kernel drops
 * signals from outside a PID namespace that its init has no handler for),
 * and a hard kill SIGKILLs the init: the kernel then kills every process of
 * the namespace. bwrap waits for its child, and the kernel lets a
 * namespace's init finish exiting only after every other process of the
 * namespace is reaped, so bwrap (and after it the supervisor) exits only
 * once nothing the command started is left, fork bombs included, however
 * long the kernel takes on a loaded machine.
 *
 * This teardown ends a fork bomb with its command; while the command runs,
 * the process-count guard of `_proc_guard.ts` holds it to the limit when
 * penguin runs as root (the kernel exempts uid 0 from RLIMIT_NPROC), and
 * where penguin can make a pids cgroup (`_pids_cgroup.ts`: root, a pids
 * hierarchy), the script joins it first ({@linkcode JOIN_CGROUP}), so the
 * kernel also refuses forks past what this penguin's commands may hold.
 */
export const SUPERVISOR = `${JOIN_CGROUP}
if [ "$1" != - ]; then
  sp=$1; shift
  if [ "$1" = ns ]; then ds=KILL; else ds=USR2; fi
  exec "$sp" --pdeathsig "$ds" -- "$BASH" -c "$BASH_EXECUTION_STRING" "$0" - "$@"
fi
shift
kind=$1 filter=$2 log=$3 nr=$4
shift 4
c= pend= init= ipp=
${INIT_OF}
${WS_OPEN}
ours() {
  local line
  [ -n "$init" ] || initof "$c" || return 1
  read -r line 2>/dev/null <"/proc/$init/stat" || return 1
  set -- \${line##*) }
  [ "$2" = "$c" ] && [ "$1" != Z ]
}
fwd() {
  if [ -z "$c" ]; then pend=$1; return; fi
  if [ "$kind" = group ]; then kill -s "$1" -- "-$c" 2>/dev/null; return; fi
  if ours && kill -s "$1" -- "-$init" 2>/dev/null; then return; fi
  kill -s "$1" "$c" 2>/dev/null
}
hard() {
  if [ -z "$c" ]; then pend=KILL; return; fi
  if [ "$kind" = group ]; then kill -s KILL -- "-$c" 2>/dev/null; return; fi
  if ours; then kill -s KILL "$init" 2>/dev/null; else kill -s KILL "$c" 2>/dev/null; fi
}
trap 'fwd INT' USR1
trap 'fwd QUIT' ALRM
trap 'fwd TERM' TERM
trap 'fwd HUP' HUP
trap 'hard' USR2
trap : INT QUIT TSTP TTIN TTOU
case $filter in
0) ;;
1) exec 4< <(printf '%b' "$__PSF") ;;
*) exec 4<"$filter" ;;
esac
unset __PSF
rfds=
while [ "$nr" -gt 0 ]; do
  rootopen "$1" "$2" "$3" || exit 126
  rfds="$rfds $1"
  shift 3
  nr=$((nr - 1))
done
# bash reports a job that has ended ("[1]+ Exit 1 ...") on its own stderr, which is the
# sandbox's setup output: from here on that goes nowhere, and the command gets the original (60).
exec 60>&2 2>/dev/null
set -m
if [ "$log" = - ]; then "$@" 0<&0 2>&60 60>&- & else "$@" 0<&0 7>&60 2>"$log" 60>&- & fi
c=$!
set +m
exec 60>&-
trap '' INT QUIT TSTP TTIN TTOU
exec 4<&-
for f in $rfds; do eval "exec $f<&-"; done
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
 * stderr and then merge stderr into stdout, `2` to print it on stderr (the
 * supervisor's setup log) and then take stderr from fd 7, `$3` `1` to stay as the
 * sandbox's init (run the command as a child, wait for it, exit with its
 * status; bash's own job report, e.g. `Terminated`, is discarded) or `0`
 * to exec the command, then the command argv.
 *
 * As the init, the wrapper also builds the command's environment: it
 * arrives as inert `__PSE_<n>=NAME=VALUE` variables (see
 * {@linkcode envAsData}) through bwrap; the wrapper unsets every variable
 * it was started with and exports the pairs, so nothing of the
 * supervisor's own environment reaches the command, and no value shows on
 * a command line.
 *
 * As the init with a process limit, it starts the command as its
 * background child (SIGINT and SIGQUIT restored: bash ignores them in
 * background jobs; the wrapper's stdin) and, until the command ends, runs
 * the process-count guard of `_proc_guard.ts` itself (RLIMIT_NPROC does not
 * hold for root; only the init cannot be stopped by the command), then
 * exits with the command's status: SIGKILL's (137) when the guard tripped.
 * Before the command is started the init ignores the signals bash would end
 * on (`GUARD_IGNORED`, SIGHUP, SIGTERM, SIGUSR1, SIGALRM), which the
 * command's subshell restores: the supervisor signals the init's process
 * group, and the command may signal the init, also at once.
 */
export const WRAPPER = `if [ "$2" = 2 ]; then printf '%s\\n' '${READY}' >&2; exec 2>&7 7>&-; fi
${CLOSE_FDS}
if [ "$1" != - ]; then ulimit -u "$1" 2>/dev/null; fi
if [ "$3" = 1 ]; then
${WATCH_FROM_DATA}
${ENV_FROM_DATA}
fi
if [ "$2" = 1 ]; then printf '%s\\n' '${READY}' >&2; exec 2>&1; fi
if [ "$3" = 1 ]; then
  l=$1
  shift 3
  exec 3>&2 2>/dev/null
${PROC_GUARD}
  if ! mheld; then printf '%s\\n' "${mountGoneMessage("$__PWG", false)}"; exit 126; fi
  if [ "$l" = - ]; then "$@" 2>&3 3>&-; exit; fi
  exec 9<> <(:)
  trap '' HUP TERM USR1 ALRM ${GUARD_IGNORED}
  ( trap - INT QUIT HUP TERM USR1 ALRM ${GUARD_IGNORED}; exec "$@" ) 0<&0 2>&3 3>&- 9<&- &
  c=$!
  guard "$l" "$c"
  wait "$c"
  exit
fi
shift 3
exec "$@"
`;

/** The argv of the wrapper running `command` (bash path first). */
export function wrapperArgv(
  bash: string,
  command: string[],
  opts: {
    maxProcesses?: number;
    /** `true`: ready line, then stderr merged into stdout; `"log"`: ready line into the setup log. */
    control: boolean | "log";
    init?: boolean;
  },
): string[] {
  const limit = opts.maxProcesses !== undefined && opts.maxProcesses > 0
    ? String(opts.maxProcesses)
    : "-";
  return [
    bash,
    "-c",
    WRAPPER,
    "penguin-sandbox",
    limit,
    opts.control === "log" ? "2" : opts.control ? "1" : "0",
    opts.init ? "1" : "0",
    ...command,
  ];
}

/** The arguments after the bash binary that run `job` under the supervisor. */
export function supervisorArgs(
  job: string[],
  opts: {
    setpriv?: string | undefined;
    kind: SupervisorKind;
    /** Feed bwrap's `--seccomp 4`: from `__PSF` (`true`) or from this file (a path). */
    seccomp?: boolean | string | undefined;
    /** Open and check these roots (the workspace on fd {@linkcode WORKSPACE_FD}) for bwrap's `--bind-fd`. */
    roots?: readonly PinnedPath[] | undefined;
    /** Start the job with its stderr on this file until the wrapper reports ready (see {@linkcode SUPERVISOR}). */
    setupLog?: string | undefined;
  },
): string[] {
  const seccomp = opts.seccomp === undefined || opts.seccomp === false
    ? "0"
    : opts.seccomp === true
    ? "1"
    : opts.seccomp;
  return [
    "-c",
    SUPERVISOR,
    "penguin-supervisor",
    opts.setpriv ?? "-",
    opts.kind,
    seccomp,
    opts.setupLog ?? "-",
    ...pinnedRootArgs(opts.roots ?? []),
    ...job,
  ];
}

/**
 * The program and arguments that start the supervisor. With `direct`, the
 * supervisor is started by `setpriv` itself (penguin may run that binary):
 * `setpriv --pdeathsig <sig> -- bash -c SUPERVISOR …`, one bash fewer than
 * bash re-executing itself under setpriv (about 2 ms a command on a 2-core
 * VM). The death signal is the one the script's own re-exec would choose.
 */
export function supervisorCommand(
  bash: string,
  job: string[],
  opts: Parameters<typeof supervisorArgs>[1] & { direct?: boolean },
): { command: string; args: string[] } {
  if (opts.setpriv === undefined || !opts.direct) {
    return { command: bash, args: supervisorArgs(job, opts) };
  }
  const sig = opts.kind === "ns" ? "KILL" : "USR2";
  return {
    command: opts.setpriv,
    args: ["--pdeathsig", sig, "--", bash, ...supervisorArgs(job, { ...opts, setpriv: undefined })],
  };
}

/** The fd the supervisor feeds the seccomp filter on (`--seccomp 4`). */
export const SECCOMP_FD = 4;

/** The supervisor environment that carries `env` as inert `__PSE_<n>` data for the wrapper. */
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
