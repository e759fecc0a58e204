/**
 * The ledger of the process budget (`_process_budget.ts`): what the commands
 * of every penguin process of the user hold, so that all of them share one
 * budget instead of each having its own.
 *
 * Each penguin process that holds shares keeps one file, `budget/<pid>-<start>`
 * in its private run directory (`start`: its start time, `/proc/<pid>/stat`
 * field 22, so a reused pid is not taken for it), holding the processes its
 * running commands may hold in all, as decimal digits. It is rewritten (a new
 * file renamed over it) on every change, removed when that total falls to 0
 * and when the process exits. The files of every run directory a penguin of
 * the user keeps (`privateRunDirs`: the default one and every one noted as a
 * `PENGUIN_RUN_DIR`) are summed; every sandbox plan hides those directories,
 * so no command can write, remove or plant a file there.
 *
 * A file whose process no longer runs (same pid and start time) is not
 * counted and is removed; one whose name or content is not a ledger entry is
 * not counted (an entry is at most {@linkcode MAX_ENTRY_BYTES} bytes); a
 * count above {@linkcode MAX_HELD} counts as that (a forged file can only
 * make the budget smaller). At most {@linkcode MAX_ENTRIES} files are read.
 * Where `/proc` cannot be read, every entry counts.
 *
 * Taking a share reads the others' files and writes this process's under one
 * exclusive lock (`budget/lock` in the default run directory, the same for
 * every penguin of the user), so two penguins cannot both take the last
 * room. Giving a share back only lowers the file, without the lock.
 *
 * @module
 */
import { join } from "node:path";
import { lockFile } from "../state/_fs.ts";
import { ownProcessKey, startTimes } from "./_proc_facts.ts";
import { defaultRunDir, privateRunDir, privateRunDirs } from "./_standin_registry.ts";

/** Ledger files read at most, over every run directory. */
export const MAX_ENTRIES = 1024;
/** A ledger file larger than this is not read. */
export const MAX_ENTRY_BYTES = 32;
/** What one entry counts for at most (a share is at most a policy's limit). */
export const MAX_HELD = 1 << 22;

const ENTRY = /^(\d{1,10})-(\d{1,20})$/;

/** Where a ledger lives: this process's directory, the lock, every directory summed. */
interface Place {
  own: string;
  lock: string;
  dirs: () => Promise<string[]>;
}

/** The ledger open under its lock, for one share taken. */
export interface LedgerLock {
  /** What the other live penguin processes' entries hold in all. */
  othersHeld(): Promise<number>;
  /** Write this process's total (0: remove its entry). */
  write(held: number): Promise<void>;
  /** Let go of the lock. */
  close(): void;
}

/**
 * This process's entry name: pid and start time (`0` where `/proc` does not say). Per process,
 * not per isolate as the shown copies are (`_shown_copies.ts`): only penguin's main isolate runs
 * commands (its Workers run file tools); the test modules `deno test --parallel` runs as
 * isolates of one process share this entry, so each has the budget a penguin process has.
 */
const key = ownProcessKey;

/** The ledger of every penguin process of the user, or the one directory `pinned` (tests). */
async function placeOf(pinned: string | undefined): Promise<Place> {
  if (pinned !== undefined) {
    return { own: pinned, lock: join(pinned, "lock"), dirs: () => Promise.resolve([pinned]) };
  }
  const own = join(await privateRunDir(), "budget");
  const top = await defaultRunDir().catch(() => undefined);
  await Deno.mkdir(own, { recursive: true, mode: 0o700 });
  let lock = join(own, "lock");
  if (top !== undefined) {
    await Deno.mkdir(join(top, "budget"), { recursive: true, mode: 0o700 });
    lock = join(top, "budget", "lock");
  }
  const dirs = async () => [
    ...new Set([own, ...(await privateRunDirs()).map((d) => join(d, "budget"))]),
  ];
  return { own, lock, dirs };
}

interface Entry {
  path: string;
  pid: number;
  start: string;
  held: number;
}

/** The entry at `path` named `name`, or undefined when it is not one. */
async function readEntry(path: string, name: string): Promise<Entry | undefined> {
  const m = ENTRY.exec(name);
  if (!m) return undefined;
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile || info.size > MAX_ENTRY_BYTES) return undefined;
    const text = await Deno.readTextFile(path);
    if (!/^\d{1,12}\n?$/.test(text)) return undefined;
    return { path, pid: Number(m[1]), start: m[2]!, held: Math.min(Number(text), MAX_HELD) };
  } catch {
    return undefined;
  }
}

/** The entries of `dirs` but `skip`'s, at most {@linkcode MAX_ENTRIES} looked at. */
async function entriesOf(dirs: readonly string[], skip: string): Promise<Entry[]> {
  const out: Entry[] = [];
  let seen = 0;
  for (const dir of dirs) {
    try {
      for await (const e of Deno.readDir(dir)) {
        if (++seen > MAX_ENTRIES) return out;
        if (e.name === skip || !e.isFile) continue;
        const entry = await readEntry(join(dir, e.name), e.name);
        if (entry) out.push(entry);
      }
    } catch {
      // gone or unreadable: nothing held there
    }
  }
  return out;
}

/** The entries whose process still runs; the others' files are removed. */
async function live(entries: readonly Entry[]): Promise<Entry[]> {
  if (entries.length === 0) return [];
  const starts = await startTimes([...new Set(entries.map((e) => e.pid))]);
  if (starts === undefined) return [...entries];
  const out: Entry[] = [];
  for (const e of entries) {
    const start = starts.get(e.pid);
    if (start !== undefined && (start === e.start || e.start === "0")) out.push(e);
    else await Deno.remove(e.path).catch(() => {});
  }
  return out;
}

/** This process's entry as last written, removed when the process exits. */
let written: string | undefined;
let hooked = false;

/** Write this process's entry in `dir` (0: remove it). Renamed into place: never half a file. */
async function writeOwn(dir: string, held: number): Promise<void> {
  const path = join(dir, await key());
  if (held <= 0) {
    await Deno.remove(path).catch(() => {});
    if (written === path) written = undefined;
    return;
  }
  if (!hooked) {
    hooked = true;
    globalThis.addEventListener("unload", () => {
      try {
        if (written !== undefined) Deno.removeSync(written);
      } catch {
        // not there
      }
    });
  }
  written = path;
  const tmp = join(dir, `.${await key()}.${crypto.randomUUID()}.tmp`);
  await Deno.writeTextFile(tmp, `${held}\n`, { mode: 0o600 });
  await Deno.rename(tmp, path);
}

/**
 * Open the ledger under its exclusive lock (the one of every penguin of the
 * user, or of the directory `pinned` in tests).
 */
export async function lockLedger(pinned?: string): Promise<LedgerLock> {
  const place = await placeOf(pinned);
  const me = await key();
  const lock = await lockFile(place.lock);
  return {
    othersHeld: async () => {
      const entries = await live(await entriesOf(await place.dirs(), me));
      return entries.reduce((n, e) => n + e.held, 0);
    },
    write: (held) => writeOwn(place.own, held),
    close: () => lock.close(),
  };
}

/** Lower this process's entry to `held` (a share given back; no lock needed to lower it). */
export async function lowerOwn(held: number, pinned?: string): Promise<void> {
  await writeOwn((await placeOf(pinned)).own, held);
}
