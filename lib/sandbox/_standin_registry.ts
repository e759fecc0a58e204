/**
 * The stand-in registry: which stand-ins exist (see `_placeholders.ts`), and
 * which penguin processes hold them, shared by every penguin process of the
 * user. Two sessions in one workspace share its stand-ins: the one that ends
 * first must not remove a stand-in the other still has mounted (the mount
 * would be detached, and the other session's command could create the real
 * `.git` the stand-in kept out).
 *
 * The registry is a directory out of every sandbox's reach
 * ({@linkcode registryDir}: `~/.penguin/run/stand-ins`, 0700; every plan
 * hides it, also when a writable root contains it), holding per stand-in:
 *
 * - `<key>.json`, the record: path, kind, content and, once created, the
 *   stand-in's identity (device, inode, modification and change times,
 *   size). Only penguin, outside any sandbox, writes it; a stand-in is
 *   created only after its record is written, and the record is dropped only
 *   after the stand-in is removed.
 *
 * The holders' count is kept by the kernel, on the stand-in itself: each
 * process that mounts it (as its stand-in, or as what it took for the
 * user's file: see {@linkcode lockProtected}) holds a shared `flock` on it
 * through one open file, and a process lets go by closing that file and
 * trying an exclusive lock: it gets one only when no other process holds the
 * path, and only then removes the stand-in — when it is still exactly what
 * was created. A process that dies (killed, crashed) loses its locks with
 * it, so there is nothing to sweep by pid, start time or namespace; and
 * since the lock lies on the shared path, penguin processes that keep their
 * records apart (another `HOME`, another user) still never remove what the
 * other has mounted. The model cannot take an exclusive lock to stop that:
 * every path its sandbox mounts is share-locked by its penguin before the
 * sandbox starts, and stays so until it ends. A command of a session whose
 * workspace holds the path can (a session on `ws`, the stand-ins of one on
 * `ws/sub`): so penguin never waits for a lock on a stand-in or protected
 * path, nor for its open (a FIFO swapped in), least of all holding the
 * registry's lock: it tries, and refuses the command with a
 * {@linkcode LockBusyError} naming the path when it cannot have it at once
 * (`_lock_open.ts`; attack round 28 E e01, e02, e12, e13). A stand-in such a
 * command still holds when its penguin ends stays recorded, and a later
 * sweep removes it once no process holds it.
 *
 * Every change of the records (create, remove, drop) happens under one
 * exclusive lock on `registry.lock`, and bumps the `generation` file, so a
 * plan that read the registry and the disk can tell whether anything came or
 * went meanwhile.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { privateTmpDir } from "./_private_tmp.ts";
import { currentPlanScope, runInPlanScope } from "./_plan_scope.ts";
import { applyStandInOps, type StandInOp, writeContent } from "./_standin_ops.ts";
import { isEmptyDir } from "./_paths.ts";
import { lockFile, tryOpen } from "../state/_fs.ts";
import { LockBusyError, openForLock, shareLockNoWait } from "./_lock_open.ts";
import {
  existsNow,
  listDirNow,
  lstatNow,
  lstatOrNone,
  readTextNow,
  realPathOrNone,
} from "./_look.ts";
import { hexOf } from "../protocol/hex.ts";

/** A stand-in as recorded: where, what, and once created, which file it is. */
export interface StandInRecord {
  /** Absolute path. */
  path: string;
  /** An empty directory or a file with `content`. */
  kind: "dir" | "file";
  /** File content (files only). */
  content?: string;
  /** Identity once created. */
  ids?: FileIds;
  /**
   * Device and inode of a stand-in made whose path led elsewhere before
   * penguin could open it, and that could not be taken back then (its
   * parent had moved): removed later only while still empty.
   */
  made?: { dev: number; ino: number };
}

/**
 * What tells the file penguin created from one that took its name or was
 * changed since: device and inode, modification and change times, size.
 */
export interface FileIds {
  /** Device. */
  dev: number;
  /** Inode. */
  ino: number;
  /** Modification time, ms since the epoch. */
  mtime: number;
  /** Status change time, ms since the epoch (no one can set it back). */
  ctime: number;
  /** Size in bytes. */
  size: number;
}

/** A stand-in this process holds: the stand-in itself, open and share-locked. */
export interface RegistryHold {
  /** The stand-in's path. */
  path: string;
  /** The record's key. */
  key: string;
  /** The stand-in, share-locked while held. */
  ref: Deno.FsFile;
}

/**
 * A plan's look at the disk went stale before its sandbox could start: a
 * path it took for the user's file was a stand-in that its last holder
 * removed meanwhile. Plan again.
 */
export class StalePlanError extends Error {
  constructor(path: string, moved = false) {
    super(
      moved
        ? `"${path}" no longer lies in the directory the plan saw (a directory on the way was ` +
          `renamed) while the sandbox was being set up`
        : `"${path}" was removed while the sandbox was being set up`,
    );
    this.name = "StalePlanError";
  }
}

/** Records this large are not read (one holds a path and a short content). */
const MAX_RECORD_BYTES = 64 * 1024;
/** Records one sweep looks at. */
const MAX_SWEPT = 1000;

let dir: Promise<string> | undefined;

async function ensurePrivate(path: string, uid: number | null): Promise<boolean> {
  try {
    await Deno.mkdir(path, { recursive: true, mode: 0o700 });
    const info = await Deno.lstat(path);
    return info.isDirectory && (uid === null || info.uid === uid) &&
      ((info.mode ?? 0) & 0o077) === 0;
  } catch {
    return false;
  }
}

async function findDir(): Promise<string> {
  const override = Deno.env.get("PENGUIN_RUN_DIR");
  if (override !== undefined && override !== "") {
    const path = join(override, "stand-ins");
    if (override.startsWith("/") && await ensurePrivate(path, Deno.uid())) {
      // Noted before anything is kept there, so that other penguin processes hide it too.
      await noteRunDir(dirname(path));
      return path;
    }
    throw new Error(
      `PENGUIN_RUN_DIR "${override}" is not an absolute path where penguin can keep a private ` +
        `directory of this user`,
    );
  }
  return await defaultDir();
}

/** The registry directory of a penguin without `PENGUIN_RUN_DIR`. */
async function defaultDir(): Promise<string> {
  // One place for every penguin process of the user, whatever its HOME: each one hides it.
  const tmp = await privateTmpDir("stand-ins");
  if (tmp) return tmp;
  const home = Deno.env.get("HOME");
  if (home && home.startsWith("/") && home !== "/") {
    const path = join(home, ".penguin", "run", "stand-ins");
    if (await ensurePrivate(path, Deno.uid())) return path;
  }
  throw new Error(
    `penguin keeps the records of its stand-ins in "/tmp/penguin-<uid>/stand-ins" (or ` +
      `"~/.penguin/run/stand-ins" when /tmp cannot hold a private directory) and could create ` +
      `neither as a private directory of this user`,
  );
}

/**
 * The registry directory: `/tmp/penguin-<uid>/stand-ins` (private, 0700),
 * the same for every penguin process of the user whatever its `HOME`, or
 * `~/.penguin/run/stand-ins` when `/tmp` cannot hold a private directory;
 * `$PENGUIN_RUN_DIR/stand-ins` when that is set. Rejects when none can be
 * made a private directory of this user (a plan cannot keep missing
 * protected paths missing without it).
 */
export function registryDir(): Promise<string> {
  dir ??= findDir().catch((err) => {
    dir = undefined;
    throw err;
  });
  return dir;
}

/**
 * penguin's private run directory, the registry's parent
 * (`/tmp/penguin-<uid>`): every plan hides it and pins the directories above
 * it inside writable roots, so no command can see, write, lock or rename its
 * way into what it holds (the registry, the seccomp filter file, the list of
 * data roots).
 */
export async function privateRunDir(): Promise<string> {
  return dirname(await registryDir());
}

/**
 * The default run directory (`/tmp/penguin-<uid>`, or `~/.penguin/run`
 * without a private `/tmp`): the same for every penguin process of the
 * user whatever its `PENGUIN_RUN_DIR`. Rejects when neither can be made.
 */
export async function defaultRunDir(): Promise<string> {
  return dirname(await defaultDir());
}

/**
 * Every directory a penguin process of this user may keep its run state in:
 * this process's, the default `/tmp/penguin-<uid>` and `~/.penguin/run`
 * when they exist (another penguin, started with another `PENGUIN_RUN_DIR`
 * or without a private `/tmp`, keeps it there), and every existing one
 * another penguin noted there as its `PENGUIN_RUN_DIR`. Every plan hides
 * them all.
 */
export async function privateRunDirs(): Promise<string[]> {
  const held = currentPlanScope();
  if (held !== undefined) return [...held.runDirs];
  const out: string[] = [];
  const own = await privateRunDir().catch(() => undefined);
  if (own) out.push(own);
  const uid = Deno.uid();
  const home = Deno.env.get("HOME");
  const others = [
    ...(uid !== null ? [`/tmp/penguin-${uid}`] : []),
    ...(home && home.startsWith("/") && home !== "/" ? [join(home, ".penguin", "run")] : []),
  ];
  const isDir = (d: string) => lstatOrNone(d)?.isDirectory === true;
  for (const dir of others) {
    if (!out.includes(dir) && await isDir(dir)) out.push(dir);
  }
  // The run directories of penguin processes started with PENGUIN_RUN_DIR, noted in the
  // default ones: a workspace may hold one of them.
  for (const dir of [...out]) {
    for (const noted of await notedRunDirs(dir)) {
      if (!out.includes(noted) && await isDir(noted)) out.push(noted);
    }
  }
  return out;
}

/**
 * Run `fn` with {@linkcode privateRunDirs} read once: every call inside it
 * (the plan asks dozens of times, through the repository trust records and
 * the budget ledger) answers the list read when it began. One plan works
 * with one list, as it takes its locks in one order; the next plan reads
 * it again.
 */
export async function withPlanScope<T>(fn: () => Promise<T>): Promise<T> {
  if (currentPlanScope() !== undefined) return fn();
  return runInPlanScope(await privateRunDirs(), fn);
}

/**
 * The real paths of the existing run directories other penguin processes
 * noted as their `PENGUIN_RUN_DIR` (in `/tmp/penguin-<uid>` and
 * `~/.penguin/run`), found without creating anything: the file tools refuse
 * them like the default ones. None where the lists cannot be read (a
 * confined tool worker: its host passes them on).
 */
export async function otherRunDirs(): Promise<string[]> {
  let uid: number | null;
  try {
    uid = Deno.uid();
  } catch {
    uid = null; // no sys access (a confined worker): only the home's run directory is looked at
  }
  let home: string | undefined;
  try {
    home = Deno.env.get("HOME");
  } catch {
    home = undefined;
  }
  const defaults = [
    ...(uid !== null ? [`/tmp/penguin-${uid}`] : []),
    ...(home && home.startsWith("/") && home !== "/" ? [join(home, ".penguin", "run")] : []),
  ];
  const out: string[] = [];
  for (const dir of defaults) {
    for (const noted of await notedRunDirs(dir)) {
      const real = realPathOrNone(noted);
      if (real !== undefined && !out.includes(real)) out.push(real);
    }
  }
  return out;
}

/** The list of run directories set with `PENGUIN_RUN_DIR`, kept in a default run directory. */
const RUN_DIRS_FILE = "run-dirs";

/** The run directories noted in `runDir`'s list (absolute paths); none when unreadable. */
function notedRunDirs(runDir: string): string[] {
  let text = "";
  try {
    text = Deno.readTextFileSync(join(runDir, RUN_DIRS_FILE));
  } catch {
    // unreadable: none
  }
  return [...new Set(text.split("\n").filter((l) => l.startsWith("/")))];
}

/**
 * Note `runDir` (this process's `PENGUIN_RUN_DIR`) in the list in the default
 * run directory (`/tmp/penguin-<uid>`, or `~/.penguin/run`), which every
 * plan of every penguin process reads ({@linkcode privateRunDirs}): another
 * session whose workspace holds `runDir` hides it like its own. The list is
 * rewritten (a new file renamed over the old one) under an exclusive lock
 * without the directories that are gone. Best effort: without a default run
 * directory there is no list.
 */
async function noteRunDir(runDir: string): Promise<void> {
  if (runDir.includes("\n")) return;
  let lock: Deno.FsFile | undefined;
  try {
    const top = dirname(await defaultDir());
    if (top === runDir) return;
    const path = join(top, RUN_DIRS_FILE);
    lock = await Deno.open(`${path}.lock`, { read: true, write: true, create: true, mode: 0o600 });
    await lock.lock(true);
    const known = await notedRunDirs(top);
    const alive: string[] = [];
    for (const d of known) {
      if (d !== runDir && existsNow(d)) alive.push(d);
    }
    if (known.includes(runDir) && alive.length === known.length - 1) return;
    // Every directory that still exists stays noted, however many: one dropped would no longer
    // be hidden from other sessions (attack round 17 bounded L4b), nor its budget counted (L4).
    const list = [...alive, runDir];
    const tmp = `${path}.${crypto.randomUUID()}.tmp`;
    await Deno.writeTextFile(tmp, list.map((d) => `${d}\n`).join(""), { mode: 0o600 });
    await Deno.rename(tmp, path);
  } catch {
    // Best effort, like the list of data roots.
  } finally {
    lock?.close();
  }
}

/** The registry key of `path`: a hash, so any path makes a plain file name. */
async function keyOf(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(path));
  return hexOf(new Uint8Array(digest).subarray(0, 16));
}

/** In-process queue in front of the registry lock (one open lock file at a time). */
let queue: Promise<unknown> = Promise.resolve();

/** Run `fn` holding the registry's exclusive lock; bumps the generation when `fn` says so. */
function locked<T>(
  fn: (dir: string) => Promise<{ value: T; changed: boolean }>,
  at?: string,
): Promise<T> {
  const run = async () => {
    const d = at ?? await registryDir();
    const lock = await lockFile(join(d, "registry.lock"));
    try {
      const { value, changed } = await fn(d);
      if (changed) await bump(d);
      return value;
    } finally {
      lock.close();
    }
  };
  const next = queue.then(run, run);
  queue = next.catch(() => {});
  return next;
}

async function bump(d: string): Promise<void> {
  const n = Number(await Deno.readTextFile(join(d, "generation")).catch(() => "0")) || 0;
  await Deno.writeTextFile(join(d, "generation"), String(n + 1), { mode: 0o600 });
}

/**
 * The registry's generation: it changes with every stand-in created or
 * removed by any penguin process. Two equal readings around a look at the
 * registry and the disk mean nothing came or went in between.
 */
export async function registryGeneration(): Promise<string> {
  const d = await registryDir();
  try {
    return readTextNow(join(d, "generation"));
  } catch {
    return "0";
  }
}

function idsOf(info: Deno.FileInfo): FileIds | undefined {
  if (info.dev === null || info.ino === null || info.mtime === null || info.ctime === null) {
    return undefined;
  }
  return {
    dev: info.dev,
    ino: info.ino,
    mtime: info.mtime.getTime(),
    ctime: info.ctime.getTime(),
    size: info.size,
  };
}

function sameIds(a: FileIds | undefined, b: FileIds): boolean {
  return a !== undefined && a.dev === b.dev && a.ino === b.ino && a.mtime === b.mtime &&
    a.ctime === b.ctime && a.size === b.size;
}

/** The identity of the file at `path` (not following a link), if it has one. */
export function fileIds(path: string): Promise<FileIds | undefined> {
  return Deno.lstat(path).then(idsOf, () => undefined);
}

/** What lies at `record.path`: missing, the stand-in the record describes, or something else. */
async function stateOf(record: StandInRecord): Promise<"missing" | "stand-in" | "other"> {
  let info: Deno.FileInfo;
  try {
    info = lstatNow(record.path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return "missing";
    }
    return "other";
  }
  const kindOk = record.kind === "dir" ? info.isDirectory : info.isFile;
  if (!kindOk) return "other";
  if (record.ids) return sameIds(idsOf(info), record.ids) ? "stand-in" : "other";
  if (record.made) {
    // Made, never opened (see makeStandIns): that file, still empty.
    const same = info.dev === record.made.dev && info.ino === record.made.ino;
    const empty = record.kind === "dir" ? await isEmptyDir(record.path) : info.size === 0;
    return same && empty ? "stand-in" : "other";
  }
  // Recorded, but the process creating it died before writing its identity: judged by shape.
  if (record.kind === "dir") return await isEmptyDir(record.path) ? "stand-in" : "other";
  return await holdsExactly(record.path, record.content ?? "") ? "stand-in" : "other";
}

/**
 * Whether `path` is a regular file holding exactly `content`. Opened for
 * reading and writing, which never blocks, should it have been swapped for
 * a FIFO after the look at it.
 */
async function holdsExactly(path: string, content: string): Promise<boolean> {
  const file = await tryOpen(path, { read: true, write: true });
  if (file === null) return false;
  try {
    return await readsExactly(file, content);
  } finally {
    file.close();
  }
}

function readRecord(d: string, key: string): StandInRecord | undefined {
  try {
    const path = join(d, `${key}.json`);
    const info = Deno.lstatSync(path);
    if (!info.isFile || info.size > MAX_RECORD_BYTES) return undefined;
    const r = JSON.parse(Deno.readTextFileSync(path)) as StandInRecord;
    if (typeof r?.path !== "string" || (r.kind !== "dir" && r.kind !== "file")) return undefined;
    return r;
  } catch {
    return undefined;
  }
}

async function writeRecord(d: string, key: string, record: StandInRecord): Promise<void> {
  const tmp = join(d, `${key}.json.tmp`);
  await Deno.writeTextFile(tmp, JSON.stringify(record), { mode: 0o600 });
  await Deno.rename(tmp, join(d, `${key}.json`));
}

async function dropRecord(d: string, key: string): Promise<void> {
  await Deno.remove(join(d, `${key}.json`)).catch(() => {});
}

/** Whether `file` is still the file at `path` (not removed or replaced since it was opened). */
async function sameFile(file: Deno.FsFile, path: string): Promise<boolean> {
  const [a, b] = await Promise.all([
    file.stat().catch(() => undefined),
    Deno.lstat(path).catch(() => undefined),
  ]);
  return a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino;
}

/**
 * Share-lock the stand-in at `path` for this process; undefined when it is
 * gone meanwhile. Never waits on another holder: {@linkcode LockBusyError}
 * when one keeps it exclusively (see `_lock_open.ts`).
 */
async function shareLock(path: string): Promise<Deno.FsFile | undefined> {
  const file = await openForLock(path);
  if (!file) return undefined;
  try {
    await shareLockNoWait(file, path);
  } catch (err) {
    file.close();
    throw err;
  }
  if (await sameFile(file, path)) return file;
  file.close();
  return undefined;
}

/** A stand-in wanted: where and what. */
export interface StandInWant {
  /** Absolute path (its parent a real path). */
  path: string;
  /** An empty directory or a file with `content`. */
  kind: "dir" | "file";
  /** File content (files only). */
  content?: string;
}

/**
 * Records kept because their stand-in's parent no longer lay at its path
 * when this process let go (renamed, or swapped for a link): retried at
 * this process's next release, and by every sweep.
 */
const strays = new Set<string>();

/** What making a stand-in gave: see {@linkcode makeStandIns}. */
type Made =
  | Deno.FsFile
  | "exists"
  | "moved"
  | { stray: { dev: number; ino: number } }
  | { busy: Deno.FsFile };

/**
 * Make the stand-ins of `wants` (recorded already) inside their parents,
 * in one shell (see `_standin_ops.ts`), and share-lock each one made. Per
 * want: the held file, `exists` (someone made the name meanwhile), `moved`
 * (its parent no longer lies at its path: nothing made), a `stray`: made,
 * but its path led elsewhere right after, and its parent had moved again
 * when it was taken back (it is left where it was made, to be removed later),
 * or `busy`: made and open, but another process (a command of a session whose
 * workspace holds it) locked it first, exclusively: not waited for.
 */
async function makeStandIns(wants: readonly StandInWant[]): Promise<Made[]> {
  const results = await applyStandInOps(wants.map((w) => ({ op: w.kind, path: w.path })));
  const out: Made[] = [];
  const undo: StandInOp[] = [];
  const undone: { at: number; dev: number; ino: number }[] = [];
  for (const [i, w] of wants.entries()) {
    const r = results[i]!;
    if (r.result !== "made") {
      if (r.result === "failed") {
        throw new Error(`penguin could not create its stand-in "${w.path}"`);
      }
      out.push(r.result === "exists" ? "exists" : "moved");
      continue;
    }
    const file = w.kind === "dir"
      ? await openForLock(w.path).then(async (f) => {
        const info = await f?.stat().catch(() => undefined);
        if (f && info?.dev === r.dev && info?.ino === r.ino) return f;
        f?.close();
        return undefined;
      })
      : await writeContent(w.path, r, w.content ?? "");
    if (!file) {
      // Made, but its path led elsewhere right after: taken back where it was made.
      undo.push({ op: w.kind === "dir" ? "rmdir" : "rm0", path: w.path, dev: r.dev, ino: r.ino });
      undone.push({ at: out.length, dev: r.dev, ino: r.ino });
      out.push("moved");
      continue;
    }
    if (await shareLockNoWait(file, w.path).then(() => true, () => false)) out.push(file);
    else out.push({ busy: file });
  }
  for (const [j, r] of (await applyStandInOps(undo)).entries()) {
    if (r.result === "moved" || r.result === "failed") {
      const { at, dev, ino } = undone[j]!;
      out[at] = { stray: { dev, ino } };
    }
  }
  return out;
}

/** Keep the record of a stray (see {@linkcode makeStandIns}) for a later removal. */
async function keepStray(
  d: string,
  key: string,
  p: StandInWant,
  made: { dev: number; ino: number },
): Promise<void> {
  const record: StandInRecord = { path: p.path, kind: p.kind, made };
  if (p.kind === "file") record.content = p.content ?? "";
  await writeRecord(d, key, record);
  strays.add(key);
}

/** The outcome of {@linkcode holdInRegistry}: a hold per want (or none), and a path whose parent moved. */
export interface HoldOutcome {
  /** The hold of each want, in order; undefined where the path is the user's, or not made. */
  holds: (RegistryHold | undefined)[];
  /** The plan went stale: a stand-in it took for one was removed, or a parent moved. */
  stale?: StalePlanError;
  /** A stand-in another process keeps locked exclusively (see `_lock_open.ts`): refuse. */
  busy?: LockBusyError;
}

/** The record of the stand-in `p`, with its identity once created. */
function recordOf(p: StandInWant, ids?: FileIds): StandInRecord {
  const record: StandInRecord = { path: p.path, kind: p.kind };
  if (ids) record.ids = ids;
  if (p.kind === "file") record.content = p.content ?? "";
  return record;
}

/**
 * Hold the stand-ins for `wants` in the registry: create each one whose path
 * is missing, join it when it is a stand-in already (of any process, living
 * or dead), recreate it when its record outlived it. No hold where the path
 * is something else (the user's own file). The plan went stale when a
 * stand-in it saw is gone, or a parent no longer lies at its path: the
 * holds made are returned all the same, for the caller to let go.
 */
// Long because: one pass under the registry lock looks at, records, makes and locks the stand-ins.
export function holdInRegistry(wants: readonly StandInWant[]): Promise<HoldOutcome> {
  return locked(async (d) => {
    const holds: (RegistryHold | undefined)[] = wants.map(() => undefined);
    const making: { i: number; key: string; before: StandInRecord | undefined }[] = [];
    let stale: string | undefined;
    let busy: LockBusyError | undefined;
    for (const [i, p] of wants.entries()) {
      const key = await keyOf(p.path);
      const recorded = await readRecord(d, key);
      const state = recorded ? await stateOf(recorded) : "other";
      const missing = state === "missing" ||
        (!recorded && await Deno.lstat(p.path).then(() => false, () => true));
      if (!missing && state !== "stand-in") continue;
      if (!missing) {
        const ref = await shareLock(p.path).catch((err) => {
          if (err instanceof LockBusyError) busy = err;
          else throw err;
        });
        if (busy) break;
        // Removed meanwhile by a holder whose records are kept elsewhere: plan again.
        if (ref) holds[i] = { path: p.path, key, ref };
        else stale ??= p.path;
        continue;
      }
      // Recorded before it exists: a crash between the two leaves a record, never an orphan.
      await writeRecord(d, key, recordOf(p));
      making.push({ i, key, before: recorded });
    }
    if (busy) {
      // The command is refused: nothing is made, and the records go back to what they were.
      for (const m of making) {
        if (m.before) await writeRecord(d, m.key, m.before);
        else await dropRecord(d, m.key);
      }
      return { value: { holds, busy }, changed: making.length > 0 };
    }
    let moved: string | undefined;
    const made = await makeStandIns(making.map((m) => wants[m.i]!));
    for (const [j, m] of making.entries()) {
      const p = wants[m.i]!;
      const file = made[j]!;
      if (file === "exists" && m.before) {
        // A stand-in recorded lay elsewhere when looked at (its parent had moved): it stays
        // recorded, and the plan is made again.
        await writeRecord(d, m.key, m.before);
        moved ??= p.path;
      } else if (file === "exists") {
        // Someone outside penguin made the name meanwhile: it is theirs.
        await dropRecord(d, m.key);
      } else if (file === "moved") {
        // A record of a stand-in that lies where the parent went stays for a later removal.
        if (m.before) await writeRecord(d, m.key, m.before);
        else await dropRecord(d, m.key);
        moved ??= p.path;
      } else if ("stray" in file) {
        await keepStray(d, m.key, p, file.stray);
        moved ??= p.path;
      } else if ("busy" in file) {
        // Made, but a command locked it first: recorded (a sweep removes it once no process
        // holds it), not held, and the command is refused.
        await writeRecord(d, m.key, recordOf(p, idsOf(await file.busy.stat())));
        file.busy.close();
        busy ??= new LockBusyError(p.path, "locked");
      } else {
        await writeRecord(d, m.key, recordOf(p, idsOf(await file.stat())));
        holds[m.i] = { path: p.path, key: m.key, ref: file };
      }
    }
    const out: HoldOutcome = busy ? { holds, busy } : { holds };
    if (moved !== undefined) out.stale = new StalePlanError(moved, true);
    else if (stale !== undefined) out.stale = new StalePlanError(stale);
    return { value: out, changed: making.length > 0 };
  });
}

/**
 * Put a held stand-in back when someone removed it meanwhile (a `git clean`,
 * a test resetting the workspace): bubblewrap needs a source to mount. Made
 * inside its parent, never through a path that leads elsewhere now. Rejects
 * with {@linkcode LockBusyError} when another process keeps what stands there
 * now locked exclusively: the hold keeps what it had, and the command is
 * refused.
 */
export async function restoreInRegistry(hold: RegistryHold, p: StandInWant): Promise<void> {
  const busy = await locked(async (d) => {
    const none = { value: undefined, changed: false };
    if (await sameFile(hold.ref, p.path)) return none;
    if (existsNow(p.path)) {
      // The lock follows what replaced it, so that no other penguin removes it while mounted.
      const ref = await shareLock(p.path);
      if (ref) {
        hold.ref.close();
        hold.ref = ref;
      }
      return none;
    }
    // Still linked where it was made: the path leads elsewhere for now (a directory on the way
    // moved). Its record stays as it is; another one made now would take its place.
    const held = await hold.ref.stat().catch(() => undefined);
    if (held && (held.nlink ?? 1) > 0) return none;
    const before = await readRecord(d, hold.key);
    await writeRecord(d, hold.key, recordOf(p));
    const [file] = await makeStandIns([p]);
    let busy: LockBusyError | undefined;
    if (file !== undefined && typeof file !== "string" && "stray" in file) {
      await keepStray(d, hold.key, p, file.stray);
    } else if (file === undefined || typeof file === "string") {
      if (before) await writeRecord(d, hold.key, before);
      else await dropRecord(d, hold.key);
    } else if ("busy" in file) {
      // Recorded for a later sweep; the hold keeps the file it had, so the next try locks again.
      await writeRecord(d, hold.key, recordOf(p, idsOf(await file.busy.stat())));
      file.busy.close();
      busy = new LockBusyError(p.path, "locked");
    } else {
      await writeRecord(d, hold.key, recordOf(p, idsOf(await file.stat())));
      hold.ref.close();
      hold.ref = file;
    }
    return { value: busy, changed: true };
  });
  if (busy) throw busy;
}

/** A record being let go: the file taken for its stand-in (exclusively locked), if any. */
interface Letting {
  key: string;
  record: StandInRecord;
  file?: Deno.FsFile | undefined;
}

/** Whether the directory `path` lies in exists (a link there counts: it may be a swap). */
function parentExists(path: string): boolean {
  return existsNow(dirname(path));
}

/**
 * Whether `file` (open, exclusively locked) is the stand-in `record`
 * describes: its identity when recorded; else, judged by shape at the path.
 */
async function isStandIn(file: Deno.FsFile, record: StandInRecord): Promise<boolean> {
  const info = await file.stat().catch(() => undefined);
  if (!info) return false;
  if (record.ids) {
    // The content too: identities can be read by anyone who may stat the file, and a record a
    // model forged (in a run directory it made before a penguin used it) named a user's file
    // outside every workspace, which the sweep removed (attack round 25 concgit c09).
    return sameIds(idsOf(info), record.ids) &&
      (record.kind !== "file" || await readsExactly(file, record.content ?? ""));
  }
  return await sameFile(file, record.path) && await stateOf(record) === "stand-in";
}

/** Whether the open regular `file` holds exactly `content` (read from its start). */
async function readsExactly(file: Deno.FsFile, content: string): Promise<boolean> {
  const want = new TextEncoder().encode(content);
  try {
    const info = await file.stat();
    if (!info.isFile || info.size !== want.length) return false;
    await file.seek(0, Deno.SeekMode.Start);
    const got = new Uint8Array(want.length + 1);
    let n = 0;
    while (n < got.length) {
      const r = await file.read(got.subarray(n));
      if (r === null) break;
      n += r;
    }
    return n === want.length && want.every((b, i) => b === got[i]);
  } catch {
    return false;
  }
}

/**
 * Remove the stand-ins of `items` (no process holds them: each `file` is
 * exclusively locked) when unchanged and of a shape `accept` takes, inside
 * their parents, in one shell; drop the records then, or when the name is
 * gone or holds something else. A record whose parent no longer lies at its
 * path stays (a stray, retried later). The files are closed.
 */
async function removeStandIns(
  d: string,
  items: readonly Letting[],
  accept: (r: StandInRecord) => boolean,
  own = true,
): Promise<string[]> {
  const stuck: string[] = [];
  const ops: StandInOp[] = [];
  const acting: Letting[] = [];
  try {
    for (const it of items) {
      const info = it.file ? await it.file.stat().catch(() => undefined) : undefined;
      if (it.file && info && await isStandIn(it.file, it.record)) {
        if (!accept(it.record)) continue;
        const op = it.record.kind === "dir" ? "rmdir" : "rm";
        ops.push({ op, path: it.record.path, dev: info.dev ?? -1, ino: info.ino ?? -1 });
      } else if (it.record.made && !it.record.ids) {
        // Made but never opened: removed where it was made while still that one, and empty.
        const op = it.record.kind === "dir" ? "rmdir" : "rm0";
        ops.push({ op, path: it.record.path, ...it.record.made });
      } else {
        // Gone or something else at the path, unless the path leads elsewhere now.
        ops.push({
          op: "check",
          path: it.record.path,
          dev: it.record.ids?.dev,
          ino: it.record.ids?.ino,
        });
      }
      acting.push(it);
    }
    const results = await applyStandInOps(ops);
    for (const [i, it] of acting.entries()) {
      const r = results[i]!.result;
      if (r === "moved" || r === "same" || r === "failed") {
        if (own) {
          strays.add(it.key);
          stuck.push(it.record.path);
        } else if (!await parentExists(it.record.path)) {
          // Another process's stand-in whose directory is gone (deleted, or renamed away with
          // the stand-in inside): nothing is left at its path to remove, so the record goes.
          await dropRecord(d, it.key);
        }
      } else {
        strays.delete(it.key);
        await dropRecord(d, it.key);
      }
    }
  } finally {
    for (const it of items) it.file?.close();
  }
  return stuck;
}

/**
 * The records of `keys` no process holds, each with its path's file
 * exclusively locked (opened by path: the removal checks it is the one
 * recorded, inside its parent). Records of held stand-ins are left out;
 * unreadable ones dropped.
 */
async function unheldByPath(d: string, keys: readonly string[]): Promise<Letting[]> {
  const out: Letting[] = [];
  for (const key of keys) {
    const record = await readRecord(d, key);
    if (!record) {
      await dropRecord(d, key);
      strays.delete(key);
      continue;
    }
    // One that cannot be opened at once is taken for held: it is looked at again later.
    const file = await openForLock(record.path).catch((err) => {
      if (err instanceof LockBusyError) return null;
      throw err;
    });
    if (file === null) continue;
    if (file && !await file.tryLock(true).then((ok) => ok, () => false)) {
      file.close(); // another process holds it
      continue;
    }
    out.push({ key, record, file });
  }
  return out;
}

/**
 * Let go of `holds`: each stand-in is removed when no other process holds it
 * any more and it is still exactly what penguin created, inside its parent
 * (see `_standin_ops.ts`); one whose parent moved keeps its record. Strays
 * of this process are retried. The paths of those that could not be removed.
 */
export function releaseInRegistry(holds: readonly RegistryHold[]): Promise<string[]> {
  return locked(async (d) => {
    const items: Letting[] = [];
    for (const hold of holds) {
      const record = await readRecord(d, hold.key);
      // The lock taken on the file held (not looked up by path again): exclusive when alone.
      const alone = await hold.ref.tryLock(true).then((ok) => ok, () => false);
      if (!record || !alone) {
        hold.ref.close();
        if (!record) await dropRecord(d, hold.key);
        continue;
      }
      items.push({ key: hold.key, record, file: hold.ref });
    }
    const mine = new Set(holds.map((h) => h.key));
    const retried = [...strays].filter((k) => !mine.has(k));
    items.push(...await unheldByPath(d, retried));
    return { value: await removeStandIns(d, items, () => true), changed: true };
  });
}

/**
 * Try again to remove this process's strays (stand-ins whose directory no
 * longer lay at its path when they were let go) that no process holds. The
 * paths of those still left.
 */
export async function retryStrays(): Promise<string[]> {
  if (strays.size === 0) return [];
  return await locked(async (d) => ({
    value: await removeStandIns(d, await unheldByPath(d, [...strays]), () => true),
    changed: true,
  }));
}

/**
 * Share-lock each existing directory or regular file of `paths` (what a
 * plan protects besides its own stand-ins) until the returned function runs:
 * any of them may be another penguin's stand-in that this process took for
 * the user's file (another `HOME`, another user), and the lock keeps that
 * one from removing it while this sandbox mounts it. Rejects with
 * {@linkcode StalePlanError} when a path was removed or replaced before
 * its lock was taken (its holder let go meanwhile): plan again; with
 * {@linkcode LockBusyError} when another process keeps one locked
 * exclusively (a command of a session whose workspace holds it can), or it
 * could not be opened at once: never waited for (attack round 28 E e02).
 */
export async function lockProtected(paths: readonly string[]): Promise<() => void> {
  const files: Deno.FsFile[] = [];
  const release = () => {
    for (const f of files.splice(0)) f.close();
  };
  try {
    for (const path of paths) {
      const file = await openForLock(path);
      if (!file) continue;
      files.push(file);
      if (heldAsUsers.size < MAX_SWEPT) heldAsUsers.add(path);
      await shareLockNoWait(file, path);
      if (!await sameFile(file, path)) throw new StalePlanError(path);
    }
  } catch (err) {
    release();
    throw err;
  }
  return release;
}

/**
 * The paths that are stand-ins right now (recorded, and still what was
 * created, or being created), of any penguin process. They count as missing
 * to a plan: they are penguin's, not the user's.
 */
export async function registeredStandIns(): Promise<Set<string>> {
  const d = await registryDir();
  const out = new Set<string>();
  let n = 0;
  for (const e of listDirNow(d)) {
    if (!e.isFile || !e.name.endsWith(".json") || ++n > MAX_SWEPT) continue;
    const record = await readRecord(d, e.name.slice(0, -".json".length));
    if (record && await stateOf(record) !== "other") out.add(record.path);
  }
  return out;
}

/**
 * Remove the stand-ins no living penguin process holds (their holder was
 * killed or crashed), when still exactly what was created and of a shape
 * `accept` takes; drop the records of those gone or changed. Never rejects.
 */
export async function sweepRegistry(accept: (r: StandInRecord) => boolean): Promise<void> {
  try {
    const d = await registryDir();
    const keys: string[] = [];
    for (const e of listDirNow(d)) {
      if (e.isFile && e.name.endsWith(".json") && keys.length < MAX_SWEPT) {
        keys.push(e.name.slice(0, -".json".length));
      }
    }
    if (keys.length === 0) return;
    await locked(async () => {
      // Not this process's: what cannot be removed stays recorded for a later sweep, but is
      // neither retried nor reported by this process.
      await removeStandIns(d, await unheldByPath(d, keys), accept, false);
      return { value: undefined, changed: true };
    });
  } catch {
    // A sweep that cannot run leaves the stand-ins for the next one.
  }
}

/**
 * The registries of the user's other run directories (the default ones and those other penguin
 * processes noted as their `PENGUIN_RUN_DIR`): private directories of this user only.
 */
async function otherRegistries(): Promise<string[]> {
  const own = await registryDir().catch(() => undefined);
  const uid = Deno.uid();
  const out: string[] = [];
  for (const run of await privateRunDirs()) {
    const d = join(run, "stand-ins");
    const info = lstatOrNone(d);
    if (d === own || out.includes(d) || !info?.isDirectory) continue;
    if ((uid !== null && info.uid !== uid) || ((info.mode ?? 0) & 0o077) !== 0) continue;
    out.push(d);
  }
  return out;
}

/**
 * The paths this process share-locked as the user's files ({@linkcode lockProtected}): any of
 * them may be a stand-in of another penguin, recorded in another run directory's registry.
 */
const heldAsUsers = new Set<string>();

/**
 * Remove what this process held as the user's files and a registry of the user's records as
 * another penguin's stand-in, once no process holds it: that penguin made it and ended while this
 * one's command had it mounted, so it could not remove it, and nothing would until a later
 * penguin's sweep (attack round 25 concgit c01, another `PENGUIN_RUN_DIR`: never; round 26 A11, a
 * session on a directory inside this one's workspace, same run directory: an empty `.git` and an
 * inert `penguin.jsonc` left in the workspace after both sessions ended). Only such paths are
 * looked at, and only while still exactly what was created and of a shape `accept` takes. Never
 * rejects.
 */
export async function sweepHeldAsUsers(accept: (r: StandInRecord) => boolean): Promise<void> {
  if (heldAsUsers.size === 0) return;
  try {
    const keys = await Promise.all([...heldAsUsers].map((p) => keyOf(p)));
    for (const d of [await registryDir(), ...await otherRegistries()]) {
      const here = keys.filter((k) => readRecord(d, k) !== undefined);
      if (here.length === 0) continue;
      await locked(async () => {
        await removeStandIns(d, await unheldByPath(d, here), accept, false);
        return { value: undefined, changed: true };
      }, d);
    }
  } catch {
    // Left for a later penguin of that run directory.
  }
}
