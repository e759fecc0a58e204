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
    } catch {
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
const PROBE = 'cd -P -- "$1" || exit 3; pwd -P; stat -c "%d %i" . 2>/dev/null || stat -f "%d %i" .';

/** Where the directory `path` leads to lies, and its identity, from inside it; undefined when it cannot be entered. */
function probe(path: string): { at: string; dev: number; ino: number } | undefined {
  try {
    const out = new Deno.Command("sh", {
      args: ["-c", PROBE, "sh", path],
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin" },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    if (!out.success) return undefined;
    const [at, ids] = new TextDecoder().decode(out.stdout).split("\n");
    const [dev, ino] = (ids ?? "").trim().split(" ").map(Number);
    if (!at || !Number.isSafeInteger(dev) || !Number.isSafeInteger(ino)) return undefined;
    return { at, dev: dev!, ino: ino! };
  } catch {
    return undefined;
  }
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
  let problem = "";
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const resolved = resolveTrusted(resolve(dir));
    if ("problem" in resolved) {
      // A link seen in a writable directory may be a swap in progress: it counts only if it stays.
      problem = resolved.problem;
      continue;
    }
    const seen = probe(resolved.path);
    if (seen === undefined) return { problem: `"${resolved.path}" cannot be entered` };
    if (seen.at === resolved.path) return { path: resolved.path, dev: seen.dev, ino: seen.ino };
    problem = `it leads to another directory each time it is looked at (a directory on the ` +
      `way is being renamed)`;
  }
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
 * The real path of the workspace `dir` a session starts with, taken by
 * {@linkcode workspaceIdentity}. Throws a usage error naming the problem.
 */
export function pinnedWorkspacePath(dir: string): string {
  const id = workspaceIdentity(dir);
  if ("problem" in id) {
    throw new PenguinError("usage", `Cannot use the workspace "${dir}": ${id.problem}`);
  }
  return id.path;
}
