/**
 * Stand-ins for missing protected paths. bubblewrap can only keep a name
 * from being created by mounting something on it, and a mount needs an
 * existing target, which lies in the user's (writable) workspace. So before a
 * sandbox starts penguin creates each missing protected path with inert
 * content (an empty directory, an empty config, a `commondir` of "."), the
 * sandbox binds it read-only, and once the sandbox is gone penguin removes it
 * again — only if it still is exactly what penguin created (a directory that
 * is still empty, a file with the content written), so nothing the user did
 * in the meantime is lost and nothing stray is left.
 *
 * Sandboxes of one penguin process share a stand-in through a reference
 * count: it is removed when the last of them ends. (Removing a path that is a
 * mount point in another, still-running sandbox would detach that mount.)
 *
 * A penguin killed (or crashed) while a command runs cannot remove its
 * stand-ins, and a later one could not tell them from the user's files. So
 * each is recorded, before it is created, in a journal outside the workspace
 * and every sandbox (`_standin_journal.ts`), and dropped from it once
 * released; {@linkcode sweepStandIns} removes what dead processes left, when
 * it is still exactly what they created.
 *
 * @module
 */
import type { ExitStatus, SandboxedProcess } from "./_process.ts";
import {
  type FileIds,
  fileIds,
  flushJournal,
  forgetStandIn,
  holdsExactly,
  isRecorded,
  isUnchanged,
  journalWritten,
  noteCreated,
  recordStandIns,
  sweepJournal,
} from "./_standin_journal.ts";

/** A path to hold while a sandbox runs. */
export interface Placeholder {
  /** Absolute path (its parent exists). */
  path: string;
  /** Created as an empty directory, or a file with `content`. */
  kind: "dir" | "file";
  /** File content (files only). */
  content?: string;
}

const live = new Map<string, { count: number; placeholder: Placeholder; ids?: FileIds }>();

/** The last pending hold or release of each path: they run one after another. */
const pending = new Map<string, Promise<unknown>>();

/**
 * Run `fn` after every earlier hold or release of `path`. Without this, a
 * release removing the last holder's stand-in could interleave with a new
 * hold that saw the file still there, took it for the user's and held
 * nothing, so the new sandbox found no source to mount.
 */
function serialized<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const next = (pending.get(path) ?? Promise.resolve()).then(fn, fn);
  const tail = next.then(() => {}, () => {});
  pending.set(path, tail);
  tail.then(() => {
    if (pending.get(path) === tail) pending.delete(path);
  });
  return next;
}

/**
 * Stand-ins this process is creating or removing right now. They count as
 * missing too: a plan made meanwhile that took one for the user's file would
 * mount it without holding it, and lose it to the removal.
 */
const inFlight = new Set<string>();
/** Counts every start and end of a creation or removal (see {@linkcode standInGeneration}). */
let generation = 0;

/**
 * A number that changes whenever a stand-in of this process starts or ends
 * being created or removed: a reading of the held set and the disk taken
 * while it stayed the same saw no stand-in come or go.
 */
export function standInGeneration(): number {
  return generation;
}

function begin(path: string): void {
  inFlight.add(path);
  generation++;
}

function end(path: string): void {
  inFlight.delete(path);
  generation++;
}

/** Paths this process currently holds as stand-ins, or is creating or removing (they count as missing). */
export function livePlaceholders(): ReadonlySet<string> {
  return new Set([...live.keys(), ...inFlight]);
}

/** Create `p`: its identity, or false when the path exists already. */
async function create(p: Placeholder): Promise<FileIds | undefined | false> {
  try {
    if (p.kind === "dir") await Deno.mkdir(p.path);
    else await Deno.writeTextFile(p.path, p.content ?? "", { createNew: true });
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) return false;
    throw err;
  }
  const ids = await fileIds(p.path);
  noteCreated(p.path, ids);
  return ids;
}

/** Create a stand-in nobody in this process holds, recorded in the journal first. */
async function createRecorded(p: Placeholder): Promise<FileIds | undefined | false> {
  // Recorded when the hold began, unless a release dropped it since (it was held then).
  if (!isRecorded(p.path)) await recordStandIns([p]);
  let created: FileIds | undefined | false = false;
  try {
    created = await create(p);
  } finally {
    if (created === false) forgetStandIn(p.path);
  }
  return created;
}

async function removeIfUnchanged(p: Placeholder, ids: FileIds | undefined): Promise<void> {
  try {
    if (ids !== undefined) {
      // Same file, same times: still what was created (remove() refuses a non-empty directory).
      if (await isUnchanged(p.path, p.kind, ids)) await Deno.remove(p.path);
      return;
    }
    const info = await Deno.lstat(p.path);
    if (p.kind === "dir") {
      if (info.isDirectory) await Deno.remove(p.path);
    } else if (info.isFile && await holdsExactly(p.path, p.content ?? "")) {
      await Deno.remove(p.path);
    }
  } catch {
    // Gone, changed, or not removable: leave it.
  }
}

/**
 * Create the missing `placeholders` (or join the stand-ins already held) and
 * return the function that lets go of them. Paths that exist and are not
 * held by this process were created by someone else: they are left alone.
 */
export async function holdPlaceholders(
  placeholders: readonly Placeholder[],
): Promise<() => Promise<void>> {
  const held: Placeholder[] = [];
  const release = async () => {
    let removed = false;
    for (const p of held.splice(0).reverse()) {
      await serialized(p.path, async () => {
        const entry = live.get(p.path);
        if (!entry || --entry.count > 0) return;
        begin(p.path);
        live.delete(p.path);
        try {
          await removeIfUnchanged(entry.placeholder, entry.ids);
        } finally {
          end(p.path);
        }
        forgetStandIn(p.path);
        removed = true;
      });
    }
    // Nothing of the hold is left in flight when its release returns.
    await (removed ? flushJournal() : journalWritten());
  };
  try {
    const fresh = placeholders.filter((p) => !live.has(p.path));
    if (fresh.length > 0) await recordStandIns(fresh);
    let changed = false;
    for (const p of placeholders) {
      await serialized(p.path, async () => {
        const entry = live.get(p.path);
        if (entry) {
          // Held already, but someone may have removed it meanwhile (a `git clean`, a test
          // resetting the workspace): put it back, or bubblewrap has no source to mount.
          const ids = await create(p);
          if (ids !== false) {
            if (ids) entry.ids = ids;
            else delete entry.ids;
            changed = true;
          }
          entry.count++;
          held.push(p);
        } else {
          changed = true;
          begin(p.path);
          try {
            const ids = await createRecorded(p);
            if (ids !== false) {
              live.set(p.path, { count: 1, placeholder: p, ...(ids ? { ids } : {}) });
              held.push(p);
            }
          } finally {
            end(p.path);
          }
        }
      });
    }
    // The identities of what was created (or what was not: no longer recorded). Not awaited:
    // the sandbox starts meanwhile; a crash before it is written only leaves a stand-in
    // without identity, which no sweep removes.
    if (changed) void flushJournal();
  } catch (err) {
    await release();
    throw err;
  }
  return release;
}

/**
 * Remove the stand-ins that penguin processes no longer running left behind
 * (killed or crashed while a command ran) and drop their journal entries.
 * Only paths `accept` takes for stand-ins a plan makes are removed, and only
 * while they are still exactly what was created: the same directory, still
 * empty, or the same regular file with the content written. Anything else is
 * left. Stand-ins of running processes are never touched. Never rejects.
 */
export function sweepStandIns(accept: (p: Placeholder) => boolean): Promise<void> {
  return sweepJournal((p) => !livePlaceholders().has(p.path) && accept(p));
}

/** `child`, with `release` run once it has exited and before its status resolves. */
export function releaseOnExit(
  child: SandboxedProcess,
  release: () => Promise<void>,
): SandboxedProcess {
  const status: Promise<ExitStatus> = child.status.then(
    async (s) => {
      await release();
      return s;
    },
    async (err) => {
      await release();
      throw err;
    },
  );
  return {
    pid: child.pid,
    sandbox: child.sandbox,
    output: child.output,
    outputClosed: child.outputClosed,
    status,
    write: (chars) => child.write(chars),
    closeStdin: () => child.closeStdin(),
    signal: (sig) => child.signal(sig),
    kill: async (graceMs) => {
      await child.kill(graceMs);
      return await status;
    },
    [Symbol.asyncDispose]: async () => {
      await child.kill();
      await status.catch(() => {});
    },
  };
}
