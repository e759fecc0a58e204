/**
 * Where the nested-repository trust records (`_repo_trust.ts`) of the roots
 * inside a directory are, without reading every record of a record
 * directory: for the record `<key of R>.json` of a root `R`, the record
 * directory holds an empty file `<key of A>.below/<key of R>` for each
 * directory `A` above `R`. The records of the roots inside `S` are the names
 * listed in `<key of S>.below/`: as many reads as there are such records.
 *
 * The entries of a record are written before the record (under its root's
 * lock), and removed after it, so a record never lacks them; an entry whose
 * record is gone is skipped by the reader and removed by the garbage
 * collection (`_repo_trust_gc.ts`). A `.below` directory is removed only when
 * empty; a writer that finds it gone meanwhile makes it again.
 *
 * A record directory written before the index existed is indexed once, under
 * its `index.lock`, by the first process that looks for records there: every
 * record read, its entries written, then the `indexed` marker.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { holdLock } from "./_held_lock.ts";
import { hexOf } from "../protocol/hex.ts";

/** Keys computed by this process, by root (a plan asks for the same few every command). */
const keys = new Map<string, string>();
/** The most keys kept: past it the map starts again (a bound, not a figure any plan nears). */
const MAX_KEYS = 4096;

/** The sha-256 of `root`, hex: the record's file name without `.json`. */
export async function keyOf(root: string): Promise<string> {
  const known = keys.get(root);
  if (known !== undefined) return known;
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(root));
  const key = hexOf(hash);
  if (keys.size >= MAX_KEYS) keys.clear();
  keys.set(root, key);
  return key;
}

/** A record's file name without `.json`. */
const KEY = /^[0-9a-f]{64}$/;

/** The marker of an indexed record directory. */
const MARKER = "indexed";

/** The directories above `root`, nearest first, `/` last. */
export function dirsAbove(root: string): string[] {
  const out: string[] = [];
  for (let below = root, dir = dirname(root); dir !== below; below = dir, dir = dirname(dir)) {
    out.push(dir);
  }
  return out;
}

/** Write the index entries of the record of `root` in the record directory `dir`. */
export async function indexRecord(dir: string, root: string): Promise<void> {
  const key = await keyOf(root);
  for (const above of dirsAbove(root)) {
    const below = join(dir, `${await keyOf(above)}.below`);
    for (let tries = 0;; tries++) {
      await Deno.mkdir(below, { recursive: true, mode: 0o700 });
      try {
        await Deno.writeTextFile(join(below, key), "", { mode: 0o600 });
        break;
      } catch (err) {
        // Removed empty by the garbage collection between the two: make it again.
        if (!(err instanceof Deno.errors.NotFound) || tries >= 10) throw err;
      }
    }
  }
}

/** Remove the index entries of the record of `root` in `dir` (after the record). */
export async function unindexRecord(dir: string, root: string): Promise<void> {
  const key = await keyOf(root);
  for (const above of dirsAbove(root)) {
    const below = join(dir, `${await keyOf(above)}.below`);
    await Deno.remove(join(below, key)).catch(() => {});
    await Deno.remove(below).catch(() => {}); // only when empty
  }
}

/**
 * The keys of the records of the roots inside `root` (not `root`'s own) in
 * `dir`, the directory indexed first when it is not yet and `mayIndex` (it
 * is this process's own). Another penguin's directory not indexed yet is
 * only read, every record of it: nothing is written in a run directory its
 * penguin (or a test) may be removing meanwhile. Entries whose record is
 * gone are among them: the reader skips them.
 */
export async function keysBelow(dir: string, root: string, mayIndex: boolean): Promise<string[]> {
  const indexed = mayIndex
    ? await ensureIndexed(dir).then(() => true, () => false)
    : await Deno.lstat(join(dir, MARKER)).then(() => true, () => false);
  if (!indexed) {
    // Not indexed and cannot be (not writable…): every record, as before the index.
    return (await Array.fromAsync(Deno.readDir(dir)).catch(() => [])).map((e) => e.name)
      .filter((n) => n.endsWith(".json") && KEY.test(n.slice(0, -5))).map((n) => n.slice(0, -5));
  }
  const below = join(dir, `${await keyOf(root)}.below`);
  try {
    return (await Array.fromAsync(Deno.readDir(below))).map((e) => e.name)
      .filter((n) => KEY.test(n));
  } catch {
    return [];
  }
}

/** Index the records of `dir` written before the index existed, once (rejects when it cannot). */
async function ensureIndexed(dir: string): Promise<void> {
  const marker = join(dir, MARKER);
  if (await Deno.lstat(marker).then(() => true, () => false)) return;
  const lock = await holdLock(join(dir, "index.lock"), {
    create: true,
    exclusive: true,
    wait: true,
  });
  if (typeof lock === "string") throw new Error(`could not lock ${dir}/index.lock`);
  try {
    if (await Deno.lstat(marker).then(() => true, () => false)) return;
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || !e.name.endsWith(".json") || !KEY.test(e.name.slice(0, -5))) continue;
      let root: unknown;
      try {
        root = (JSON.parse(await Deno.readTextFile(join(dir, e.name))) as { root?: unknown })?.root;
      } catch {
        continue;
      }
      // Indexed under its own name's key only: a record under another key is no record.
      if (typeof root !== "string" || `${await keyOf(root)}.json` !== e.name) continue;
      await indexRecord(dir, root);
    }
    await Deno.writeTextFile(marker, "", { mode: 0o600 });
  } finally {
    lock.close();
  }
}
