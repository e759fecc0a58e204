/**
 * The file tools' rule for what a home's shell startup files source or
 * name (`lib/sandbox/home.ts` {@linkcode startupReferences}): such a path
 * is never created nor overwritten by `write_file` or `edit_file`, as the
 * command sandbox keeps it read-only or holds it with a stand-in
 * (`lib/sandbox/_home_plan.ts`).
 *
 * Each named path is compared by where the kernel would lead it, not as
 * written: links met on the way are followed (`~/dots -> ws/dotfiles`), a
 * `..` step leaves the directory reached so far (`~/a/../b.sh`, `a` a link,
 * is `<target of a>/../b.sh`), and the missing rest is kept as written, so
 * a path that does not exist yet is refused too.
 *
 * Only the homes that matter are read: those the workspace is, lies in or
 * holds (the sealed homes), and `$HOME`, whose references are compared to
 * the target; a home whose startup files name more paths than penguin
 * holds is refused for writes only when it is one of the sealed homes or a
 * link at its top leads into the workspace, with advice for the file tools.
 * Paths under the workspace are named like the home's; and when a file the
 * reading left unread (past its cap) lies in or leads into the workspace,
 * every write is refused (`lib/sandbox/_startup_cap.ts`, the sandbox's rule).
 *
 * What a home's startup files reference is kept per process, keyed by the
 * identity (device, inode, size, change time) of every path the reading met,
 * so a write does not read them again unless one of them changed.
 *
 * @module
 */
import { dirname, join, normalize } from "node:path";
import { isInside } from "../sandbox/plan.ts";
import { lstatOrNone, statOrNone } from "../sandbox/_look.ts";
import { errorMessage } from "../protocol/errors.ts";
import {
  absentFromHome,
  sealedHomes,
  STARTUP_DIRECTORY_ENTRIES,
  STARTUP_DIRS,
  STARTUP_FILES_READ,
  STARTUP_NAMES,
  STARTUP_TEXT_PATHS,
  type StartupReferences,
  startupReferences,
} from "../sandbox/home.ts";
import { xdgStartupPaths } from "../sandbox/_xdg_config.ts";
import { unfollowedInRoots, unfollowedWriteRefusal } from "../sandbox/_startup_cap.ts";

/** At most this many links followed in one resolution (the kernel's `ELOOP` limit). */
const MAX_LINKS = 40;

/**
 * Where the kernel leads the absolute `path`: each component looked up with
 * `lstat`, a link replaced by what it holds (relative to its directory), a
 * `..` taken from the directory reached so far; from the first missing
 * component on, the rest is kept as written (`..` in it taken lexically,
 * as it would be once the missing directories were made). Undefined after
 * too many links, or when a link cannot be read.
 */
export function kernelTarget(path: string): string | undefined {
  const pending = path.split("/").filter((c) => c !== "" && c !== ".").reverse();
  let cur = "/";
  let followed = 0;
  let missing = false;
  while (pending.length > 0) {
    const part = pending.pop()!;
    if (part === "..") {
      cur = dirname(cur);
      continue;
    }
    const next = join(cur, part);
    const info: Deno.FileInfo | undefined = missing ? undefined : lstatOrNone(next);
    if (info === undefined || !info.isSymlink) {
      missing ||= info === undefined;
      cur = next;
      continue;
    }
    if (++followed > MAX_LINKS) return undefined;
    let target: string;
    try {
      target = Deno.readLinkSync(next);
    } catch {
      return undefined;
    }
    if (target.startsWith("/")) cur = "/";
    pending.push(...target.split("/").filter((c) => c !== "" && c !== ".").reverse());
  }
  return normalize(cur);
}

/** The identity of `path` now (links followed), as text; `-` when it cannot be looked at. */
function identity(path: string): string {
  const info = statOrNone(path) ?? lstatOrNone(path);
  if (info === undefined) return "-";
  return `${info.dev}:${info.ino}:${info.size}:${info.mtime?.getTime()}:${info.ctime?.getTime()}`;
}

/** The paths whose identities decide whether a home's references are still valid. */
function keyPaths(home: string, refs: StartupReferences | undefined): string[] {
  const top = STARTUP_TEXT_PATHS.map((n) => join(home, n));
  const inDirs: string[] = [];
  for (const p of top) {
    if (statOrNone(p)?.isDirectory !== true) continue;
    try {
      for (const e of Deno.readDirSync(p)) inDirs.push(join(p, e.name));
    } catch {
      // An unreadable directory: its own identity is in the key.
    }
  }
  if (refs === undefined) return [home, ...top, ...inDirs];
  const unread = refs.unfollowed.map((u) => u.path);
  return [
    home,
    ...top,
    ...inDirs,
    ...refs.sourced,
    ...refs.named,
    ...refs.missing,
    ...refs.dotted,
    ...unread,
  ];
}

/** What was read of one home, and the identities it was read at. */
interface Cached {
  key: string;
  refs?: StartupReferences;
  /** The refusal of {@linkcode startupReferences} (too many names), when it threw. */
  error?: string;
}

const cache = new Map<string, Cached>();

/** The key of `home`'s references now, given what was read (or not) last time. */
function keyOf(home: string, refs: StartupReferences | undefined): string {
  return keyPaths(home, refs).map((p) => `${p}=${identity(p)}`).join("\n");
}

/**
 * {@linkcode startupReferences} of `home` (paths under the workspace
 * `wsReal` named like the home's), or the message it threw, read again only
 * when a path the last reading met changed identity. A cap hit is re-read
 * only when one of the top startup files (or their directories' entries)
 * changed.
 */
export async function cachedStartupReferences(
  home: string,
  wsReal?: string,
): Promise<{ refs: StartupReferences } | { error: string }> {
  const within = wsReal !== undefined ? [wsReal] : [];
  const id = `${home}\0${wsReal ?? ""}`;
  const hit = cache.get(id);
  if (hit !== undefined && hit.key === keyOf(home, hit.refs)) {
    return hit.refs !== undefined ? { refs: hit.refs } : { error: hit.error! };
  }
  try {
    const refs = await startupReferences(home, STARTUP_FILES_READ, within);
    cache.set(id, { key: keyOf(home, refs), refs });
    return { refs };
  } catch (e) {
    const error = errorMessage(e);
    cache.set(id, { key: keyOf(home, undefined), error });
    return { error };
  }
}

/** Whether a link at the top of `home` leads into (or around) the workspace `wsReal`. */
function linksIntoWorkspace(home: string, wsReal: string): boolean {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(home)];
  } catch {
    return false;
  }
  return entries.some((e) => {
    if (!e.isSymlink) return false;
    const to = kernelTarget(join(home, e.name));
    return to !== undefined && (isInside(to, wsReal) || isInside(wsReal, to));
  });
}

/** A path a home's startup files source or name, and where the kernel leads it now. */
export interface StartupTarget {
  /** The path as the startup files name it (`~` expanded). */
  named: string;
  /** Where the kernel leads it now ({@linkcode kernelTarget}); missing when it cannot tell. */
  target?: string;
  /** Whether it is sourced (else named anywhere). */
  sourced: boolean;
  /**
   * Set for a startup file itself (`~/.config/fish/config.fish`, or one in
   * `$XDG_CONFIG_HOME`) rather than a path one names: `dir` for a directory
   * of them, which refuses what lies in it too.
   */
  startup?: "file" | "dir";
}

/**
 * What the file tools need of the startup files of `homes` for the
 * workspace `wsReal`: each path named and its kernel target, or the refusal
 * of every write when a home the workspace is related to names more paths
 * than penguin holds. Found by the host (a confined worker, or the tool host
 * in the sandbox, cannot read the home) and passed to the worker.
 */
export interface StartupFacts {
  targets: StartupTarget[];
  /** Why every write in the workspace is refused, when one is. */
  refusal?: string;
}

/**
 * The {@linkcode StartupFacts} of `homes` for the workspace `wsReal`.
 * `sealed` are the homes the workspace is or holds: one whose startup files
 * name more paths than penguin holds refuses every write, as does a home
 * the workspace lies in or that a link at its top leads into the workspace
 * from; another home is then skipped.
 */
export async function startupFacts(
  wsReal: string,
  homes: readonly string[],
  sealed: readonly string[],
  xdgDirs: readonly string[] = [],
): Promise<StartupFacts> {
  const targets: StartupTarget[] = ownStartupTargets(wsReal, homes, sealed, xdgDirs);
  for (const h of homes) {
    const read = await cachedStartupReferences(h, wsReal);
    if ("error" in read) {
      const related = sealed.includes(h) || isInside(wsReal, h) || isInside(h, wsReal) ||
        linksIntoWorkspace(h, wsReal);
      if (related) return { targets, refusal: tooManyForFileTools(h, read.error) };
      continue;
    }
    const { refs } = read;
    // Files left unread that the workspace holds (or leads to): what they pull in is unknown.
    const stopped = unfollowedInRoots(refs, [wsReal]);
    if (stopped !== undefined) return { targets, refusal: unfollowedWriteRefusal(h, stopped) };
    for (const p of [...refs.sourced, ...refs.named, ...refs.missing, ...refs.dotted]) {
      const target = kernelTarget(p);
      // A `..` spelling was sourced when its joined text was.
      const sourced = refs.sourced.includes(normalize(p));
      targets.push({ named: p, ...(target !== undefined ? { target } : {}), sourced });
    }
  }
  return { targets };
}

/**
 * The startup files themselves of `homes` and of the relocated configuration
 * directories `xdgDirs` (`$XDG_CONFIG_HOME`, `lib/sandbox/_xdg_config.ts`)
 * that lie in the workspace `wsReal` or lead into it, existing or missing:
 * the command sandbox keeps them read-only there or holds them with a
 * stand-in (attack round 28 f07: `config/fish/config.fish`,
 * `config/autostart/x.desktop` of a dotfiles workspace). Of a `sealed` home,
 * only those a link leads elsewhere. A home's entry whose first name the
 * home's listing lacks needs no look-up.
 */
function ownStartupTargets(
  wsReal: string,
  homes: readonly string[],
  sealed: readonly string[],
  xdgDirs: readonly string[],
): StartupTarget[] {
  const out: StartupTarget[] = [];
  const add = (named: string, kind: "file" | "dir", look: boolean, moved = false) => {
    const target = look ? kernelTarget(named) : normalize(named);
    if (moved && target === normalize(named)) return;
    if (!isInside(named, wsReal) && (target === undefined || !isInside(target, wsReal))) return;
    out.push({ named, ...(target !== undefined ? { target } : {}), sourced: false, startup: kind });
  };
  const names = [...new Set([...STARTUP_NAMES, ...STARTUP_TEXT_PATHS, ...STARTUP_DIRS])];
  const kindOf = (n: string) => STARTUP_DIRECTORY_ENTRIES.has(n) ? "dir" : "file";
  for (const h of homes) {
    const absent = absentFromHome(h, names);
    // A sealed home's own are refused where they lie by its rule (`workspace_path.ts`): only
    // where a link leads them elsewhere counts here.
    const linkedOnly = sealed.includes(h);
    for (const n of names) {
      if (linkedOnly && absent(n)) continue;
      add(join(h, n), kindOf(n), !absent(n), linkedOnly);
    }
  }
  for (const dir of xdgDirs) {
    for (const { path, entry } of xdgStartupPaths(dir)) add(path, entry.kind, true);
  }
  return out;
}

/**
 * Why `real` may not be written as a path the startup files source or name
 * (existing or missing, in any spelling, through links), given their
 * {@linkcode StartupFacts}, or undefined.
 */
export function startupRefusal(real: string, facts: StartupFacts): string | undefined {
  if (facts.refusal !== undefined) return facts.refusal;
  const hit = facts.targets.find((t) =>
    real === t.named || real === t.target ||
    (t.startup === "dir" && (isInside(real, t.named) || (t.target && isInside(real, t.target))))
  );
  if (hit === undefined) return undefined;
  if (hit.startup !== undefined) {
    return `${hit.named} is ${
      hit.startup === "dir" ? "a directory of startup files" : "a startup file"
    } of the user's shell, desktop session or programs, so it is read-only to the model`;
  }
  return `${hit.named} is ${hit.sourced ? "sourced" : "named"} by a shell startup file of the ` +
    `home directory, so it is read-only to the model`;
}

/** The file tools' refusal when the startup files of `home` name more paths than penguin holds. */
function tooManyForFileTools(home: string, error: string): string {
  const file = /\(reading "([^"]*)"\)/.exec(error)?.[1];
  const limit = /more than (\d+) paths/.exec(error)?.[1];
  return `penguin cannot tell which files the shell startup files of the home directory "${home}" ` +
    `read: ${file === undefined ? "they" : `"${file}"`} names more than ${limit ?? "the"} ` +
    `paths penguin keeps track of, and this workspace is, holds, lies in or is reached from that home. ` +
    `Ask the user to shorten ${file === undefined ? "the startup files" : `"${file}"`}, ` +
    `or to run penguin in a workspace the home's startup files cannot reach`;
}

/**
 * The {@linkcode StartupFacts} for a file-tool call in `workspace`, with
 * `home` the user's home (`$HOME` of the host): the homes the workspace is
 * or holds, and `home`. Undefined when the workspace cannot be resolved.
 */
export async function startupFactsFor(
  workspace: string,
  home: string | undefined,
  xdgDirs: readonly string[] = [],
): Promise<StartupFacts | undefined> {
  const wsReal = await Deno.realPath(workspace).catch(() => undefined);
  if (wsReal === undefined) return undefined;
  const sealed = (await sealedHomes([wsReal], wsReal, home).catch(() => [])).map((h) => h.dir);
  const homes = [...new Set([...sealed, ...(home ? [home] : [])])];
  return await startupFacts(wsReal, homes, sealed, xdgDirs);
}
