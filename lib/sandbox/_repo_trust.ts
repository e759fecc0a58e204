/**
 * The user's repositories below a writable root, as the penguin sessions
 * working there at once share them (`git_nested.ts`): the record that tells
 * the user's repositories from the ones a command made.
 *
 * The first session that plans a sandbox for a root while no other penguin
 * session uses it takes the repositories its walk found (path and
 * `repoIdentity`) as the user's: the trusted set. Sessions that join later,
 * in this process or another one, inherit it. Every consistent walk of any
 * of them drops from it each repository it did not find at its path with its
 * identity (hidden, moved, changed): trust only shrinks, so a repository a
 * command parked somewhere the walk does not look (inside a `.git`) and put
 * back is checked like one it made.
 *
 * The record is `<run dir>/nested-repos/<sha-256 of the root>.json`, out of
 * every sandbox's reach (the run directory is hidden from each), changed
 * under an exclusive lock on `<key>.lock`. Each process writes it also in
 * the kept record directory, `nested-repos/` in penguin's key directory
 * (`PENGUIN_KEY_DIR`, else `~/.penguin`, hidden from every sandbox with the
 * key; `keptRecordDir`), and reads it there as another record directory:
 * the run directory lies in `/tmp`, which a reboot clears, and a penguin
 * killed mid-command before a reboot would otherwise leave the next one
 * nothing to tell the user's repositories from the ones its command made
 * (attack round 28 E e08). Processes started with different
 * run directories (`PENGUIN_RUN_DIR`) share a root all the same: each locks
 * the root's `<key>.lock` in every record directory it knows of
 * (`recordDirs`, in path order), trusts a repository only when every record
 * of the root there trusts it, and counts the `.active` locks of them all. Each process using the root holds
 * a shared `flock` on `<key>.active` while a session of it is open; the
 * kernel drops it when the process dies. The last session out (it gets the
 * exclusive lock) walks the root a last time (`endNestedRepoWatch` in
 * `git_nested.ts`) and removes the record only when that walk settled and
 * left nothing armed; otherwise the record stays, and the next penguin on
 * that root keeps its trusted set instead of taking whatever is there now as
 * the user's.
 *
 * A process joining a root also reads the records of the roots that contain
 * it or lie inside it (a penguin that died without its last walk on a parent
 * or a subdirectory): a repository in such a record's reach is trusted only
 * when that record trusts it as it is now, so a session on a subdirectory
 * does not take a repository a command made there for the user's; that holds
 * for the `.git` of the session's root and of the directories above it too
 * (`containingReach`).
 *
 * Outside a session (`standInsKept` false: a command run on its own, most
 * tests) nothing is recorded: the plan's own findings are all there is.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { holdLock } from "./_held_lock.ts";
import { indexRecord, keyOf, keysBelow, unindexRecord } from "./_repo_trust_index.ts";
import { collectRecordGarbage } from "./_repo_trust_gc.ts";
import { privateRunDir, privateRunDirs } from "./_standin_registry.ts";
import { currentPlanScope, forgetInPlan, memoInPlan } from "./_plan_scope.ts";
import { inside } from "./_paths.ts";
import { listDirNow, lstatOrNone, realPathOrNone } from "./_look.ts";
import { rootKeyDir } from "../state/root_mark.ts";

/** A repository as recorded: its entry and identity (`repoIdentity`). */
export interface TrustMark {
  entry: string;
  id: string;
}

/** The record of one root. */
interface TrustRecord {
  root: string;
  trusted: TrustMark[];
}

/** What this process holds for a root it joined. */
interface Member {
  /** The open `<key>.active`, share-locked. */
  active: Deno.FsFile;
  /** The writable roots and skipped directories of its last plan, for the last walk. */
  roots: readonly string[];
  skip: readonly string[];
}

/** Roots this process joined, by root. */
const members = new Map<string, Member>();

/** This process's record directory (`<run dir>/nested-repos`), made when missing. */
async function recordDir(): Promise<string> {
  const dir = join(await privateRunDir(), "nested-repos");
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * The kept record directory, `<key dir>/nested-repos` (private, made when
 * missing), by its real path: a reboot does not clear it. Undefined without
 * a key directory or when it cannot be made (the records are then kept in
 * the run directory only, as before).
 */
async function keptRecordDir(): Promise<string | undefined> {
  let keyDir: string | undefined;
  try {
    keyDir = rootKeyDir();
  } catch {
    return undefined;
  }
  if (keyDir === undefined) return undefined;
  const dir = join(keyDir, "nested-repos");
  try {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  } catch {
    return undefined;
  }
  const real = realPathOrNone(dir);
  return real !== undefined && lstatOrNone(real)?.isDirectory ? real : undefined;
}

/** The record directories: this process's (`own`), the kept one, and all of them in path order. */
interface RecordDirs {
  own: string;
  kept: string | undefined;
  all: string[];
}

/**
 * Every record directory: this process's, the kept one ({@linkcode keptRecordDir})
 * and the existing ones of every other run directory (`privateRunDirs`: the
 * default ones and every `PENGUIN_RUN_DIR` noted there), each once (by real
 * path), in path order, so that penguin processes started with different run
 * directories still share a root.
 */
async function recordDirs(): Promise<RecordDirs> {
  // Within one plan, found once (`withPlanScope`): the list of run directories does not change there.
  const found = await memoInPlan("recordDirs", findRecordDirs);
  return { own: found.own, kept: found.kept, all: [...found.all] };
}

async function findRecordDirs(): Promise<RecordDirs> {
  const own = realPathOrNone(await recordDir()) ?? await recordDir();
  const all = [own];
  const found = await keptRecordDir();
  const kept = found === own ? undefined : found;
  if (kept !== undefined) all.push(kept);
  for (const runDir of await privateRunDirs().catch(() => [] as string[])) {
    const dir = realPathOrNone(join(runDir, "nested-repos"));
    if (dir !== undefined && !all.includes(dir) && lstatOrNone(dir)?.isDirectory) all.push(dir);
  }
  return { own, kept, all: all.sort() };
}

/** The files of `root` in the record directory `dir`. */
function filesIn(dir: string, key: string) {
  return {
    record: join(dir, `${key}.json`),
    lock: join(dir, `${key}.lock`),
    active: join(dir, `${key}.active`),
  };
}

/** `root`'s files in every record directory, this process's (`own`) first. */
interface RootFiles {
  own: ReturnType<typeof filesIn>;
  /** In the kept record directory (also among `others`): written with `own`'s. */
  kept: ReturnType<typeof filesIn> | undefined;
  others: ReturnType<typeof filesIn>[];
}

async function pathsOf(root: string): Promise<RootFiles> {
  const { own, kept, all } = await recordDirs();
  const key = await keyOf(root);
  return {
    own: filesIn(own, key),
    kept: kept === undefined ? undefined : filesIn(kept, key),
    others: all.filter((d) => d !== own).map((d) => filesIn(d, key)),
  };
}

/**
 * Lock `root` in every record directory, in path order (every process takes
 * them in the same order): this process's lock file is made when missing,
 * another directory's is locked when it exists (a process there has used the
 * root). Closing the returned files releases them.
 */
async function lockRoot(files: RootFiles): Promise<{ close(): void }> {
  const paths = [files.own.lock, ...files.others.map((f) => f.lock)].sort();
  const held: Deno.FsFile[] = [];
  try {
    for (const path of paths) {
      // Another directory's lock file is locked only when it exists (a process there has used
      // the root); one deleted meanwhile by the garbage collection is none. The kept directory's
      // is made, as this process's: the record is written there too.
      const own = path === files.own.lock || path === files.kept?.lock;
      const file = await holdLock(path, { create: own, exclusive: true, wait: true });
      if (typeof file !== "string") held.push(file);
    }
  } catch (err) {
    for (const f of held) f.close();
    throw err;
  }
  return { close: () => held.forEach((f) => f.close()) };
}

/** Whether a process of another run directory holds `root` (its `.active` is share-locked). */
async function activeElsewhere(files: RootFiles): Promise<boolean> {
  for (const f of files.others) {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(f.active, { read: true });
    } catch {
      continue;
    }
    try {
      if (!await file.tryLock(true).then((ok) => ok, () => false)) return true;
    } finally {
      file.close();
    }
  }
  return false;
}

/**
 * `root`'s trusted set as every record directory's record of it has it: a
 * repository is trusted only when each record there trusts it (undefined:
 * no record). This process's record must be readable; another one that is
 * not is skipped.
 */
async function readMerged(files: RootFiles, root: string): Promise<TrustRecord | undefined> {
  const recs: TrustRecord[] = [];
  const own = await readRecord(files.own.record, root);
  if (own) recs.push(own);
  for (const f of files.others) {
    const rec = await readRecord(f.record, root).catch(() => undefined);
    if (rec) recs.push(rec);
  }
  if (recs.length === 0) return undefined;
  return { root, trusted: recs[0]!.trusted.filter((m) => recs.every((r) => holds(r.trusted, m))) };
}

async function readRecord(path: string, root: string): Promise<TrustRecord | undefined> {
  // Most looked for are missing (a plan looks for one per directory above its root): a failed
  // `lstat` answers at once, where a failed read goes through the thread pool.
  if (lstatOrNone(path) === undefined) return undefined;
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
  const rec = JSON.parse(text) as TrustRecord;
  if (rec.root !== root || !Array.isArray(rec.trusted)) {
    throw new Error(`the record ${path} is not the record of "${root}"`);
  }
  return rec;
}

/**
 * Write the record in this process's record directory and in the kept one
 * ({@linkcode writeRecordAt}); a kept record that cannot be written is
 * removed: an old one could still trust a repository the walks have dropped
 * since (without one, a reboot leaves the next penguin what it left before).
 */
async function writeRecord(files: RootFiles, rec: TrustRecord): Promise<void> {
  await writeRecordAt(files.own.record, rec);
  if (files.kept === undefined) return;
  try {
    await writeRecordAt(files.kept.record, rec);
  } catch {
    await Deno.remove(files.kept.record).catch(() => {});
  }
}

/** Write the record at `path`, its index entries first (`_repo_trust_index.ts`). */
async function writeRecordAt(path: string, rec: TrustRecord): Promise<void> {
  await indexRecord(dirname(path), rec.root);
  const tmp = `${path}.tmp`;
  await Deno.writeTextFile(tmp, JSON.stringify(rec), { mode: 0o600 });
  await Deno.rename(tmp, path);
  forgetInPlan(`recordNames:${dirname(path)}`);
}

/**
 * The names in the record directory `dir`, listed once per plan scope (and
 * again after this process writes a record there); every name, one that
 * cannot be listed included, outside a scope or when the listing fails.
 */
function recordNamesOf(dir: string): { has(name: string): boolean } {
  if (currentPlanScope() === undefined) return { has: () => true };
  const names = memoInPlan(`recordNames:${dir}`, () => {
    try {
      return new Set(listDirNow(dir).map((e) => e.name));
    } catch {
      return undefined;
    }
  });
  return names ?? { has: () => true };
}

/** Whether `found` holds `m` at its path with its identity. */
function holds(found: readonly TrustMark[], m: TrustMark): boolean {
  return found.some((f) => f.entry === m.entry && f.id === m.id);
}

/**
 * The records of other roots that contain `root` or lie inside it: left by a
 * penguin that died without its last walk (or kept by one working there
 * now). One that cannot be read is skipped.
 */
async function relatedRecords(root: string): Promise<TrustRecord[]> {
  const out = await containingRecords(root);
  const { own, kept, all } = await recordDirs();
  for (const dir of all) {
    // The records of the roots inside `root`, by the index: no unrelated record is read. Only
    // this process's own directories are indexed when they are not yet (see `keysBelow`).
    for (const key of await keysBelow(dir, root, dir === own || dir === kept)) {
      let rec: TrustRecord;
      try {
        rec = JSON.parse(await Deno.readTextFile(join(dir, `${key}.json`))) as TrustRecord;
      } catch {
        continue;
      }
      if (typeof rec?.root !== "string" || !Array.isArray(rec.trusted) || rec.root === root) {
        continue;
      }
      if (inside(rec.root, root)) out.push(rec);
    }
  }
  return out;
}

/**
 * The marks of `marks` that every record of `others` holds where it speaks:
 * a repository below another record's root (its own `.git` aside, never
 * walked there) is trusted only when that record trusts it as it is now.
 */
function heldByOthers(others: readonly TrustRecord[], marks: readonly TrustMark[]): TrustMark[] {
  return marks.filter((m) =>
    others.every((q) =>
      !inside(m.entry, q.root) || m.entry === join(q.root, ".git") || holds(q.trusted, m)
    )
  );
}

/**
 * The records of the roots that contain `root` (not `root`'s own), in every
 * record directory: looked up by the key of each directory above it, so no
 * record of an unrelated root is read. One that cannot be read is skipped.
 */
async function containingRecords(root: string): Promise<TrustRecord[]> {
  const dirs = (await recordDirs()).all;
  const out: TrustRecord[] = [];
  for (let below = root, dir = dirname(root); dir !== below; below = dir, dir = dirname(dir)) {
    const key = await keyOf(dir);
    for (const d of dirs) {
      // Most directories above a root have no record: within a plan, the record directory's
      // listing says so without a failed look-up each (one per directory and record directory).
      if (!recordNamesOf(d).has(`${key}.json`)) continue;
      const rec = await readRecord(join(d, `${key}.json`), dir).catch(() => undefined);
      if (rec) out.push(rec);
    }
  }
  return out;
}

/** What the records of the roots containing a session's root say about the `.git`s above it. */
export interface ContainingReach {
  /**
   * The session's root and every directory above it up to (not including)
   * the root of a record containing it, longest first: no walk of the
   * session looks at their `.git`, which that record speaks for.
   */
  dirs: string[];
  /** Whether every such record trusts `mark` (a `.git` of `dirs`) as it is now. */
  trusts(mark: TrustMark): boolean;
}

/**
 * {@linkcode ContainingReach} of `root`. Without it, a repository a dead
 * penguin's command made at `ws/R` would be taken as the user's by a session
 * started on `ws/R` itself or below it (`ws/R/sub`).
 */
export async function containingReach(root: string): Promise<ContainingReach> {
  const records = await containingRecords(root);
  const dirs = [root];
  for (const rec of records) {
    for (let dir = dirname(root); dir !== rec.root && inside(dir, rec.root); dir = dirname(dir)) {
      if (!dirs.includes(dir)) dirs.push(dir);
    }
  }
  return {
    dirs: dirs.sort((a, b) => b.length - a.length),
    trusts: (mark) => heldByOthers(records, [mark]).length === 1,
  };
}

/**
 * The trusted set of `root` after a walk that found `found` (complete and
 * settled; undefined: a walk that was not, which changes nothing). A process
 * that has not joined the root joins it: alone there and without a record,
 * it starts the record with `found`. Undefined outside a session.
 */
export async function observeRepos(
  root: string,
  found: readonly TrustMark[] | undefined,
  ctx: { roots: readonly string[]; skip: readonly string[]; inSession: boolean },
): Promise<TrustMark[] | undefined> {
  const member = members.get(root);
  if (member === undefined && !ctx.inSession) return undefined;
  // A walk that did not settle joins nothing: its plan is refused.
  if (member === undefined && found === undefined) return [];
  const paths = await pathsOf(root);
  const lock = await lockRoot(paths);
  try {
    let rec = await readMerged(paths, root);
    if (member === undefined) {
      const active = await Deno.open(paths.own.active, {
        read: true,
        write: true,
        create: true,
        mode: 0o600,
      });
      const alone = await active.tryLock(true).then((ok) => ok, () => false) &&
        !await activeElsewhere(paths);
      // Shared from now on (every joiner takes the record lock first, so none slips in).
      await active.lock(false);
      members.set(root, { active, roots: ctx.roots, skip: ctx.skip });
      const others = await relatedRecords(root);
      if (rec === undefined && !alone) rec = { root, trusted: [] };
      if (rec === undefined) {
        rec = { root, trusted: heldByOthers(others, found!) };
        await writeRecord(paths, rec);
        return rec.trusted;
      }
      rec = { root, trusted: heldByOthers(others, rec.trusted) };
    } else {
      member.roots = ctx.roots;
      member.skip = ctx.skip;
      // Gone meanwhile (removed by hand): nothing is trusted any more.
      rec ??= { root, trusted: [] };
    }
    if (found === undefined) return rec.trusted;
    const kept = rec.trusted.filter((m) => holds(found, m));
    if (kept.length !== rec.trusted.length || member === undefined) {
      rec = { root, trusted: kept };
      await writeRecord(paths, rec);
    }
    return rec.trusted;
  } finally {
    lock.close();
  }
}

/** The trusted set of `root` (undefined when this process has not joined it). */
export async function trustedRepos(root: string): Promise<TrustMark[] | undefined> {
  if (!members.has(root)) return undefined;
  const paths = await pathsOf(root);
  const lock = await lockRoot(paths);
  try {
    return (await readMerged(paths, root))?.trusted ?? [];
  } finally {
    lock.close();
  }
}

/** A root this process leaves, and whether it was the last session there. */
export interface Leaving {
  root: string;
  roots: readonly string[];
  skip: readonly string[];
  /** The trusted set (read when the lock was taken: the walk must not take it again). */
  trusted: TrustMark[];
  /** Call with whether the last walk left the root clean (only for the last one out). */
  done: (clean: boolean) => Promise<void>;
  last: boolean;
}

/**
 * Leave every root this process joined, one at a time through `each`: the
 * last one out on a root is told so, holds the root's lock during `each`
 * (no penguin joins meanwhile), and removes the record when `each` reports
 * the root clean. Then, once per process, the record directories' garbage
 * is collected (`_repo_trust_gc.ts`).
 */
export async function leaveRoots(each: (l: Leaving) => Promise<void>): Promise<void> {
  await leaveEach(each);
  // Once per process, at its end (off every plan's path): what killed penguins left.
  if (!collected) {
    collected = true;
    const { own, all } = await recordDirs();
    await collectRecordGarbage(all, own).catch(() => {});
  }
}

/** Whether this process collected the record directories' garbage (`leaveRoots`). */
let collected = false;

async function leaveEach(each: (l: Leaving) => Promise<void>): Promise<void> {
  for (const [root, member] of [...members]) {
    // Left first: the walk in `each` must not take the root's lock again (`trustedRepos`).
    members.delete(root);
    const paths = await pathsOf(root);
    const lock = await lockRoot(paths);
    try {
      const last = await member.active.tryLock(true).then((ok) => ok, () => false) &&
        !await activeElsewhere(paths);
      const trusted = (await readMerged(paths, root).catch(() => undefined))?.trusted ?? [];
      let removed = false;
      await each({
        root,
        trusted,
        roots: member.roots,
        skip: member.skip,
        last,
        done: async (clean) => {
          if (!last || !clean || removed) return;
          removed = true;
          for (const f of [paths.own, ...paths.others]) {
            await Deno.remove(f.record).catch(() => {});
            await unindexRecord(dirname(f.record), root).catch(() => {});
          }
        },
      });
    } finally {
      member.active.close();
      lock.close();
    }
  }
}
