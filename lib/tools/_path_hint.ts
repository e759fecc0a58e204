/**
 * The "where does this path stop existing" hint appended to file-not-found
 * errors: the deepest existing ancestor, the first missing segment, and the
 * ancestor's entries nearest in name to it. Runs on failure paths only.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { CONVENTIONAL_HOOK_DIRS } from "../sandbox/git_hook_scripts.ts";
import { isInside } from "./workspace_path.ts";

/** Entries named in a hint; the rest are counted as `+N more`. */
const MAX_LISTED = 8;
/** Entries read from one directory at most (bounds the cost on huge directories). */
const MAX_SCANNED = 10_000;

function sharedPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function editDistance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Math.abs(a.length - b.length) + 64;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(
        prev[j]! + 1,
        cur[j - 1]! + 1,
        prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** Names the sandbox holds with an empty read-only stand-in while a session runs when missing. */
const STAND_IN_DIRS: ReadonlySet<string> = new Set([".git", ...CONVENTIONAL_HOOK_DIRS]);

/**
 * Whether `path` is an empty directory under a name the sandbox holds with a
 * stand-in (`.git`, `.husky`, …): not listed, since it is not the user's and
 * exists only while a sandboxed session runs.
 */
async function isStandInLike(path: string): Promise<boolean> {
  if (!STAND_IN_DIRS.has(basename(path))) return false;
  try {
    for await (const _ of Deno.readDir(path)) return false;
    return true;
  } catch {
    return false;
  }
}

/**
 * A hint sentence (leading space) for a missing `real` path, or `""`. The
 * walk never climbs above `root`, so a hint never lists outside directories.
 */
export async function missingPathHint(real: string, root: string): Promise<string> {
  let ancestor = dirname(real);
  let missing = basename(real);
  for (;;) {
    if (!isInside(ancestor, root)) return "";
    try {
      const info = await Deno.stat(ancestor);
      if (!info.isDirectory) return ` Note: "${ancestor}" exists but is a file, not a directory.`;
      break;
    } catch {
      const parent = dirname(ancestor);
      if (parent === ancestor) return "";
      missing = basename(ancestor);
      ancestor = parent;
    }
  }
  const head = ` The directory "${ancestor}" exists but has no entry "${missing}".`;
  const entries: { name: string; dir: boolean }[] = [];
  try {
    for await (const e of Deno.readDir(ancestor)) {
      if (e.isDirectory && await isStandInLike(join(ancestor, e.name))) continue;
      entries.push({ name: e.name, dir: e.isDirectory });
      if (entries.length >= MAX_SCANNED) break;
    }
  } catch {
    return head;
  }
  if (entries.length === 0) return `${head} It is empty.`;
  const target = missing.toLowerCase();
  const ranked = entries.map((e) => {
    const lower = e.name.toLowerCase();
    return { ...e, prefix: sharedPrefix(lower, target), dist: editDistance(lower, target) };
  }).sort((a, b) =>
    b.prefix - a.prefix || a.dist - b.dist || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  );
  const shown = ranked.slice(0, MAX_LISTED).map((e) => (e.dir ? `${e.name}/` : e.name));
  const hidden = entries.length - shown.length;
  return `${head} It contains: ${shown.join(", ")}${hidden > 0 ? ` (+${hidden} more)` : ""}.`;
}
