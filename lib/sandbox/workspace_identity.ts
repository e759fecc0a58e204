/**
 * The identity of a session's workspace, taken once, when the session starts.
 *
 * The path the user named leads to the directory they meant only while no
 * one renames a directory on the way. Another session whose workspace
 * encloses this one can exchange a parent (`outer/mid`) with a link to
 * another directory, over and over (`renameat2(RENAME_EXCHANGE)`); a
 * session that looked the path up at the wrong moment would take that other
 * directory for its workspace, and every check after would agree with it.
 *
 * So the path is resolved by hand: a link on the way is followed only where
 * no command can have made it (every directory up to it is one this user
 * cannot write, such as `/var/run -> /run` for a user other than root, and
 * "/" itself, for root too);
 * any other link refuses the workspace, naming its real path. Then a shell
 * enters the directory and reports where the directory it is in lies
 * (`pwd -P`) and its device and inode (of `.`): that must be the path just
 * resolved. A swap at any moment makes the two differ (the working
 * directory is the directory entered, whatever path led to it), so the
 * session takes the directory there or refuses; it never takes another one.
 * (penguin's permissions do not let it read `/proc/self/fd`, which would
 * tell the same of an open directory without a process.)
 *
 * @module
 */
import { isAbsolute, join, resolve } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { findSh } from "./_executables.ts";

/** A directory's real path and identity, as recorded by {@linkcode workspaceIdentity}. */
export interface WorkspaceId {
  /** Real (symlink-free) path. */
  path: string;
  /** Device number. */
  dev: number;
  /** Inode number. */
  ino: number;
}

/** Links followed at most while resolving one path (as the kernel allows). */
const MAX_LINKS = 40;
/** Times a path that resolved differently from one look to the next is looked at again. */
const ATTEMPTS = 8;

function currentUid(): number | null {
  try {
    return Deno.uid();
  } catch {
    return null;
  }
}

/**
 * Whether a command of this user could change the entries of the directory
 * `info` describes: root, its owner, or a group- or world-writable mode
 * (this user's groups are not known here: counted as writable).
 */
function writableByUser(info: Deno.FileInfo, uid: number | null): boolean {
  if (uid === null || uid === 0) return true;
  if (info.uid === uid) return true;
  return ((info.mode ?? 0o777) & 0o022) !== 0;
}

/**
 * `path` (absolute) with every link on the way followed, when each lies in
 * directories no command of this user can write; otherwise the problem, in
 * words. Directories only: a file on the way is a problem too.
 */
function resolveTrusted(path: string): { path: string } | { problem: string } {
  const uid = currentUid();
  const queue = path.split("/").filter((c) => c !== "" && c !== ".");
  let cur = "/";
  // Links in "/" itself (`/bin -> usr/bin`, `/tmp -> private/tmp`, `/home -> /data/home`) are
  // followed even for root: no command can write "/", which is never a writable root (a
  // workspace of "/" holds the homes and needs --allow-home-workspace).
  let writable = false;
  let links = 0;
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (name === "..") {
      cur = resolve(cur, "..");
      continue;
    }
    const next = join(cur, name);
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(next);
    } catch (err) {
      if (err instanceof Deno.errors.NotCapable) {
        return {
          problem: `penguin may not look at "${next}": its permission set refuses /proc, /sys ` +
            `and most of /dev`,
        };
      }
      return { problem: `"${next}" does not exist` };
    }
    if (info.isSymlink) {
      if (writable) {
        return {
          problem: `it is reached through the symbolic link "${next}", in a directory this user ` +
            `can write: a command of another session could re-point it while this one starts`,
        };
      }
      if (++links > MAX_LINKS) return { problem: `too many symbolic links on the way` };
      let target: string;
      try {
        target = Deno.readLinkSync(next);
      } catch {
        return { problem: `the symbolic link "${next}" cannot be read` };
      }
      if (isAbsolute(target)) {
        cur = "/";
        writable = false;
      }
      queue.unshift(...target.split("/").filter((c) => c !== "" && c !== "."));
      continue;
    }
    if (!info.isDirectory) return { problem: `"${next}" is not a directory` };
    cur = next;
    if (writableByUser(info, uid)) writable = true;
  }
  return { path: cur };
}

/**
 * A shell enters the directory, then prints where the directory it is in
 * lies (`pwd -P`, the kernel's path of its working directory) and that
 * directory's device and inode (of `.`, not looked up by path again).
 */
const PROBE = 'cd -P -- "$1" || exit 3; exec 3<. || exit 3; ' +
  'if [ -d /proc/self/fd ] && cd -P /proc/self/fd/3 2>/dev/null; then printf "%s\\n" "$PWD"; ' +
  'else pwd -P; fi; stat -c "%d %i" . 2>/dev/null || stat -f "%d %i" .';

/**
 * The same for several directories in one shell: each is entered in turn,
 * `pwd -P` printed (an empty line for one that cannot be entered) and the
 * directory opened on the next descriptor from 3 (`exec N<.`, the working
 * directory itself, not looked up by path again); one `stat` then prints the
 * device and inode of every open one, named by its descriptor.
 */
const PROBE_MANY = `n=3
for d; do
  if cd -P -- "$d" 2>/dev/null && eval "exec $n<."; then
    if [ -d /proc/self/fd ] && cd -P "/proc/self/fd/$n" 2>/dev/null; then printf '%s\\n' "$PWD"
    else pwd -P; fi
  else echo; fi
  n=$((n + 1))
done
i=3 fds=
while [ "$i" -lt "$n" ]; do fds="$fds /dev/fd/$i"; i=$((i + 1)); done
stat -L -c "%n %d %i" $fds 2>/dev/null || stat -L -f "%N %d %i" $fds 2>/dev/null
exit 0`;

/** Directories one {@linkcode PROBE_MANY} shell enters at most (descriptors 3 to 9). */
const PROBE_BATCH = 7;

let probes = 0;

/** How many shells this process has started to pin directories down (for tests). */
export function pinShells(): number {
  return probes;
}

/** The output of `sh -c script sh args…` (an empty PATH but the system's), or undefined when it failed. */
function shell(script: string, args: readonly string[]): string | undefined {
  probes++;
  const sh = findSh();
  if (sh === undefined) return undefined;
  try {
    const out = new Deno.Command(sh, {
      args: ["-c", script, "sh", ...args],
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin" },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    return out.success ? new TextDecoder().decode(out.stdout) : undefined;
  } catch {
    return undefined;
  }
}

/** Where the directory `path` leads to lies, and its identity, from inside it; undefined when it cannot be entered. */
function probe(path: string): { at: string; dev: number; ino: number } | undefined {
  const text = shell(PROBE, [path]);
  if (text === undefined) return undefined;
  const [at, ids] = text.split("\n");
  const [dev, ino] = (ids ?? "").trim().split(" ").map(Number);
  if (!at || !Number.isSafeInteger(dev) || !Number.isSafeInteger(ino)) return undefined;
  return { at, dev: dev!, ino: ino! };
}

/**
 * {@linkcode probe} of each of `paths`, in as few shells as it takes
 * ({@linkcode PROBE_BATCH} a shell); a path holding a line break is probed
 * on its own.
 */
function probeAll(
  paths: readonly string[],
): ({ at: string; dev: number; ino: number } | undefined)[] {
  const out: ({ at: string; dev: number; ino: number } | undefined)[] = [];
  const batch: number[] = [];
  paths.forEach((p, i) => {
    if (paths.length === 1 || p.includes("\n")) out[i] = probe(p);
    else batch.push(i);
  });
  for (let k = 0; k < batch.length; k += PROBE_BATCH) {
    const group = batch.slice(k, k + PROBE_BATCH);
    const lines = (shell(PROBE_MANY, group.map((i) => paths[i]!)) ?? "").split("\n");
    const ids = new Map<string, [number, number]>();
    for (const line of lines.slice(group.length)) {
      const [fd, dev, ino] = line.trim().split(" ");
      const d = Number(dev);
      const n = Number(ino);
      if (fd && Number.isSafeInteger(d) && Number.isSafeInteger(n)) ids.set(fd, [d, n]);
    }
    group.forEach((i, j) => {
      const at = lines[j];
      const id = ids.get(`/dev/fd/${j + 3}`);
      out[i] = at && id ? { at, dev: id[0], ino: id[1] } : undefined;
    });
  }
  return out;
}

/** The real path of `dir` as the kernel resolves it now, for a message; `dir` when unknown. */
function realPathForMessage(dir: string): string {
  try {
    return Deno.realPathSync(dir);
  } catch {
    return dir;
  }
}

/**
 * The directory the absolute path `dir` names, and its identity, taken so
 * that a rename racing the look-up cannot substitute another directory (see
 * the module doc); or the problem, in words: a link on the way a command
 * could have made or re-point, a path that leads elsewhere each time it is
 * looked at, a missing directory.
 */
export function workspaceIdentity(dir: string): WorkspaceId | { problem: string } {
  return workspaceIdentities([dir])[0]!;
}

/**
 * {@linkcode workspaceIdentity} of each of `dirs`, in order, with one shell
 * entering them all (a session's workspace and its other writable roots are
 * pinned down together when it starts).
 */
export function workspaceIdentities(
  dirs: readonly string[],
): (WorkspaceId | { problem: string })[] {
  const out: (WorkspaceId | { problem: string } | undefined)[] = dirs.map(() => undefined);
  const problems = dirs.map(() => "");
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const resolved: { i: number; path: string }[] = [];
    dirs.forEach((dir, i) => {
      if (out[i] !== undefined) return;
      const r = resolveTrusted(resolve(dir));
      // A link seen in a writable directory may be a swap in progress: it counts only if it stays.
      if ("problem" in r) problems[i] = r.problem;
      else resolved.push({ i, path: r.path });
    });
    const seen = probeAll(resolved.map((r) => r.path));
    resolved.forEach(({ i, path }, k) => {
      const s = seen[k];
      if (s === undefined) out[i] = { problem: `"${path}" cannot be entered` };
      else if (s.at === path) out[i] = { path, dev: s.dev, ino: s.ino };
      else {
        problems[i] = `it leads to another directory each time it is looked at (a directory on ` +
          `the way is being renamed)`;
      }
    });
    if (out.every((o) => o !== undefined)) break;
  }
  return out.map((o, i) => o ?? unpinned(dirs[i]!, problems[i]!));
}

/** The problem of `dir`, which could not be pinned down after every attempt. */
function unpinned(dir: string, problem: string): { problem: string } {
  const real = realPathForMessage(dir);
  return {
    problem: `${problem}. Name the directory by its real path${
      real !== resolve(dir) ? ` ("${real}" now)` : ""
    }, or stop what renames it`,
  };
}

/** The real path and identity of directory `dir` now, or undefined when it cannot be taken. */
export function workspaceIdOf(dir: string): WorkspaceId | undefined {
  const id = workspaceIdentity(dir);
  return "problem" in id ? undefined : id;
}

/**
 * The workspace `dir` a session starts with, its real path and identity,
 * taken by {@linkcode workspaceIdentity}. Throws a usage error naming the
 * problem.
 */
export function pinnedWorkspace(dir: string): WorkspaceId {
  const id = workspaceIdentity(dir);
  if ("problem" in id) {
    throw new PenguinError("usage", `Cannot use the workspace "${dir}": ${id.problem}`);
  }
  return id;
}
