/**
 * The directories the user's running penguin processes let their commands write: a data root
 * made (or adopted) inside one while such a command runs is open to it. A sandbox hides every
 * data root noted before its plan, but one started earlier keeps its mounts: a background command
 * rewrote the project config of a root the user made meanwhile in its workspace, and the user's
 * next run sent the prompt and the API key to the model's endpoint (attack round 27 c07, c23).
 *
 * Each penguin process that starts a sandbox in `workspace-write` writes, before the sandbox's
 * plan reads the list of data roots, `live-roots/<pid>-<start>` in its private run directory: a
 * JSON object of the writable directories its policies name (`roots`, real paths) and the hidden
 * paths inside them (`hidden`: the data root, the home secrets). It only grows, and goes when the
 * process exits (its sandboxes end with it). Making or marking a data root notes it in the list
 * of data roots first (`lib/cli/mod.ts`), then asks {@linkcode liveRootsHolding}: either the
 * sandbox's entry was written before, and the root is refused, or its plan comes after the note,
 * and the root is hidden from it.
 *
 * An entry whose process no longer runs (pid and start time) is left out and removed; one that is
 * not a regular file of at most {@linkcode MAX_ENTRY_BYTES} holding such an object is left out;
 * at most {@linkcode MAX_ENTRIES} entries are read. Every plan hides the run directories, so no
 * command can write, remove or plant an entry.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { inside } from "./_paths.ts";
import { ownProcessKey, startTimes } from "./_proc_facts.ts";
import { privateRunDir, privateRunDirs } from "./_standin_registry.ts";
import { realPathOrNone } from "./_look.ts";
import type { SandboxPolicy } from "./policy.ts";

/** Entries read at most, over every run directory. */
export const MAX_ENTRIES = 1024;
/** An entry larger than this is not read. */
export const MAX_ENTRY_BYTES = 256 * 1024;
/** The directory of the entries in a run directory. */
export const LIVE_ROOTS_DIR = "live-roots";

const ENTRY = /^(\d{1,10})-(\d{1,20})$/;

/** A running process's writable directories, and what it hides inside them. */
export interface LiveRoots {
  pid: number;
  roots: string[];
  hidden: string[];
}

const mine = { roots: new Set<string>(), hidden: new Set<string>() };
let written: Promise<void> = Promise.resolve();
let unloadSet = false;

/** The real path of `p`, or of its deepest existing parent with the rest appended. */
export function realOrParent(p: string): string {
  const real = realPathOrNone(p);
  if (real !== undefined) return real;
  const up = dirname(p);
  return up === p ? p : join(realOrParent(up), basename(p));
}

/**
 * Note the writable directories of a sandbox about to be planned under `policy` (nothing for a
 * read-only one, or without a sandbox): written before the caller plans; a failure to write is
 * not fatal (the directories are then only as safe as the note of the data roots makes them).
 */
export async function noteLiveRoots(policy: SandboxPolicy): Promise<void> {
  if (policy.mode !== "workspace-write") return;
  const roots = [policy.workspace, ...(policy.scratchpad ? [policy.scratchpad] : [])]
    .concat(policy.extraWritable, policy.revealWritable ?? []).map(realOrParent);
  const fresh = roots.filter((r) => !mine.roots.has(r));
  if (fresh.length === 0) return await written;
  for (const r of fresh) mine.roots.add(r);
  // Only what exists now: a plan skips a hidden path that is missing, so a command may make it.
  for (const h of policy.hide) {
    const real = realPathOrNone(h);
    if (real !== undefined && [...mine.roots].some((r) => inside(real, r))) mine.hidden.add(real);
  }
  const text = JSON.stringify({ roots: [...mine.roots], hidden: [...mine.hidden] });
  written = written.then(() => writeEntry(text)).catch(() => {});
  await written;
}

async function writeEntry(text: string): Promise<void> {
  const dir = join(await privateRunDir(), LIVE_ROOTS_DIR);
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, await ownProcessKey());
  const tmp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(tmp, text, { mode: 0o600 });
  await Deno.rename(tmp, path);
  if (!unloadSet) {
    unloadSet = true;
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(path);
      } catch {
        // Left: the next reader removes an entry whose process is gone.
      }
    });
  }
}

/**
 * The running processes' entries whose writable directories hold `path` (a data root about to be
 * made or marked; its real path, or its deepest existing parent's) outside what they hide.
 */
export async function liveRootsHolding(path: string): Promise<LiveRoots[]> {
  return await liveEntries(path, holds);
}

/**
 * The running processes' entries that let commands write `path` or anything in it (a root that
 * holds it, or one inside it, hidden or not): what penguin is about to read on the host, file by
 * file, from a tree a command could change under it (swap a file for a link to a secret between
 * a look and a read: attack round 28 g12, g13).
 */
export async function liveWritersOf(path: string): Promise<LiveRoots[]> {
  return await liveEntries(
    path,
    (entry, real) => entry.roots.some((r) => inside(real, r) || inside(r, real)),
  );
}

async function liveEntries(
  path: string,
  matches: (entry: { roots: string[]; hidden: string[] }, real: string) => boolean,
): Promise<LiveRoots[]> {
  const real = realOrParent(path);
  const found: (LiveRoots & { file: string; start: string })[] = [];
  let seen = 0;
  for (const run of await privateRunDirs()) {
    const dir = join(run, LIVE_ROOTS_DIR);
    const names = listFiles(dir);
    for (const name of names) {
      if (++seen > MAX_ENTRIES) break;
      const m = ENTRY.exec(name);
      const entry = m ? readEntry(join(dir, name)) : undefined;
      if (!m || entry === undefined) continue;
      found.push({ ...entry, pid: Number(m[1]), start: m[2]!, file: join(dir, name) });
    }
  }
  // Every entry's process looked up at once: those gone are removed, so entries left by killed
  // penguins never pile up past what is read.
  const starts = found.length === 0
    ? new Map<number, string>()
    : await startTimes([...new Set(found.map((f) => f.pid))]);
  const out: LiveRoots[] = [];
  for (const f of found) {
    const live = starts === undefined || starts.get(f.pid) === f.start || f.start === "0";
    if (!live) await Deno.remove(f.file).catch(() => {});
    else if (matches(f, real)) out.push({ pid: f.pid, roots: f.roots, hidden: f.hidden });
  }
  return out;
}

/**
 * Whether `real` lies in a root of `entry` that its process's commands may write (not inside a
 * path it hides within that root: a root inside a hidden path, such as the agent's memory inside
 * a hidden data root, is written all the same), or holds one (a session in `R/default_project`
 * writes what would be the project of a root `R`), but one inside a path it hides.
 */
function holds(entry: { roots: string[]; hidden: string[] }, real: string): boolean {
  return entry.roots.some((r) =>
    (inside(real, r) && !entry.hidden.some((h) => h !== r && inside(h, r) && inside(real, h))) ||
    (inside(r, real) && !entry.hidden.some((h) => inside(r, h)))
  );
}

/** The names of the regular files in `dir` (none when it cannot be listed). */
function listFiles(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].filter((e) => e.isFile).map((e) => e.name);
  } catch {
    return [];
  }
}

function readEntry(path: string): { roots: string[]; hidden: string[] } | undefined {
  try {
    const info = Deno.lstatSync(path);
    if (!info.isFile || info.size > MAX_ENTRY_BYTES) return undefined;
    const v = JSON.parse(Deno.readTextFileSync(path));
    const strings = (x: unknown) =>
      Array.isArray(x) && x.every((s) => typeof s === "string" && s.startsWith("/"));
    if (!strings(v?.roots) || !strings(v?.hidden)) return undefined;
    return { roots: v.roots, hidden: v.hidden };
  } catch {
    return undefined;
  }
}
