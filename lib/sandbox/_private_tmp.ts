/**
 * A private per-user directory under the host's `/tmp`, for files penguin
 * keeps out of every sandbox's view: no bubblewrap sandbox sees the host's
 * `/tmp` (each mounts a fresh tmpfs there; see `_seccomp_file.ts`, which
 * keeps the seccomp filter there for the same reason), and other users
 * cannot enter a 0700 directory.
 *
 * The name is fixed (`/tmp/penguin-<uid>/<name>`) so that a later penguin
 * finds what an earlier one left. In the world-writable `/tmp` anyone may
 * have made that name first, so an existing directory is used only when it
 * is a real directory (not a symbolic link), owned by this user and closed
 * to everyone else; otherwise there is no private directory.
 *
 * @module
 */
import { join } from "node:path";

/** The host's temporary directory (never the `TMPDIR` a sandbox may see). */
const HOST_TMP = "/tmp";

async function ensurePrivate(path: string, uid: number): Promise<boolean> {
  try {
    await Deno.mkdir(path, { mode: 0o700 });
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
  }
  const info = await Deno.lstat(path);
  return info.isDirectory && info.uid === uid && ((info.mode ?? 0o777) & 0o077) === 0;
}

/**
 * `/tmp/penguin-<uid>/<name>`, created (0700) when missing; undefined when
 * it cannot be made or an existing one is not this user's private directory.
 */
export async function privateTmpDir(name: string): Promise<string | undefined> {
  try {
    const uid = Deno.uid();
    if (uid === null) return undefined;
    const top = join(HOST_TMP, `penguin-${uid}`);
    if (!await ensurePrivate(top, uid)) return undefined;
    const dir = join(top, name);
    return await ensurePrivate(dir, uid) ? dir : undefined;
  } catch {
    return undefined;
  }
}
