/**
 * The launcher: a small bash program that runs as the init (PID 1) of a
 * bubblewrap sandbox kept for a session, and starts each command penguin
 * sends it, one at a time, in place of a new sandbox per command
 * (`_pool.ts` keeps the sandboxes; `_supervisor.ts` has the per-command
 * wrapper it replaces).
 *
 * It is started by bwrap exactly as the wrapper is (same mounts, seccomp
 * filter, namespaces, `no_new_privs`), so every command it starts inherits
 * them; nothing is ever added from outside the sandbox. It applies the
 * process limit and builds the commands' environment once, as the wrapper
 * does, reports {@linkcode READY} on stderr (then stderr goes to
 * `/dev/null`), and then reads requests from its stdin, each a list of
 * NUL-terminated fields (never shell text):
 *
 *     <sync token>  (omitted before the first request)
 *     <nonce> <next sync token> <cwd> <stdin: 1 piped, 0 null> <argc> <argv…>
 *
 * Before each request it compares its mount table (`/proc/self/mountinfo`)
 * with the one it started with and exits (124, before acknowledging, so the
 * command is started in a new sandbox) when they differ: a mount point
 * renamed or removed from outside is detached in every other mount namespace
 * (the kernel does so lazily since Linux 3.18), and a kept sandbox would
 * otherwise go on without that protection while its plan still looks the
 * same. It also checks that every mount its plan made inside the roots is
 * in the table (`_mount_watch.ts`): one detached before the launcher read
 * its table is missing from both.
 *
 * For each request it prints `<nonce>` and a newline on stdout (the start
 * acknowledgement: signals may now be sent), starts the command in a process
 * group of its own, in `cwd`, with stderr merged into stdout (its own
 * stdout, read by penguin) and no other descriptor, waits for it, kills
 * every other process of the PID namespace (`kill -KILL -1`, which spares
 * only the init) until `/proc` shows none, and only then prints
 * `<nonce> <exit status>` and a newline: the end of the command's output
 * and its status. A command's stdin is the launcher's stdin; input it left
 * unread is skipped up to the next request's sync token, which only the
 * previous request carried.
 *
 * Why a command cannot forge the end of its output, steal a request or keep
 * a process past its status: the launcher is not dumpable. bwrap starts it
 * from a copy of bash that nobody may read (mode 0111, {@linkcode launcherBinary}),
 * and the kernel marks a process that executed an unreadable file
 * non-dumpable (measured, as root and as another user): its
 * `/proc/1/{fd,mem,environ}` are closed to the commands and `ptrace` is
 * refused, so the nonces and sync tokens, which exist only in its memory
 * and in the pipe it has already read, stay secret. It refuses to run (exit
 * 125, before the ready line) when its binary is readable or
 * `fs.suid_dumpable` is 1 (then the mark would not be set).
 *
 * With a process limit, the launcher runs the process-count guard of
 * `_proc_guard.ts` itself while each command runs (RLIMIT_NPROC does not
 * hold for root): as the namespace's init it cannot be stopped or killed
 * by the command. A command the guard stopped reports SIGKILL's status.
 * The launcher also ignores the other signals bash would end on
 * (`GUARD_IGNORED`) from its start; each command's subshell restores them
 * before it runs the command. (Restored in the launcher itself between the
 * fork and the command, they left a moment in which a command that signalled
 * the init at once ended it, and the kept sandbox with it.)
 *
 * Signals: penguin signals the init from outside (`LAUNCHER_SIGNALLER`),
 * as SIGUSR1 (for SIGINT), SIGALRM (SIGQUIT), SIGTERM and SIGHUP; while a
 * command runs the launcher forwards them to its process group, between
 * commands it ignores them. The hard kill SIGKILLs the init, which ends the
 * whole sandbox (the next command gets a new one).
 *
 * @module
 */
import { join } from "node:path";
import { CHECKED_INIT, CLOSE_FDS, ENV_FROM_DATA, READY } from "./_supervisor.ts";
import { ownProcessDir } from "./_shown_copies.ts";
import { GUARD_IGNORED, PROC_GUARD } from "./_proc_guard.ts";
import { WATCH_FROM_DATA } from "./_mount_watch.ts";

export { READY };

/** Where the launcher binary is bound inside the sandbox (read-only; bwrap's own `/dev` tmpfs). */
export const LAUNCHER_PATH = "/dev/.penguin-launcher";

/**
 * The launcher. `$1` RLIMIT_NPROC or `-`, `$2` its own binary's path inside
 * the sandbox (checked to be unreadable).
 */
export const LAUNCHER = `${CLOSE_FDS}
sd=
read -r sd 2>/dev/null </proc/sys/fs/suid_dumpable
if [ -r "$2" ] || [ "$sd" = 1 ]; then
  printf '%s\\n' "penguin-launcher: this process would be dumpable (its binary is readable or fs.suid_dumpable is 1)" >&2
  exit 125
fi
unset sd
if [ "$1" != - ]; then ulimit -u "$1" 2>/dev/null; fi
${WATCH_FROM_DATA}
${ENV_FROM_DATA}
exec 9<> <(:)
mnt() { local -a l; mapfile -t l </proc/self/mountinfo; printf -v "$1" '%s\\n' "\${l[@]}"; }
mnt mounts
trap '' USR1 ALRM TERM HUP ${GUARD_IGNORED}
printf '%s\\n' '${READY}' >&2
exec 2>/dev/null
c= pend= hit= tok= f= nonce= cwd= inp= n= rc= r=
${PROC_GUARD}
fwd() {
  hit=1
  if [ -z "$c" ]; then pend=$1; else kill -s "$1" -- "-$c" 2>/dev/null; fi
}
others() {
  local p
  for p in /proc/[0-9]*; do [ "$p" = /proc/1 ] || return 0; done
  return 1
}
while :; do
  if [ -n "$tok" ]; then
    while :; do
      IFS= read -r -d '' f || exit 0
      case $f in *"$tok") break ;; esac
    done
  fi
  IFS= read -r -d '' nonce || exit 0
  IFS= read -r -d '' tok || exit 0
  IFS= read -r -d '' cwd || exit 0
  IFS= read -r -d '' inp || exit 0
  IFS= read -r -d '' n || exit 0
  case $n in ''|*[!0-9]*) exit 125 ;; esac
  a=()
  while [ "$n" -gt 0 ]; do
    IFS= read -r -d '' f || exit 0
    a+=("$f")
    n=$((n - 1))
  done
  case $nonce in ''|*[!0-9a-f]*) exit 125 ;; esac
  mnt now
  [ "$now" = "$mounts" ] || exit 124
  mheld || exit 124
  pend= c=
  trap 'fwd INT' USR1
  trap 'fwd QUIT' ALRM
  trap 'fwd TERM' TERM
  trap 'fwd HUP' HUP
  printf '%s\\n' "$nonce"
  set -m
  if [ "$inp" = 1 ]; then
    ( trap - ${GUARD_IGNORED}; unset OLDPWD; cd -P -- "$cwd" 2>/dev/null || { printf '%s\\n' "penguin: cannot enter the directory $cwd"; exit 126; }; exec "\${a[@]}" ) 2>&1 9<&- &
  else
    ( trap - ${GUARD_IGNORED}; unset OLDPWD; cd -P -- "$cwd" 2>/dev/null || { printf '%s\\n' "penguin: cannot enter the directory $cwd"; exit 126; }; exec "\${a[@]}" ) 2>&1 9<&- </dev/null &
  fi
  c=$!
  set +m
  if [ -n "$pend" ]; then fwd "$pend"; fi
  if [ "$1" != - ]; then guard "$1" "$c"; fi
  while :; do
    hit=
    wait "$c"
    rc=$?
    [ -n "$hit" ] || break
  done
  trap '' USR1 ALRM TERM HUP
  c=
  while others; do
    kill -s KILL -1 2>/dev/null
    read -r -t 0.002 -u 9 f
  done
  unset a
  printf '%s %s\\n' "$nonce" "$rc"
done
`;

/** The launcher's argv inside the sandbox. */
export function launcherArgv(maxProcesses: number | undefined): string[] {
  const limit = maxProcesses !== undefined && maxProcesses > 0 ? String(maxProcesses) : "-";
  return [LAUNCHER_PATH, "-c", LAUNCHER, "penguin-launcher", limit, LAUNCHER_PATH];
}

/**
 * The signaller of a launcher's sandbox: `$1` bwrap's host PID, `$2` the
 * signal to send the init (`USR1`, `ALRM`, `TERM`, `HUP`, or `KILL` for the
 * hard kill). Exits as `_direct.ts`'s signaller does: 0 sent, 3 bwrap is no
 * longer penguin's child, 4 bwrap has no init.
 */
export const LAUNCHER_SIGNALLER = `b=$1 sig=$2 line= init=
${CHECKED_INIT}
kill -s "$sig" "$init"
`;

let binary: Promise<string | undefined> | undefined;

/**
 * The launcher binary: a copy of `bash` (the file at `bash`) that nobody may
 * read (mode 0111), made once per process in its own directory of the
 * private run directory (hidden from every sandbox, named for this process
 * alone: `_shown_copies.ts` `ownProcessDir`). Copies shared between
 * processes were taken as they were found, judged by size, owner and mode:
 * a model that made a later penguin's run directory before it was first
 * used planted its own program there, which then ran as the init of every
 * sandbox of that penguin (attack round 25 concgit c21). Undefined when none
 * can be made.
 */
export function launcherBinary(bash: string): Promise<string | undefined> {
  binary ??= makeBinary(bash);
  binary.then((b) => {
    if (b === undefined) binary = undefined;
  });
  return binary;
}

async function makeBinary(bash: string): Promise<string | undefined> {
  try {
    const src = await Deno.stat(bash);
    if (!src.isFile) return undefined;
    const dir = await ownProcessDir();
    const path = join(dir, "launcher-bash");
    // Copied beside and renamed into place: no sandbox starts half a copy.
    const tmp = join(dir, `.launcher-${crypto.randomUUID()}`);
    await Deno.copyFile(bash, tmp);
    await Deno.chmod(tmp, 0o111);
    await Deno.rename(tmp, path).catch(async (e) => {
      await Deno.remove(tmp).catch(() => {});
      throw e;
    });
    const info = await Deno.lstat(path);
    const uid = Deno.uid();
    return info.isFile && info.size === src.size && (uid === null || info.uid === uid) &&
        ((info.mode ?? 0) & 0o7777) === 0o111
      ? path
      : undefined;
  } catch {
    return undefined;
  }
}
