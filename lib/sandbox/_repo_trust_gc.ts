/**
 * The garbage of the nested-repository trust record directories
 * (`_repo_trust.ts`): the record of a root that no longer exists, and the
 * `.lock` and `.active` files of a root without a record, that no process
 * holds. Penguins killed before their last walk leave them, and every root
 * ever used leaves its `.lock` and `.active`.
 *
 * A root's files are looked at only while holding an exclusive lock on its
 * `.lock` and on its `.active`, both taken without waiting (a root in use is
 * skipped) and checked to still be the files at those paths
 * (`_held_lock.ts`): no process has joined the root (each holds `.active`
 * share-locked while it uses it), and none can join meanwhile (joining takes
 * `.lock`). The record of a root that is gone is removed, then its index
 * entries (`_repo_trust_index.ts`), then `.active` and `.lock`, still held:
 * a process that opened one of them before and locks it after finds the path
 * gone or another file there, and opens it again. A record whose root exists
 * stays, with its `.lock` and `.active`. Index entries whose record is gone
 * are removed under that record's lock the same way.
 *
 * Only this process's record directory gets a `.lock` made: in another
 * penguin's run directory, which that penguin (or a test) may be removing,
 * nothing is created, and a key without its `.lock` there is left to the
 * processes of that directory.
 *
 * Bounded: at most {@linkcode MAX_KEYS} roots (picked at random among the
 * candidates, so that successive runs get through all of them) per run.
 *
 * @module
 */
import { join } from "node:path";
import { holdLock } from "./_held_lock.ts";
import { keyOf, unindexRecord } from "./_repo_trust_index.ts";

/** Roots (and index directories) one run looks at. */
export const MAX_KEYS = 200;

/** What one run removed. */
export interface Collected {
  records: number;
  /** Roots whose `.lock` and `.active` were removed. */
  idle: number;
  /** Index entries whose record was gone. */
  entries: number;
}

/** A key's files in a record directory, as listed. */
interface KeyFiles {
  record: boolean;
  lockish: boolean;
  below: boolean;
}

/** The files of `dir`, by key. */
async function listKeys(dir: string): Promise<Map<string, KeyFiles>> {
  const keys = new Map<string, KeyFiles>();
  for await (const e of Deno.readDir(dir)) {
    const m = /^([0-9a-f]{64})\.(json|lock|active|below)$/.exec(e.name);
    if (!m) continue;
    const k = keys.get(m[1]!) ?? { record: false, lockish: false, below: false };
    if (m[2] === "json") k.record = true;
    else if (m[2] === "below") k.below = true;
    else k.lockish = true;
    keys.set(m[1]!, k);
  }
  return keys;
}

/** `items` in random order. */
function shuffled<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/**
 * Run `fn` holding `key`'s `.lock` (made when missing, in this process's own
 * directory only) and `.active` (when there) in `dir` exclusively, then
 * remove both unless `fn` says to keep them. Nothing happens when a process
 * holds either, or when `.lock` is missing from another process's directory.
 * True when removed.
 */
async function withRootIdle(
  dir: string,
  own: boolean,
  key: string,
  fn: () => Promise<"keep" | "remove">,
): Promise<boolean> {
  const lock = await holdLock(join(dir, `${key}.lock`), {
    create: own,
    exclusive: true,
    wait: false,
  });
  if (typeof lock === "string") return false;
  try {
    // None there: no process can make it meanwhile (joining takes the lock first).
    const active = await holdLock(join(dir, `${key}.active`), {
      create: false,
      exclusive: true,
      wait: false,
    });
    if (active === "busy") return false; // a live process uses the root
    try {
      if (await fn() === "keep") return false;
      if (active !== "none") await Deno.remove(join(dir, `${key}.active`));
      await Deno.remove(join(dir, `${key}.lock`));
      return true;
    } finally {
      if (active !== "none") active.close();
    }
  } finally {
    lock.close();
  }
}

/** The root a record names, when it is the record of its key. */
async function recordRoot(dir: string, key: string): Promise<string | undefined> {
  try {
    const root = (JSON.parse(await Deno.readTextFile(join(dir, `${key}.json`))) as {
      root?: unknown;
    })?.root;
    return typeof root === "string" && await keyOf(root) === key ? root : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Collect `key`'s garbage in `dir` (this process's own record directory when
 * `own`; see the module doc), counting down `budget.left`.
 */
async function collectKey(
  dir: string,
  own: boolean,
  key: string,
  files: KeyFiles,
  out: Collected,
  budget: { left: number },
) {
  if (files.below) {
    const below = join(dir, `${key}.below`);
    const names = await Array.fromAsync(Deno.readDir(below)).catch(() => []);
    for (const { name } of shuffled(names)) {
      if (!/^[0-9a-f]{64}$/.test(name) || budget.left-- <= 0) continue;
      // Under the entry's record's lock: a writer writes the entry before the record.
      await withRootIdle(dir, own, name, async () => {
        if (await Deno.lstat(join(dir, `${name}.json`)).then(() => true, () => false)) {
          return "keep";
        }
        await Deno.remove(join(below, name)).catch(() => {});
        out.entries++;
        return "remove";
      });
    }
    await Deno.remove(below).catch(() => {}); // only when empty
  }
  if (!files.record && !files.lockish) return;
  const removed = await withRootIdle(dir, own, key, async () => {
    const record = join(dir, `${key}.json`);
    if (!await Deno.lstat(record).then(() => true, () => false)) return "remove";
    const root = await recordRoot(dir, key);
    // Unreadable, or a root that still exists: the record stays.
    if (root === undefined) return "keep";
    const gone = await Deno.lstat(root).then(() => false, (e) => e instanceof Deno.errors.NotFound);
    if (!gone) return "keep";
    await Deno.remove(record);
    await Deno.remove(`${record}.tmp`).catch(() => {});
    await unindexRecord(dir, root);
    out.records++;
    return "remove";
  });
  if (removed) out.idle++;
}

/**
 * Remove the garbage of the record directories `dirs` (see the module doc),
 * `own` being this process's, at most `max` keys in all. A directory that
 * cannot be listed is skipped.
 */
export async function collectRecordGarbage(
  dirs: readonly string[],
  own: string,
  max = MAX_KEYS,
): Promise<Collected> {
  const out: Collected = { records: 0, idle: 0, entries: 0 };
  const budget = { left: max };
  for (const dir of dirs) {
    let keys: Map<string, KeyFiles>;
    try {
      keys = await listKeys(dir);
    } catch {
      continue;
    }
    for (const key of shuffled([...keys.keys()])) {
      if (budget.left-- <= 0) return out;
      await collectKey(dir, dir === own, key, keys.get(key)!, out, budget).catch(() => {});
    }
  }
  return out;
}
