/**
 * A home file shown read-only (a trusted `home_readable` file, a toolchain
 * file such as `~/.cargo/env`) is bound as a copy penguin made of it when
 * the plan was made, in this process's private run directory, never by its
 * name: the sandbox's launcher, a shell, can only open a name following a
 * link at its end, so a model that swapped the file for a link in a tight
 * loop (its workspace holds it) had a host file of its choosing bound, the
 * user's `~/.ssh/id_rsa` included (attack round 23 concgit break 3). penguin
 * reads the file without following a link at its end and without blocking
 * on a FIFO, checked as opened. A file larger than
 * {@linkcode MAX_SHOWN_FILE_BYTES} is not shown. Limit: a directory on the
 * way swapped for a link at that moment still leads the read elsewhere, to
 * a file of the same name.
 *
 * @module
 */
import { join } from "node:path";
import { lstatOrNone, readRegularNow } from "./_look.ts";
import { privateRunDir } from "./_standin_registry.ts";

/** The largest home file shown (as a copy). */
export const MAX_SHOWN_FILE_BYTES = 1024 * 1024;

/** The copy of the file `source` commands are shown, or undefined when it cannot be shown. */
export async function shownCopyOf(source: string): Promise<string | undefined> {
  const bytes = readRegularNow(source, MAX_SHOWN_FILE_BYTES, false);
  if (!(bytes instanceof Uint8Array)) return undefined;
  // A script stays one a command can run.
  const runnable = ((lstatOrNone(source)?.mode ?? 0) & 0o111) !== 0;
  try {
    const digest = new Uint8Array(
      await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>),
    );
    const hash = [...digest.subarray(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("");
    const dir = await privateRunDir();
    const path = join(dir, `shown-${hash}${runnable ? "-x" : ""}`);
    if (lstatOrNone(path)?.isFile) return path;
    // Written beside and renamed into place: no sandbox binds half a file.
    const tmp = join(dir, `.shown-${crypto.randomUUID()}`);
    await Deno.writeFile(tmp, bytes, { mode: runnable ? 0o700 : 0o600 });
    await Deno.rename(tmp, path);
    return path;
  } catch {
    return undefined;
  }
}
