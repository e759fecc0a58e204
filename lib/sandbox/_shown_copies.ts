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
 * The copies are the isolate's own (`<run dir>/shown/<pid>-<start>-<8 hex>/`,
 * `ownInstanceKey`: Workers share the process's pid): at
 * most {@linkcode MAX_SHOWN_COPIES}, the least recently used removed past
 * that (a sandbox binds its copy when it starts, and the bind outlives the
 * file), all removed when the process exits, and those of a process that
 * no longer runs by the next one. They were kept forever, one per content:
 * a model rewriting a shown file left a megabyte in `/tmp` (often memory)
 * for every command of another session (attack round 24 concgit 2).
 *
 * @module
 */
import { join } from "node:path";
import { lstatOrNone, readRegularNow } from "./_look.ts";
import { ownInstanceKey, parseInstanceKey, startTimes } from "./_proc_facts.ts";
import { privateRunDir } from "./_standin_registry.ts";
import { hexOf } from "../protocol/hex.ts";

/** The largest home file shown (as a copy). */
export const MAX_SHOWN_FILE_BYTES = 1024 * 1024;

/** The most copies a process keeps at once. */
export const MAX_SHOWN_COPIES = 64;

/** This process's copies, least recently used first. */
const copies = new Set<string>();

let own: Promise<string> | undefined;

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
    const hash = hexOf(digest.subarray(0, 12));
    const dir = await ownProcessDir();
    const path = join(dir, `${hash}${runnable ? "-x" : ""}`);
    copies.delete(path);
    copies.add(path);
    if (lstatOrNone(path)?.isFile) return path;
    // Written beside and renamed into place: no sandbox binds half a file.
    const tmp = join(dir, `.${crypto.randomUUID()}`);
    await Deno.writeFile(tmp, bytes, { mode: runnable ? 0o700 : 0o600 });
    await Deno.rename(tmp, path);
    for (const old of copies) {
      if (copies.size <= MAX_SHOWN_COPIES) break;
      copies.delete(old);
      await Deno.remove(old).catch(() => {});
    }
    return path;
  } catch {
    return undefined;
  }
}

/** How many copies this process keeps now (for tests). */
export function shownCopies(): number {
  return copies.size;
}

/**
 * This process's private directory (its shown copies, its launcher copy):
 * made under a name no other process knows, removed when the process exits.
 */
export function ownProcessDir(): Promise<string> {
  return own ??= ownCopiesDir();
}

/**
 * This process's directory of copies, made now, removed when the process
 * exits; the directories of processes that no longer run are removed first.
 */
async function ownCopiesDir(): Promise<string> {
  const run = await privateRunDir();
  const top = join(run, "shown");
  await Deno.mkdir(top, { recursive: true, mode: 0o700 });
  await sweepDead(top);
  // Where earlier versions kept every copy, and the launcher copies they shared, for good.
  for await (const e of Deno.readDir(run)) {
    if (
      (e.isFile && /^shown-[0-9a-f]{24}(-x)?$/.test(e.name)) ||
      (e.isDirectory && /^launcher-\d+-\d+-\d+-\d+$/.test(e.name))
    ) {
      await Deno.remove(join(run, e.name), { recursive: true }).catch(() => {});
    }
  }
  const dir = join(top, await ownInstanceKey());
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // gone already
    }
  });
  return dir;
}

/** Remove the copies of every process that no longer runs (unknown where `/proc` is unreadable). */
async function sweepDead(top: string): Promise<void> {
  const owners: { name: string; pid: number; start: string }[] = [];
  for await (const e of Deno.readDir(top)) {
    const owner = parseInstanceKey(e.name);
    if (owner && e.isDirectory) owners.push({ name: e.name, ...owner });
  }
  if (owners.length === 0) return;
  const starts = await startTimes([...new Set(owners.map((o) => o.pid))]);
  if (starts === undefined) return;
  for (const o of owners) {
    const start = starts.get(o.pid);
    if (start !== undefined && (start === o.start || o.start === "0")) continue;
    await Deno.remove(join(top, o.name), { recursive: true }).catch(() => {});
  }
}
