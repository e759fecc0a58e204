/**
 * The data roots penguin has used on this machine. Any penguin command that
 * opens a data root (`--root`, `PENGUIN_HOME` or the default) notes it in
 * `data-roots` in penguin's private run directory (`privateRunDir()`, which
 * every plan hides) and in `data-roots` in penguin's key directory
 * (`rootKeyDir()`: `PENGUIN_KEY_DIR`, else `~/.penguin`, hidden from every
 * sandbox with the key), and every plan hides each root noted in either
 * list or in the list of any run directory (`privateRunDirs()`) that still
 * exists: a session of one root cannot read another root's vault, traces,
 * server logs or trust records. The run directory lies in `/tmp`, which a
 * reboot clears; the key directory's list stays, so a root kept inside a
 * workspace stays hidden from the sessions of other roots after a reboot
 * (attack round 28 E e03). Noting is best effort: a directory that cannot
 * be made leaves its list as it was.
 *
 * A plan looks at the lists each time, reading one again only when it
 * changed (its stamp, `_file_stamps.ts`), and looks at
 * each noted root on the disk only when it has not seen it as a data root
 * before ({@linkcode dataRootsToHide}): one seen is checked to be the same
 * directory by its real path, device and inode, which takes no directory
 * listing. A root noted later, or made later in a noted directory, is
 * looked at by the next plan. The list is never trusted for anything but
 * hiding more: only a directory that holds a penguin project is hidden.
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { privateRunDir, privateRunDirs } from "./_standin_registry.ts";
import { lookTime, settledStamp, stampNow } from "./_file_stamps.ts";
import { lstatOrNone, statOrNone } from "./_look.ts";
import { ROOT_MARK_FILE, rootKeyDir } from "../state/root_mark.ts";

const FILE = "data-roots";

async function listPath(): Promise<string> {
  return join(await privateRunDir(), FILE);
}

/**
 * The list kept in penguin's key directory, which a reboot does not clear;
 * undefined without one (no `HOME`, no `PENGUIN_KEY_DIR`, or an environment
 * that cannot be read).
 */
function keptListPath(): string | undefined {
  try {
    const dir = rootKeyDir();
    return dir === undefined ? undefined : join(dir, FILE);
  } catch {
    return undefined;
  }
}

/** The roots in the text of a list (absolute, in the order first noted, each once). */
function parseList(text: string): string[] {
  return [...new Set(text.split("\n").filter((l) => l.startsWith("/")))];
}

/** The roots in the list at `path` as the file holds them now ([] when there is none; undefined when it cannot be read). */
function listOnDisk(path: string): string[] | undefined {
  try {
    return parseList(Deno.readTextFileSync(path));
  } catch (err) {
    return err instanceof Deno.errors.NotFound ? [] : undefined;
  }
}

/** Lists as last read, by path, with the list's settled stamp then (`_file_stamps.ts`). */
const lists = new Map<string, { stamp: string; roots: string[] }>();

/**
 * Lists found missing, by path, with the settled stamp their directory had
 * just before: while it has the same, no entry was made in it (a run
 * directory without a list is common: one whose penguin noted no root).
 */
const absentLists = new Map<string, string>();

/**
 * The roots noted in the list at `path` (absolute, in the order first used);
 * none when unreadable. Read again only when the list is not the file last
 * read there, unchanged since (device, inode, size and times): every plan
 * looks at every list, and another penguin replaces one whole when it notes
 * a root (a new inode).
 */
function readList(path: string): string[] {
  const at = lookTime();
  // Its directory first: a list made after this look changes the directory's stamp.
  const dir = lists.has(path) ? undefined : statOrNone(dirname(path));
  const gone = absentLists.get(path);
  if (gone !== undefined && dir !== undefined && stampNow(dir) === gone) return [];
  absentLists.delete(path);
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch (err) {
    lists.delete(path);
    const stamp = dir === undefined ? undefined : settledStamp(dir, at);
    if (err instanceof Deno.errors.NotFound && stamp !== undefined) absentLists.set(path, stamp);
    return [];
  }
  const hit = lists.get(path);
  if (hit !== undefined && hit.stamp === stampNow(info)) return [...hit.roots];
  let roots: string[];
  try {
    roots = parseList(Deno.readTextFileSync(path));
  } catch {
    lists.delete(path);
    return [];
  }
  // Stamped as it was before the read: a change during or after it shows in the next stamp.
  const stamp = settledStamp(info, at);
  if (stamp === undefined) lists.delete(path);
  else lists.set(path, { stamp, roots });
  return [...roots];
}

/**
 * The data roots noted so far (absolute, in the order first used): this
 * process's list, the key directory's, then those of the other run
 * directories a penguin of the user keeps (`privateRunDirs()`: one started
 * with another `PENGUIN_RUN_DIR` notes its roots there), or `runDirs` when
 * the caller has just read them (a plan reads them once). None from a list
 * that cannot be read.
 */
export async function knownDataRoots(runDirs?: readonly string[]): Promise<string[]> {
  const ownPath = await listPath().catch(() => undefined);
  const out = new Set(ownPath === undefined ? [] : readList(ownPath));
  const kept = keptListPath();
  if (kept !== undefined) { for (const r of readList(kept)) out.add(r); }
  for (const dir of runDirs ?? await privateRunDirs().catch(() => [])) {
    if (join(dir, FILE) === ownPath) continue; // read just above
    for (const r of readList(join(dir, FILE))) out.add(r);
  }
  return [...out];
}

/** Whether `path` names anything (a link included). */
function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The most recently noted roots kept in the list while they do not exist yet: a root is noted
 * before the command that makes it has run (dropped then, a root holding only a vault would stay
 * visible to other sessions until its next command). Older missing ones (a test's temporary root,
 * a root removed since) are dropped when the list is rewritten.
 */
export const RECENT_MISSING_KEPT = 16;

/** Roots kept at most (the most recently noted); older ones are dropped. */
const MAX_ROOTS = 256;

/** The roots of `known` kept when the list is rewritten: those that exist, and the recent missing ones. */
function keptRoots(known: readonly string[]): string[] {
  const recent = known.length - RECENT_MISSING_KEPT;
  return known.filter((r, i) => exists(r) || (i >= recent && exists(dirname(r))));
}

/**
 * Note `root` as a data root penguin uses, in this process's run directory's
 * list and in the key directory's ({@linkcode noteIn}).
 */
export async function rememberDataRoot(root: string): Promise<void> {
  const abs = resolve(root);
  if (abs === "/" || abs.includes("\n")) return;
  const own = await listPath().catch(() => undefined);
  if (own !== undefined) await noteIn(own, abs);
  const kept = keptListPath();
  if (kept !== undefined) await noteIn(kept, abs, true);
}

/**
 * Note the root `abs` in the list at `path` (its directory made private
 * first when `makeDir`: the key directory may not exist yet). A root already
 * in the list is left as it is (nothing is written). Otherwise the list is
 * rewritten (a new file renamed over the old one) with `abs` at its end,
 * without the roots that are gone (but the most recently noted,
 * {@linkcode RECENT_MISSING_KEPT}, which may be about to be made) and with at
 * most {@linkcode MAX_ROOTS} entries, under an exclusive lock so that no
 * process drops another's new entry. Best effort: never rejects.
 */
async function noteIn(path: string, abs: string, makeDir = false): Promise<void> {
  let lock: Deno.FsFile | undefined;
  try {
    if (makeDir && lstatOrNone(dirname(path)) === undefined) {
      await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
    }
    // Noted already: a list is only ever replaced whole, so a read sees one complete version.
    if (readList(path).includes(abs)) return;
    // One writer at a time (an exclusive lock beside the list): a rewrite must not drop a root
    // another process noted meanwhile, which would leave that root visible to every session.
    lock = await Deno.open(`${path}.lock`, {
      read: true,
      write: true,
      create: true,
      mode: 0o600,
    });
    await lock.lock(true);
    // Read from the file itself, not through the caches: a rewrite based on a stale view (a list
    // another penguin made since, under a directory stamp that looked the same) would drop every
    // root noted meanwhile. A list that cannot be read is left as it is.
    const known = listOnDisk(path);
    if (known === undefined || known.includes(abs)) return;
    const list = [...keptRoots(known), abs].slice(-MAX_ROOTS);
    const tmp = `${path}.${crypto.randomUUID()}.tmp`;
    await Deno.writeTextFile(tmp, list.map((r) => `${r}\n`).join(""), { mode: 0o600 });
    await Deno.rename(tmp, path);
  } catch {
    // Best effort: without its directory there is no list (and without a run directory, no plan).
  } finally {
    lock?.close();
  }
}

/**
 * What marks `<dir>/<project>` as a project of a data root: its configuration, or the agents or
 * traces directory penguin makes there (a root where only `config vault set` ran has no
 * configuration yet, but its vault lies under `agents/`).
 */
const PROJECT_MARKS = [".project_config.toml", "agents", "traces"];

/**
 * Whether `dir` holds a penguin project (one of its first 64 directories has a
 * {@linkcode PROJECT_MARKS} entry) or carries penguin's mark (`.root_mark`: made or adopted as a
 * root, maybe nothing in it yet; open to a command, what it planted there would be trusted).
 */
export function looksLikeDataRoot(dir: string): boolean {
  if (exists(join(dir, ROOT_MARK_FILE))) return true;
  let seen = 0;
  try {
    for (const e of Deno.readDirSync(dir)) {
      if (!e.isDirectory || ++seen > 64) continue;
      for (const mark of PROJECT_MARKS) {
        if (exists(join(dir, e.name, mark))) return true;
      }
    }
  } catch {
    // Unreadable: not hidden on its account.
  }
  return false;
}

/** A noted root seen holding a project: its real path and identity then. */
interface SeenRoot {
  real: string;
  dev: number;
  ino: number;
}

/** Noted roots this process has seen as data roots, by the path noted. */
const seen = new Map<string, SeenRoot>();

let lookups = 0;

/** How many times {@linkcode dataRootsToHide} has listed a noted root (`looksLikeDataRoot`) in this process. */
export function dataRootLookups(): number {
  return lookups;
}

/** The real path and identity of `path` now; undefined when it is missing or no directory. */
function realDir(path: string): SeenRoot | undefined {
  try {
    const real = Deno.realPathSync(path);
    const info = Deno.statSync(real);
    return info.isDirectory ? { real, dev: info.dev, ino: info.ino ?? 0 } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Noted roots found missing, by the path noted: the nearest directory above
 * that existed (`dir`), the name below it on the way (`below`), and once
 * that directory had a settled stamp (`_file_stamps.ts`), that stamp, taken
 * before `below` was found missing. While the directory has the same stamp,
 * no entry was made in it, so the root is missing still, whatever way leads
 * to the directory now. (A test's or a benchmark's temporary roots stay
 * noted in the lists of run directories no penguin rewrites.)
 */
const missingRoots = new Map<string, { dir: string; below: string; stamp?: string }>();

/** Roots kept as missing at most (a bound on what a process holds). */
const MISSING_KEPT = 4096;

/**
 * Note the root `p`, just found missing or no directory, in `missingRoots`
 * when it is missing: where to look next time, and the stamp that settles it
 * when its directory has one (`look`: the status of a directory in this plan,
 * all taken after `at`).
 */
function noteMissing(
  p: string,
  look: (dir: string) => Deno.FileInfo | undefined,
  at: number,
): void {
  let hint = missingRoots.get(p);
  if (hint === undefined || look(hint.dir)?.isDirectory !== true) {
    hint = undefined;
    let below = p;
    for (let dir = dirname(p); dir !== below; below = dir, dir = dirname(dir)) {
      if (look(dir)?.isDirectory === true) {
        hint = { dir, below };
        break;
      }
    }
  }
  missingRoots.delete(p);
  if (hint === undefined) return;
  const info = look(hint.dir);
  const stamp = info === undefined ? undefined : settledStamp(info, at);
  // The name below it looked up after the stamp: made since the root was looked at, it is seen.
  if (stamp !== undefined && lstatOrNone(hint.below) !== undefined) return;
  if (missingRoots.size >= MISSING_KEPT) missingRoots.clear();
  missingRoots.set(
    p,
    stamp === undefined ? { dir: hint.dir, below: hint.below } : { ...hint, stamp },
  );
}

/** Noted roots below a directory for it to be listed rather than each root looked up. */
const LIST_AT_LEAST = 8;

/** About how many entries Deno lists in the time of one failed look-up (measured: 12). */
const ENTRIES_PER_FAILED_LOOKUP = 12;

/** Entries each directory held when `absentByListing` last listed it (a cost estimate only). */
const listedSizes = new Map<string, number>();

/** Printable ASCII: a name no file system folds or normalizes beyond letter case. */
const PLAIN_NAME = /^[\x20-\x7e]+$/;

/**
 * A cheap "certainly missing" test for the noted roots `paths`, for one plan:
 * a directory above {@linkcode LIST_AT_LEAST} of them or more that have not
 * been seen as data roots (`/var/tmp`, where benchmarks' and tests' roots
 * were) is listed once, and a root whose next name below it is not in the
 * listing (in any letter case) is missing without a look-up of its own,
 * which would fail (and a failed look-up costs three times a found one). A
 * directory that held too many entries for the roots below it the last time
 * (`/tmp`) is not listed again. Answers false (look it up) whenever no
 * listing can tell.
 */
function absentByListing(paths: readonly string[]): (p: string) => boolean {
  const count = new Map<string, number>();
  for (const p of paths) {
    if (seen.has(p)) continue; // a data root last time: most likely there still
    for (let below = p, dir = dirname(p); dir !== below; below = dir, dir = dirname(dir)) {
      count.set(dir, (count.get(dir) ?? 0) + 1);
    }
  }
  const worth = (dir: string) => {
    const n = count.get(dir) ?? 0;
    return n >= LIST_AT_LEAST && n * ENTRIES_PER_FAILED_LOOKUP >= (listedSizes.get(dir) ?? 0);
  };
  const listings = new Map<string, Set<string> | "missing" | undefined>();
  const listing = (dir: string) => {
    if (!listings.has(dir)) {
      try {
        const names = new Set([...Deno.readDirSync(dir)].map((e) => e.name.toLowerCase()));
        listedSizes.set(dir, names.size);
        listings.set(dir, names);
      } catch (err) {
        const gone = err instanceof Deno.errors.NotFound ||
          err instanceof Deno.errors.NotADirectory;
        listings.set(dir, gone ? "missing" : undefined);
      }
    }
    return listings.get(dir);
  };
  return (p) => {
    const way: string[] = [];
    for (let below = p, dir = dirname(p); dir !== below; below = dir, dir = dirname(dir)) {
      way.unshift(dir);
    }
    for (const dir of way) {
      if (!worth(dir)) continue;
      const names = listing(dir);
      if (names === "missing") return true;
      if (names === undefined) return false;
      const next = p.slice(dir === "/" ? 1 : dir.length + 1).split("/")[0]!;
      if (next === "." || next === ".." || !PLAIN_NAME.test(next)) return false;
      if (!names.has(next.toLowerCase())) return true;
    }
    return false;
  };
}

/** The status of a directory by path, each looked at once in one plan (undefined: not there). */
function statusForOnePlan(): (dir: string) => Deno.FileInfo | undefined {
  const got = new Map<string, Deno.FileInfo | undefined>();
  return (dir) => {
    if (!got.has(dir)) got.set(dir, statOrNone(dir));
    return got.get(dir);
  };
}

/**
 * The noted data roots to hide, each with its real path: the roots of
 * {@linkcode knownDataRoots} (`own`, this session's, noted first when the
 * list lacks it) that are directories holding a penguin project now, but
 * those `skip` leaves out (given the path noted and its real path). A root
 * seen holding a project before is taken without a listing while it is the
 * same directory (real path, device, inode); any other is looked at again.
 * `runDirs`: the run directories whose lists are read, when the caller has
 * just read them (`privateRunDirs()` otherwise).
 */
export async function dataRootsToHide(
  own: string | undefined,
  skip: (noted: string, real: string) => boolean,
  runDirs?: readonly string[],
): Promise<{ noted: string; real: string }[]> {
  let known = await knownDataRoots(runDirs);
  const kept = keptListPath();
  const inKeyDir = kept === undefined ? undefined : new Set(readList(kept));
  if (
    own !== undefined &&
    (!known.includes(resolve(own)) || inKeyDir?.has(resolve(own)) === false)
  ) {
    await rememberDataRoot(own);
    known = await knownDataRoots(runDirs);
  }
  const out: { noted: string; real: string }[] = [];
  // Before every look of this plan: what a settled stamp is judged against.
  const at = lookTime();
  const look = statusForOnePlan();
  const absent = absentByListing(known);
  for (const p of known) {
    const gone = missingRoots.get(p);
    const info = gone?.stamp === undefined ? undefined : look(gone.dir);
    if (info !== undefined && stampNow(info) === gone!.stamp) continue;
    const now = absent(p) ? undefined : realDir(p);
    if (now === undefined) {
      seen.delete(p);
      noteMissing(p, look, at);
      continue;
    }
    missingRoots.delete(p);
    if (skip(p, now.real)) continue;
    const was = seen.get(p);
    if (was?.real !== now.real || was.dev !== now.dev || was.ino !== now.ino) {
      // Only what still looks like a data root (a project holding its config) is hidden: a list
      // entry for a broad directory must not hide half the machine.
      lookups++;
      if (!looksLikeDataRoot(now.real)) {
        seen.delete(p);
        continue;
      }
      seen.set(p, now);
    }
    out.push({ noted: p, real: now.real });
  }
  // A root noted only in a run directory's list (by a penguin before the key directory kept one,
  // or under another HOME) is kept too: the next reboot must not show it again.
  if (kept !== undefined && inKeyDir !== undefined) {
    for (const r of out) if (!inKeyDir.has(r.noted)) await noteIn(kept, r.noted, true);
  }
  return out;
}
