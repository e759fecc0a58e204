/**
 * The journal of the stand-ins this process holds (see `_placeholders.ts`),
 * so that the ones a killed or crashed penguin left in a workspace can be
 * told from the user's own files and removed by a later penguin.
 *
 * Each process keeps one file, `<pidns>-<pid>-<start>.json`, in a private
 * per-user directory under the host's `/tmp` (see `_private_tmp.ts`),
 * outside the workspace and every sandbox's view. `<start>` is the process's
 * start time (`/proc/<pid>/stat` field 22), so a reused pid is not taken for
 * the owner, and `<pidns>` its PID namespace: the files of another namespace
 * (a `/tmp` shared with a container) are never swept, its pids mean nothing
 * here. A stand-in is recorded before it is created, then with its identity
 * (device, inode, modification and change times, size) once it exists, and
 * dropped once it is released; the file is rewritten atomically (a new temporary file renamed
 * over it) and removed when nothing is held.
 *
 * {@linkcode sweepJournal} handles the files of owners that are gone: it
 * removes a stand-in only when it is still exactly what was created (same
 * identity; a directory that is still empty, a regular file holding exactly
 * the content written) and of a shape the caller accepts, and then drops the
 * file. Anything else is left where it is. Journal trouble (no private
 * directory, no `/proc`, a full disk, a corrupt file) only means less is
 * recorded or swept: it never fails a command.
 *
 * @module
 */
import { join } from "node:path";
import { privateTmpDir } from "./_private_tmp.ts";
import { processStarts, procFacts } from "./_proc_facts.ts";

/** A stand-in as recorded: where, what, and once created, which file it is. */
export interface JournalEntry {
  /** Absolute path. */
  path: string;
  /** An empty directory or a file with `content`. */
  kind: "dir" | "file";
  /** File content (files only). */
  content?: string;
  /** Device, inode and modification time (ms) once created. */
  ids?: FileIds;
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

const DIR_NAME = "stand-ins";
/** Journal files this large are not read (a process holds a handful of short entries). */
const MAX_JOURNAL_BYTES = 1 << 20;
/** Dead processes' journal files one sweep reads at most (the next process goes on). */
const MAX_SWEPT_FILES = 100;
/** Journal files one sweep looks at, live owners' included. */
const MAX_LISTED_FILES = 1000;

interface Self {
  dir: string;
  /** This process's PID namespace (the inode number of `/proc/self/ns/pid`). */
  ns: string;
  /** `<pidns>-<pid>-<start>`. */
  owner: string;
  file: string;
}

let self: Promise<Self | undefined> | undefined;
const entries = new Map<string, JournalEntry>();
let writing: Promise<void> = Promise.resolve();
let onDisk = false;
let tmpCounter = 0;

function whoAmI(): Promise<Self | undefined> {
  self ??= (async () => {
    const { pidns: ns, start } = await procFacts();
    const dir = ns && start ? await privateTmpDir(DIR_NAME) : undefined;
    if (dir === undefined) return undefined;
    const owner = `${ns}-${Deno.pid}-${start}`;
    return { dir, ns: ns!, owner, file: join(dir, `${owner}.json`) };
  })().catch(() => undefined);
  return self;
}

/** The journal directory, or undefined when this process keeps no journal. */
export async function journalDir(): Promise<string | undefined> {
  return (await whoAmI())?.dir;
}

/**
 * The journal file of process `pid` started at `start` in this PID namespace,
 * or undefined when this process keeps no journal.
 */
export async function journalFile(pid: number, start: string): Promise<string | undefined> {
  const me = await whoAmI();
  return me && join(me.dir, `${me.ns}-${pid}-${start}.json`);
}

async function writeJournal(): Promise<void> {
  const me = await whoAmI();
  if (me === undefined) return;
  if (entries.size === 0) {
    if (onDisk) await Deno.remove(me.file).catch(() => {});
    onDisk = false;
    return;
  }
  const text = JSON.stringify({ owner: me.owner, standIns: [...entries.values()] });
  for (const retry of [false, true]) {
    // A new name each time (createNew never follows a planted link), renamed over the journal.
    const tmp = `${me.file}.${tmpCounter++}.tmp`;
    try {
      await Deno.writeTextFile(tmp, text, { createNew: true, mode: 0o600 });
      await Deno.rename(tmp, me.file);
      onDisk = true;
      return;
    } catch (err) {
      await Deno.remove(tmp).catch(() => {});
      // A /tmp cleaner may have removed the directory during a long session: make it again.
      if (retry || !(err instanceof Deno.errors.NotFound)) return;
      if (await privateTmpDir(DIR_NAME) === undefined) return;
    }
  }
}

/** Write the journal as it is now (after any earlier write); never rejects. */
export function flushJournal(): Promise<void> {
  writing = writing.then(() => writeJournal().catch(() => {}));
  return writing;
}

/** Settles once every journal write started so far is done; never rejects. */
export function journalWritten(): Promise<void> {
  return writing;
}

/** Record stand-ins about to be created, and return once the journal holds them. */
export async function recordStandIns(
  list: readonly { path: string; kind: "dir" | "file"; content?: string }[],
): Promise<void> {
  if (await whoAmI() === undefined) return;
  for (const p of list) {
    if (entries.has(p.path)) continue;
    entries.set(p.path, {
      path: p.path,
      kind: p.kind,
      ...(p.kind === "file" ? { content: p.content ?? "" } : {}),
    });
  }
  await flushJournal();
}

/** Whether `path` is recorded (held, or about to be created). */
export function isRecorded(path: string): boolean {
  return entries.has(path);
}

function idsOf(info: Deno.FileInfo): FileIds | undefined {
  if (info.ino === null || info.mtime === null || info.ctime === null) return undefined;
  return {
    dev: info.dev,
    ino: info.ino,
    mtime: info.mtime.getTime(),
    ctime: info.ctime.getTime(),
    size: info.size,
  };
}

/** The identity of the file at `path` (not following a link), if it has one. */
export function fileIds(path: string): Promise<FileIds | undefined> {
  return Deno.lstat(path).then(idsOf, () => undefined);
}

/** Note the identity of the just created stand-in at `path` (written with the next flush). */
export function noteCreated(path: string, ids: FileIds | undefined): void {
  const entry = entries.get(path);
  if (entry === undefined) return;
  if (ids) entry.ids = ids;
  else delete entry.ids;
}

/** Drop `path` from the journal (written with the next flush). */
export function forgetStandIn(path: string): void {
  entries.delete(path);
}

function sameIds(info: Deno.FileInfo, ids: FileIds): boolean {
  const now = idsOf(info);
  return now !== undefined && now.dev === ids.dev && now.ino === ids.ino &&
    now.mtime === ids.mtime && now.ctime === ids.ctime && now.size === ids.size;
}

/**
 * Whether `path` is still the `kind` of file with identity `ids`: not
 * replaced, written, renamed away and back, nor (a directory) given entries
 * since, for those change its times.
 */
export async function isUnchanged(
  path: string,
  kind: "dir" | "file",
  ids: FileIds,
): Promise<boolean> {
  const info = await Deno.lstat(path).catch(() => undefined);
  return info !== undefined && (kind === "dir" ? info.isDirectory : info.isFile) &&
    sameIds(info, ids);
}

async function readAll(file: Deno.FsFile, max: number): Promise<Uint8Array | undefined> {
  const buf = new Uint8Array(max + 1);
  let n = 0;
  while (n < buf.length) {
    const got = await file.read(buf.subarray(n));
    if (got === null) break;
    n += got;
  }
  return n > max ? undefined : buf.subarray(0, n);
}

/**
 * The bytes of the regular file at `path`, at most `max` of them, or
 * undefined when it is anything else, larger, or (with `ids`) another file.
 * Opened for reading and writing, which never blocks, should the file have
 * been swapped for a FIFO after the look at it.
 */
async function readRegular(
  path: string,
  max: number,
  ids?: FileIds,
): Promise<Uint8Array | undefined> {
  const before = await Deno.lstat(path).catch(() => undefined);
  if (!before?.isFile || before.size > max || (ids && !sameIds(before, ids))) return undefined;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true, write: true });
  } catch {
    return undefined;
  }
  try {
    const info = await file.stat();
    if (!info.isFile || info.dev !== before.dev || info.ino !== before.ino) return undefined;
    return info.size > max ? undefined : await readAll(file, info.size);
  } catch {
    return undefined;
  } finally {
    file.close();
  }
}

/**
 * Whether `path` is a regular file holding exactly `content` (and, with
 * `ids`, still the file that was created).
 */
export async function holdsExactly(path: string, content: string, ids?: FileIds): Promise<boolean> {
  const want = new TextEncoder().encode(content);
  const got = await readRegular(path, want.length, ids);
  return got !== undefined && got.length === want.length && got.every((b, i) => b === want[i]);
}

function parseEntries(text: string): JournalEntry[] {
  const out: JournalEntry[] = [];
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return out;
  }
  const list = (data as { standIns?: unknown })?.standIns;
  if (!Array.isArray(list)) return out;
  for (const e of list as Partial<JournalEntry>[]) {
    if (typeof e?.path !== "string" || !e.path.startsWith("/")) continue;
    if (e.kind !== "dir" && (e.kind !== "file" || typeof e.content !== "string")) continue;
    const ids = e.ids;
    const keys = ["dev", "ino", "mtime", "ctime", "size"] as const;
    // Never created, or its identity never noted: whatever is there is left.
    if (typeof ids !== "object" || ids === null) continue;
    if (!keys.every((k) => typeof ids[k] === "number")) continue;
    out.push({
      path: e.path,
      kind: e.kind,
      ...(e.kind === "file" ? { content: e.content } : {}),
      ids: { dev: ids.dev, ino: ids.ino, mtime: ids.mtime, ctime: ids.ctime, size: ids.size },
    });
  }
  return out;
}

async function removeLeftover(
  e: JournalEntry,
  accept: (e: JournalEntry) => boolean,
): Promise<void> {
  if (!e.ids || !accept(e)) return;
  if (e.kind === "dir") {
    // remove() without recursive refuses a non-empty directory.
    if (await isUnchanged(e.path, "dir", e.ids)) await Deno.remove(e.path).catch(() => {});
  } else if (await holdsExactly(e.path, e.content ?? "", e.ids)) {
    await Deno.remove(e.path).catch(() => {});
  }
}

/**
 * Remove the stand-ins that processes no longer running left behind (only
 * those `accept` takes for stand-ins a plan makes, and only when unchanged)
 * and drop their journals. Files of running processes are not touched.
 * Never rejects.
 */
export async function sweepJournal(accept: (e: JournalEntry) => boolean): Promise<void> {
  try {
    const me = await whoAmI();
    if (me === undefined) return;
    const names: string[] = [];
    for await (const e of Deno.readDir(me.dir)) names.push(e.name);
    // The journal, or a newer one whose rename the owner did not live to see.
    const others = names.flatMap((name) => {
      const m = /^(\d+)-(\d+)-(\d+)\.json(?:\.\d+\.tmp)?$/.exec(name);
      if (!m || m[1] !== me.ns || name.startsWith(`${me.owner}.`)) return [];
      return [{ name, pid: Number(m[2]), start: m[3]! }];
    }).slice(0, MAX_LISTED_FILES);
    // A /proc that cannot be read counts as every owner alive: never sweep what may be held.
    const starts = await processStarts([...new Set(others.map((o) => o.pid))]);
    if (starts === undefined) return;
    let swept = 0;
    for (const { name, pid, start } of others) {
      if (starts.get(pid) === start) continue;
      if (++swept > MAX_SWEPT_FILES) break;
      const path = join(me.dir, name);
      const bytes = await readRegular(path, MAX_JOURNAL_BYTES);
      const text = bytes === undefined ? "" : new TextDecoder().decode(bytes);
      for (const e of parseEntries(text)) await removeLeftover(e, accept);
      await Deno.remove(path).catch(() => {});
    }
  } catch {
    // No journal to read: nothing swept.
  }
}
