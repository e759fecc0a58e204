/**
 * The sandbox's own mounts inside its roots, watched by its init while a command runs.
 *
 * Every protection a plan makes inside a root is a mount: the read-only
 * stand-ins of a missing `.git` and `penguin.jsonc`, the read-only binds of
 * git's hooks and settings, the hiding of a data root. Another penguin
 * session whose workspace holds the same directory, and whose sandbox started
 * before the mount existed, sees a plain entry of its own writable workspace
 * there; since Linux 3.18 it may rename or remove a dentry that is a mount
 * point only in another mount namespace, and the kernel then detaches that
 * mount (and the mounts below it) in every namespace. A command running
 * meanwhile went on without the protection: it made a real `.git` with
 * `core.fsmonitor` in place of the stand-in, which the user's own `git status`
 * ran (attack round 28 e23).
 *
 * So penguin passes the init the mount points its plan makes inside the roots
 * (`__PSW_<n>`, as `/proc/self/mountinfo` writes them, inert data like the
 * command's environment: `_mount_watch_env.ts`) and the init checks its mount table for each of
 * them: before it starts a command (a mount already gone: the command does not
 * run) and every round of its guard while the command runs (one gone: every
 * process of the command is killed, as for too many processes), by the mount
 * IDs found at the start, so a command's own rename of a directory holding
 * one does not count. Each round
 * reads the table and compares it with the last one that held first, so a
 * table that did not change costs one read.
 *
 * @module
 */
/** `path` as `/proc/self/mountinfo` writes it: space, tab, newline and backslash as octal escapes. */
export function mountinfoPath(path: string): string {
  return path.replace(
    /[ \t\n\\]/g,
    (c) => "\\" + c.charCodeAt(0).toString(8).padStart(3, "0"),
  );
}

/** The line a command stopped because a mount of its sandbox was removed gets in its output. */
export function mountGoneMessage(path: string, started: boolean): string {
  return `[penguin: the sandbox's mount at ${path} was removed from outside (by a command of ` +
    `another penguin session whose workspace holds it, or on the host); ` +
    (started ? "everything the command started was killed]" : "the command did not run]");
}

/**
 * Bash: collect the watched mount points (`__PSW_<n>`) into `__PW`, before the init rebuilds the
 * command's environment (which unsets them).
 */
export const WATCH_FROM_DATA = `__PW=() __PWI=() __PML= __PWG=
for __PSV in "\${!__PSW_@}"; do __PW+=("\${!__PSV}"); done`;

/**
 * Bash function `mheld`: returns 0 when every watched mount is in the mount table, else 1 with
 * the first one missing in `__PWG`. The first call finds each watched mount point (`__PW`) by its
 * path and notes its mount ID (`__PWI`); later calls look for those IDs, wherever the mounts now
 * lie: a command's own `mv vendor v2` moves the mounts below with the directory, and must not
 * count as their removal. A table equal to the last one that held is not looked through again.
 */
export const MOUNTS_HELD = `mheld() {
  [ "\${#__PW[@]}" -gt 0 ] || return 0
  local l x t i=0
  local -a m
  local -A s
  mapfile -t m </proc/self/mountinfo
  printf -v t '%s\\n' "\${m[@]}"
  [ "$t" != "$__PML" ] || return 0
  if [ "\${#__PWI[@]}" -eq 0 ]; then
    for l in "\${m[@]}"; do
      x=\${l#* * * * }
      s[\${x%% *}]=\${l%% *}
    done
    for x in "\${__PW[@]}"; do
      [ -n "\${s[$x]-}" ] || { __PWG=$x; __PWI=(); return 1; }
      __PWI+=("\${s[$x]}")
    done
  else
    for l in "\${m[@]}"; do s[\${l%% *}]=1; done
    for x in "\${__PWI[@]}"; do
      [ -n "\${s[$x]-}" ] || { __PWG=\${__PW[i]}; return 1; }
      i=$((i + 1))
    done
  fi
  __PML=$t
}`;
