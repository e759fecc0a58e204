/**
 * Stand-ins for missing protected paths. bubblewrap can only keep a name
 * from being created by mounting something on it, and a mount needs an
 * existing target, which lies in the user's (writable) workspace. So before a
 * sandbox starts penguin creates each missing protected path with inert
 * content (an empty directory, an empty config, a `commondir` of "."), the
 * sandbox binds it read-only, and once the sandbox is gone penguin removes it
 * again — only if it still is exactly what penguin created (same device,
 * inode, times and size), so nothing the user did in the meantime is lost
 * and nothing stray is left.
 *
 * Every penguin process of the user shares the stand-ins through the
 * registry of `_standin_registry.ts` (kept out of every sandbox's reach):
 * a stand-in is removed only when no process holds it any more, whichever
 * started or ends first, and one a killed penguin left is removed by the
 * next one ({@linkcode sweepStandIns}). Within a process, sandboxes share a
 * stand-in through a count, so the registry is consulted only when the first
 * sandbox takes it and the last one lets it go. While a session is open
 * ({@linkcode keepStandIns}) a stand-in whose count drops to 0 stays held,
 * until the last session of the process ends: made and removed once per
 * session, not once per command.
 *
 * @module
 */
import { type ExitStatus, type SandboxedProcess, withStatus } from "./_process.ts";
import type { LockBusyError } from "./_lock_open.ts";
import {
  holdInRegistry,
  lockProtected,
  registeredStandIns,
  registryGeneration,
  type RegistryHold,
  releaseInRegistry,
  restoreInRegistry,
  retryStrays,
  StalePlanError,
  type StandInRecord,
  sweepHeldAsUsers,
  sweepRegistry,
} from "./_standin_registry.ts";

export { StalePlanError };

/** A path to hold while a sandbox runs. */
export interface Placeholder {
  /** Absolute path (its parent exists). */
  path: string;
  /** Created as an empty directory, or a file with `content`. */
  kind: "dir" | "file";
  /** File content (files only). */
  content?: string;
}

const live = new Map<string, { count: number; hold: RegistryHold }>();

/** Sessions open in this process: while there is one, stand-ins no sandbox uses stay held. */
let keepers = 0;

/** Whether a session keeps stand-ins now (so a sandbox may outlive its command). */
export function standInsKept(): boolean {
  return keepers > 0;
}

let beforeLetGo: (() => Promise<void>) | undefined;

/** Run `fn` when the last session keeping stand-ins ends, before they are let go. */
export function beforeStandInsEnd(fn: () => Promise<void>): void {
  beforeLetGo = fn;
}

/** The last pending hold or release of each path: they run one after another. */
const pending = new Map<string, Promise<unknown>>();

/**
 * Run `fn` after every earlier hold or release of any of `paths`. Without
 * this, a release removing the last holder's stand-in could interleave with
 * a new hold that saw the file still there, took it for the user's and held
 * nothing, so the new sandbox found no source to mount.
 */
function serialized<T>(paths: readonly string[], fn: () => Promise<T>): Promise<T> {
  const before = Promise.all(paths.map((p) => pending.get(p)));
  const next = before.then(fn, fn);
  const tail = next.then(() => {}, () => {});
  for (const p of paths) pending.set(p, tail);
  tail.then(() => {
    for (const p of paths) if (pending.get(p) === tail) pending.delete(p);
  });
  return next;
}

/**
 * Stand-ins this process is creating or removing right now. They count as
 * missing too: a plan made meanwhile that took one for the user's file would
 * mount it without holding it, and lose it to the removal.
 */
const inFlight = new Set<string>();
/** Counts every start and end of a creation or removal in this process. */
let generation = 0;

/**
 * A value that changes whenever a stand-in of any penguin process starts or
 * ends being created or removed: a reading of the stand-ins and the disk
 * taken while it stayed the same saw no stand-in come or go.
 */
export async function standInGeneration(): Promise<string> {
  return `${generation}:${await registryGeneration()}`;
}

function begin(path: string): void {
  inFlight.add(path);
  generation++;
}

function end(path: string): void {
  inFlight.delete(path);
  generation++;
}

/**
 * Paths that are stand-ins now — of this or any other penguin process,
 * living or dead, or being created or removed here: they count as missing.
 */
export async function standInPaths(): Promise<ReadonlySet<string>> {
  const out = new Set([...live.keys(), ...inFlight]);
  for (const p of await registeredStandIns()) out.add(p);
  return out;
}

/** Paths this process currently holds as stand-ins, or is creating or removing. */
export function livePlaceholders(): ReadonlySet<string> {
  return new Set([...live.keys(), ...inFlight]);
}

/**
 * Create the missing `placeholders` (or join the stand-ins already held, by
 * this process or another) and share-lock the other `protect`ed paths, and
 * return the function that lets go of them. Paths that exist and are not
 * stand-ins are the user's: they are left alone. Rejects with
 * `StalePlanError` when the plan's look at the disk went stale meanwhile, and
 * with `LockBusyError` when another process keeps a path locked (never
 * waited for).
 */
export async function holdPlaceholders(
  placeholders: readonly Placeholder[],
  protect: readonly string[] = [],
  opts: { keep?: boolean } = {},
): Promise<() => Promise<void>> {
  const keep = opts.keep ?? true;
  const held: Placeholder[] = [];
  let unlock = () => {};
  const release = async () => {
    unlock();
    const mine = held.splice(0).reverse();
    if (mine.length === 0) return;
    const paths = [...new Set(mine.map((p) => p.path))];
    await serialized(paths, async () => {
      const last: RegistryHold[] = [];
      for (const p of mine) {
        const entry = live.get(p.path);
        if (!entry || --entry.count > 0 || (keep && keepers > 0)) continue;
        live.delete(p.path);
        last.push(entry.hold);
      }
      await letGo(last);
    });
  };
  try {
    const paths = [...new Set(placeholders.map((p) => p.path))];
    const stale = await serialized(paths, () => take(placeholders, held));
    if (stale) throw stale;
    // Held stand-ins are locked by their holds; every other protected path (a placeholder this
    // process did not hold, as another penguin's stand-in stands there) is locked here.
    const mine = new Set(held.map((p) => p.path));
    unlock = await lockProtected(protect.filter((p) => !mine.has(p)));
  } catch (err) {
    await release();
    throw err;
  }
  return release;
}

/**
 * Let go of `holds` in the registry, all at once: one look inside their
 * directories (see _standin_ops.ts). The paths whose stand-ins could not be
 * removed (their directory no longer lay at its path).
 */
async function letGo(holds: readonly RegistryHold[]): Promise<string[]> {
  if (holds.length === 0) return [];
  for (const h of holds) begin(h.path);
  try {
    return await releaseInRegistry(holds);
  } finally {
    for (const h of holds) end(h.path);
  }
}

/** What ends a session's keeping of stand-ins ({@linkcode keepStandIns}). */
export interface StandInKeeping {
  /**
   * Stop keeping. When no other session of the process keeps them, the
   * stand-ins no sandbox uses any more are let go (removed when no other
   * penguin holds them). Resolves to the paths of this process's stand-ins
   * that could not be removed (their directory was moved or replaced).
   */
  end(): Promise<string[]>;
  /**
   * After the rest of the session's end: try those left again, at most
   * `tries` times, one right after the other, and report each one still left
   * in one line through `warn`.
   */
  settle(warn: (line: string) => void, tries?: number): Promise<void>;
}

/**
 * Keep the stand-ins this process makes held from the first sandbox that
 * needs them until the session ends (see the module doc), instead of
 * removing them after every command. Between commands a stand-in stays in
 * the workspace (an empty `.git`, an inert `penguin.jsonc`), out of any
 * command's reach: every sandbox that runs mounts it read-only.
 */
export function keepStandIns(): StandInKeeping {
  keepers++;
  let ended = false;
  let left: string[] = [];
  return {
    end: async () => {
      if (ended) return left;
      ended = true;
      if (--keepers > 0) return left;
      // The sandboxes kept for sessions (_pool.ts) let go of theirs first.
      await beforeLetGo?.().catch(() => {});
      const idle = [...live.entries()].filter(([, e]) => e.count === 0).map(([p]) => p);
      left = await serialized(idle, async () => {
        const last: RegistryHold[] = [];
        for (const p of idle) {
          const entry = live.get(p);
          if (!entry || entry.count > 0 || keepers > 0) continue;
          live.delete(p);
          last.push(entry.hold);
        }
        const stuck = await letGo(last);
        // Another penguin's stand-ins this one held while it ended are nobody's now.
        if (swept !== undefined) await sweepHeldAsUsers(swept);
        // Strays of earlier releases (a command's, while the directory was moved) too.
        return [...new Set([...stuck, ...await retryStrays()])];
      });
      return left;
    },
    settle: async (warn, tries = 2) => {
      for (let i = 0; i < tries && left.length > 0; i++) left = await retryStrays();
      for (const path of left) {
        warn(
          `[penguin] could not remove its stand-in "${path}": its directory was moved or ` +
            `replaced meanwhile; the next penguin removes it once the directory is back`,
        );
      }
    },
  };
}

/**
 * Take each of `placeholders`: join the ones this process holds already
 * (putting back one removed meanwhile), and hold the others in the registry
 * all at once; what is held goes on `held`. The staleness of the plan, if
 * it went stale, or the stand-in another process keeps locked (the command
 * is refused: see `_lock_open.ts`).
 */
async function take(
  placeholders: readonly Placeholder[],
  held: Placeholder[],
): Promise<StalePlanError | LockBusyError | undefined> {
  const fresh: Placeholder[] = [];
  for (const p of placeholders) {
    const entry = live.get(p.path);
    if (entry) {
      // Held already, but someone may have removed it meanwhile (a `git clean`, a test
      // resetting the workspace): put it back, or bubblewrap has no source to mount.
      await restoreInRegistry(entry.hold, p);
      entry.count++;
      held.push(p);
    } else if (!fresh.some((f) => f.path === p.path)) {
      fresh.push(p);
    }
  }
  if (fresh.length === 0) return undefined;
  for (const p of fresh) begin(p.path);
  try {
    const { holds, stale, busy } = await holdInRegistry(fresh);
    for (const [i, hold] of holds.entries()) {
      if (hold) {
        live.set(hold.path, { count: 1, hold });
        held.push(fresh[i]!);
      }
    }
    // A path listed twice is held twice.
    for (const p of placeholders) {
      const entry = live.get(p.path);
      if (entry && fresh.includes(p) === false && !held.includes(p)) {
        entry.count++;
        held.push(p);
      }
    }
    // Refused rather than planned again: a command keeps the lock as long as it likes.
    return busy ?? stale;
  } finally {
    for (const p of fresh) end(p.path);
  }
}

/**
 * Remove the stand-ins that no living penguin process holds (their holder
 * was killed or crashed while a command ran). Only paths `accept` takes for
 * stand-ins a plan makes are removed, and only while they are still exactly
 * what was created. Never rejects.
 */
export function sweepStandIns(accept: (p: StandInRecord) => boolean): Promise<void> {
  swept = accept;
  return sweepRegistry(accept);
}

/** The shapes the process's sweep took for stand-ins, for the end of its last session. */
let swept: ((p: StandInRecord) => boolean) | undefined;

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
  return withStatus(child, status);
}
