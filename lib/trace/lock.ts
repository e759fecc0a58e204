/**
 * One writer per session: an exclusive lock file per session id at
 * `<tracesDir>/.locks/<sessionId>.lock`.
 *
 * Exclusion is an OS advisory lock (`flock`, via `Deno.FsFile.tryLock`) held
 * on the open lock file for the writer's life. The kernel drops it when the
 * holder exits, however it exits, so a lock left behind by a dead process is
 * simply taken over by the next writer: no pid probing, no pid-reuse
 * mistakes, and two racing takers cannot both win because the kernel grants
 * the lock to one of them only. The file's content (`{pid, hostname,
 * started}`) only serves to name the holder in the refusal message.
 *
 * @module
 */
import { join } from "node:path";
import { errorMessage, PenguinError } from "../protocol/errors.ts";
import { FILE_MODE } from "./_fs.ts";
import { mkdirPrivate } from "../state/_fs.ts";
import { sleep } from "../protocol/sleep.ts";
import { assertSessionId } from "./paths.ts";

/** Who holds a session lock, as recorded in the lock file. */
export interface LockHolder {
  /** Process id of the holder. */
  pid: number;
  /** Host the holder runs on. */
  hostname: string;
  /** When the holder took the lock (ISO-8601). */
  started: string;
}

/** A held session lock. Release it with {@linkcode releaseSessionLock}. */
export interface SessionLock {
  /** The session the lock is for. */
  sessionId: string;
  /** Path of the lock file. */
  path: string;
  /** What this process recorded in the lock file. */
  holder: LockHolder;
  /** The open, locked file; closing it releases the OS lock. */
  file: Deno.FsFile;
}

/** Path of the lock file of `sessionId` under `tracesDir`. */
export function sessionLockPath(tracesDir: string, sessionId: string): string {
  assertSessionId(sessionId);
  return join(tracesDir, ".locks", `${sessionId}.lock`);
}

function hostname(): string {
  try {
    return Deno.hostname();
  } catch {
    return "unknown";
  }
}

function sameFile(a: Deno.FileInfo, b: Deno.FileInfo): boolean {
  if (a.ino === null || b.ino === null) return true;
  return a.ino === b.ino && a.dev === b.dev;
}

async function readHolder(path: string): Promise<LockHolder | null> {
  // The holder writes its details right after locking; give it a moment.
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const text = await Deno.readTextFile(path);
      if (text.trim()) {
        const v = JSON.parse(text) as Partial<LockHolder>;
        if (typeof v.pid === "number") {
          return {
            pid: v.pid,
            hostname: String(v.hostname ?? "unknown"),
            started: String(v.started ?? "unknown"),
          };
        }
      }
    } catch {
      // missing, half-written or unreadable: retry
    }
    await sleep(5);
  }
  return null;
}

function lockedError(sessionId: string, holder: LockHolder | null): PenguinError {
  if (!holder) {
    return new PenguinError(
      "locked",
      `Cannot write session ${sessionId}: it is locked by another process (no holder details recorded); wait for it to finish or kill it`,
    );
  }
  const host = holder.hostname !== hostname() ? ` on host ${JSON.stringify(holder.hostname)}` : "";
  return new PenguinError(
    "locked",
    `Cannot write session ${sessionId}: it is locked by process ${holder.pid}${host} (started ${holder.started}); wait for it to finish or kill it`,
  );
}

/**
 * Take the exclusive lock of `sessionId` under `tracesDir`. Throws a
 * PenguinError of kind "locked" naming the holder's pid when a live process
 * (this one included) holds it; a lock left by a dead process is taken over.
 */
export async function acquireSessionLock(
  tracesDir: string,
  sessionId: string,
): Promise<SessionLock> {
  const path = sessionLockPath(tracesDir, sessionId);
  await mkdirPrivate(join(tracesDir, ".locks"));
  // Bounded: a retry happens only when a releasing holder unlinked the file
  // between our open and our lock.
  for (let attempt = 0; attempt < 100; attempt++) {
    const file = await Deno.open(path, { read: true, write: true, create: true, mode: FILE_MODE });
    try {
      if (!(await file.tryLock(true))) {
        file.close();
        throw lockedError(sessionId, await readHolder(path));
      }
      // The file we locked must still be the one at `path` (a releasing
      // holder unlinks it while still holding the lock).
      let current: Deno.FileInfo | null = null;
      try {
        current = await Deno.stat(path);
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }
      if (!current || !sameFile(current, await file.stat())) {
        file.close();
        continue;
      }
      await Deno.chmod(path, FILE_MODE);
      const holder: LockHolder = {
        pid: Deno.pid,
        hostname: hostname(),
        started: new Date().toISOString(),
      };
      const data = new TextEncoder().encode(JSON.stringify(holder) + "\n");
      await file.truncate(0);
      let off = 0;
      while (off < data.length) off += await file.write(data.subarray(off));
      return { sessionId, path, holder, file };
    } catch (err) {
      try {
        file.close();
      } catch { /* already closed */ }
      if (err instanceof PenguinError) throw err;
      throw new PenguinError(
        "runtime",
        `Cannot lock session ${sessionId} at "${path}": ${errorMessage(err)}`,
        {
          cause: err,
        },
      );
    }
  }
  throw new PenguinError(
    "locked",
    `Cannot lock session ${sessionId}: the lock file "${path}" keeps changing`,
  );
}

const released = new WeakSet<SessionLock>();

/**
 * Release a lock taken with {@linkcode acquireSessionLock}: the lock file is
 * removed while still locked, then closed. Releasing twice is harmless.
 */
export async function releaseSessionLock(lock: SessionLock): Promise<void> {
  if (released.has(lock)) return;
  released.add(lock);
  try {
    await Deno.remove(lock.path);
  } catch {
    // already gone: nothing to clean up
  }
  try {
    lock.file.close();
  } catch {
    // already closed
  }
}

/** A session whose lock a live process holds. */
export interface LiveSession {
  /** The session id. */
  sessionId: string;
  /** Who holds it, when recorded. */
  holder: LockHolder | null;
}

/**
 * The sessions under `tracesDir` that a live process is writing now: each
 * lock file whose OS lock is held. A lock file left by a dead process is
 * free and not listed. (Probing takes a shared lock for an instant: a
 * writer taking that very lock at the same instant is refused as locked.)
 */
export async function liveSessions(tracesDir: string): Promise<LiveSession[]> {
  const dir = join(tracesDir, ".locks");
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && e.name.endsWith(".lock")) names.push(e.name);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
  const live: LiveSession[] = [];
  for (const name of names.sort()) {
    const path = join(dir, name);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) continue; // released meanwhile
      throw err;
    }
    let free: boolean;
    try {
      free = await file.tryLock(false);
    } finally {
      file.close();
    }
    if (!free) {
      live.push({ sessionId: name.slice(0, -".lock".length), holder: await readHolder(path) });
    }
  }
  return live;
}
