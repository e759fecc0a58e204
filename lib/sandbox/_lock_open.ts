/**
 * Opening and share-locking a path a command can reach, without ever waiting
 * on what a command controls. Stand-ins, and the protected paths any of which
 * may be another penguin's stand-in, lie in directories a command of some
 * session may write (a session on `ws` holds `ws/sub/.git` of a session on
 * `ws/sub`): that command can open them and `flock` them, and swap them for
 * a FIFO. A blocking `flock` waited for as long as that command liked, and a
 * read-only open of a FIFO waits for a writer; penguin did both holding the
 * registry's lock, so every other penguin process of the user waited behind
 * it (attack round 28 E e01, e02, e12, e13). So here:
 *
 * - a regular file is opened for reading and writing, which never waits on
 *   a FIFO (nothing is written). A directory, and a file penguin may not
 *   write, are opened read-only — Deno has no `O_NONBLOCK` for a file it can
 *   lock — and that open is given {@linkcode OPEN_WAIT_MS}: past it, what
 *   lies at the path is opened for writing when it is a FIFO, which lets the
 *   open through, and the path is refused;
 * - a shared lock is tried, not waited for: again a few times over well
 *   under a second (another penguin's exclusive lock lasts one removal, see
 *   `_standin_registry.ts`), then given up.
 *
 * Either refusal is a {@linkcode LockBusyError} naming the path: the command
 * is refused, nothing waits.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import { tryOpen } from "../state/_fs.ts";
import { lstatOrNone } from "./_look.ts";

/** How long a read-only open may take before the path is refused (a FIFO swapped in). */
export const OPEN_WAIT_MS = 2000;

/** The pauses between tries at a lock another process holds (ms): about 0.6 s in all. */
const LOCK_PAUSES_MS = [5, 10, 20, 40, 80, 160, 320];

/** A path penguin must lock for a sandbox could not be had at once: the command is refused. */
export class LockBusyError extends PenguinError {
  constructor(path: string, why: "locked" | "open") {
    super(
      "locked",
      why === "locked"
        ? `Cannot lock "${path}" for the sandbox: another process holds a lock on it (possibly ` +
          `a command of another penguin session whose workspace holds this path), and penguin ` +
          `does not wait for a lock a command can hold; run the command again once that ` +
          `process has let go of it`
        : `Cannot lock "${path}" for the sandbox: opening it did not end within ` +
          `${OPEN_WAIT_MS / 1000} s (a FIFO put in its place by a command of another session?), ` +
          `and penguin does not wait for it; run the command again once the path is a plain ` +
          `file or directory`,
    );
    this.name = "LockBusyError";
  }
}

/**
 * The directory or regular file at `path` opened for a lock, or undefined
 * when it is missing or anything else (checked on the open file too).
 * Throws {@linkcode LockBusyError} when a read-only open did not end in
 * time. The open file must still be checked to be what `path` names.
 */
export async function openForLock(path: string): Promise<Deno.FsFile | undefined> {
  const info = lstatOrNone(path);
  if (!info || !(info.isDirectory || info.isFile)) return undefined;
  const file = (info.isFile ? await tryOpen(path, { read: true, write: true }) : null) ??
    await openReadOnly(path);
  if (!file) return undefined;
  const opened = await file.stat().catch(() => undefined);
  if (opened?.isDirectory || opened?.isFile) return file;
  file.close(); // a FIFO, device or socket swapped in after the look
  return undefined;
}

/** `path` opened read-only within {@linkcode OPEN_WAIT_MS}; undefined when the open fails. */
async function openReadOnly(path: string): Promise<Deno.FsFile | undefined> {
  let done = false;
  const opening = Deno.open(path, { read: true }).then(
    (f) => f,
    () => undefined,
  ).finally(() => {
    done = true;
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), OPEN_WAIT_MS);
  });
  const first = await Promise.race([opening, late]);
  clearTimeout(timer);
  if (first !== "late") return first;
  // Waiting on a FIFO swapped in after the look: a writer lets it through (it may be moved about).
  for (let i = 0; i < 100 && !done; i++) {
    if (lstatOrNone(path)?.isFifo) (await tryOpen(path, { read: true, write: true }))?.close();
    await Promise.race([opening, new Promise((r) => setTimeout(r, 10))]);
  }
  opening.then((f) => f?.close());
  throw new LockBusyError(path, "open");
}

/**
 * A shared lock on `file` (opened from `path`), tried a few times over about
 * 0.6 s, never waited for; {@linkcode LockBusyError} when another process
 * keeps an exclusive one.
 */
export async function shareLockNoWait(file: Deno.FsFile, path: string): Promise<void> {
  for (let i = 0;; i++) {
    if (await file.tryLock(false).then((ok) => ok, () => false)) return;
    const pause = LOCK_PAUSES_MS[i];
    if (pause === undefined) throw new LockBusyError(path, "locked");
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
