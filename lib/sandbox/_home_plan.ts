/**
 * The mounts the home directory's rule (see `home.ts`) adds to a plan: the
 * hidden home and its read-only toolchain directories, or, for a home in a
 * writable root, the sealing of its top level and of the directories that
 * programs on the host run or load.
 *
 * @module
 */
import { join } from "node:path";
import type { SandboxPolicy } from "./policy.ts";
import {
  expandHomePaths,
  HOME_READABLE_DEFAULTS,
  homeRefusal,
  homesInRoots,
  SEALED_DIRS,
  sealedHomes,
  STARTUP_NAMES,
  TOOLCHAIN_PATHS,
} from "./home.ts";

/** A read-only bind of `source` at `target` (they differ when a symlink in the home leads elsewhere). */
export interface Reveal {
  /** Real path of what is shown. */
  source: string;
  /** Where it is shown: its path in the home directory. */
  target: string;
}

/** What {@linkcode homeMounts} adds to a plan. */
export interface HomeMounts {
  /** The real home directory to cover with an empty read-only tmpfs, if it is hidden. */
  hidden?: string;
  /** Toolchain directories shown read-only in the hidden home. */
  reveals: Reveal[];
  /** Paths re-bound read-only: sealed homes, their loaded directories, linked startup files. */
  protect: string[];
  /** Subdirectories of sealed homes bound writable onto themselves. */
  pinned: string[];
}

function inside(path: string, root: string): boolean {
  if (root === "/") return true;
  return path === root || path.startsWith(root.endsWith("/") ? root : root + "/");
}

async function realOf(path: string): Promise<string | undefined> {
  try {
    return await Deno.realPath(path);
  } catch {
    return undefined;
  }
}

/** The `PATH` directories of the host and of the child environment. */
function pathDirs(policy: SandboxPolicy): string[] {
  const host = policy.env.host ?? Deno.env.toObject();
  const all = [host["PATH"], policy.env.login?.["PATH"]].filter((p) => p !== undefined);
  return all.flatMap((p) => p.split(":")).filter((d) => d.startsWith("/"));
}

/**
 * The home mounts of `policy` over `roots` (real paths; `roots[0]` is the
 * workspace). Throws the refusal of `home.ts` when a root is or contains a
 * home directory and `policy.allowHomeWorkspace` is not set.
 */
export async function homeMounts(
  policy: SandboxPolicy,
  roots: string[],
  writableRoots: boolean,
): Promise<HomeMounts> {
  const out: HomeMounts = { reveals: [], protect: [], pinned: [] };
  const workspace = roots[0]!;
  const homes = await homesInRoots(roots, policy.home);
  if (homes.length > 0 && !policy.allowHomeWorkspace) throw homeRefusal(homes[0]!, workspace);
  const hidePaths = policy.hide;
  const isHidden = (p: string) => hidePaths.some((h) => inside(p, h));
  const home = policy.home ? await realOf(policy.home) : undefined;
  const homeDir = home !== undefined && home !== "/" &&
    (await Deno.stat(home).then((i) => i.isDirectory, () => false));
  if (homeDir && !roots.some((r) => inside(home!, r))) {
    out.hidden = home;
    const wanted = [
      ...await expandHomePaths(policy.home!, HOME_READABLE_DEFAULTS),
      ...(policy.homeReadable ?? []),
    ];
    for (const target of wanted) {
      const source = await realOf(target);
      if (source === undefined || source === "/") continue;
      // Inside a root it is visible anyway, and a root's contents are the model's to plant.
      if (roots.some((r) => inside(target, r) || inside(source, r))) continue;
      if (isHidden(target) || isHidden(source)) continue;
      if (!out.reveals.some((r) => r.target === target)) out.reveals.push({ source, target });
    }
  }
  if (!writableRoots) return out;
  const sealed = policy.allowHomeWorkspace ? await sealedHomes(roots, workspace, policy.home) : [];
  const loaded = [...SEALED_DIRS, ...TOOLCHAIN_PATHS];
  for (const { dir } of sealed) await seal(dir, loaded, pathDirs(policy), isHidden, roots, out);
  // A startup file of the home that links into a writable root (a dotfiles repository).
  if (homeDir) {
    for (const name of STARTUP_NAMES) {
      const link = join(policy.home!, name);
      if (!(await Deno.lstat(link).then((i) => i.isSymlink, () => false))) continue;
      const real = await realOf(link);
      if (real && roots.some((r) => inside(real, r) && real !== r) && !out.protect.includes(real)) {
        out.protect.push(real);
      }
    }
  }
  return out;
}

/**
 * Seal the home `dir` in a writable root: its top level read-only, its
 * subdirectories writable (pinned) except the hidden ones, `.git` (the git
 * guard's) and those of `loaded` and `paths`, which stay read-only.
 */
async function seal(
  dir: string,
  loaded: readonly string[],
  paths: readonly string[],
  isHidden: (p: string) => boolean,
  roots: readonly string[],
  out: HomeMounts,
): Promise<void> {
  if (!out.protect.includes(dir)) out.protect.push(dir);
  const readOnly = [
    ...await expandHomePaths(dir, loaded),
    ...paths.filter((p) => inside(p, dir) && p !== dir),
  ];
  for await (const e of Deno.readDir(dir)) {
    const child = join(dir, e.name);
    if (!e.isDirectory || e.name === ".git" || isHidden(child)) continue;
    if (readOnly.includes(child)) continue;
    // A root below it is bound on its own.
    if (roots.includes(child)) continue;
    out.pinned.push(child);
  }
  const keep = (p: string) => {
    const at = out.pinned.indexOf(p);
    if (at >= 0) out.pinned.splice(at, 1);
    else if (p !== dir && !out.protect.includes(p)) out.protect.push(p);
  };
  for (const p of readOnly) {
    // A hidden path must stay hidden (a bind would show it).
    if (!inside(p, dir) || p === dir || isHidden(p)) continue;
    const info = await Deno.lstat(p).catch(() => undefined);
    if (!info) continue;
    const top = join(p, "..") === dir;
    if (!info.isSymlink) {
      if (!top) keep(p); // the top level is read-only already
      continue;
    }
    // A link could be replaced in a writable parent: keep the parent read-only, and the
    // directory it leads to when that lies in a writable root.
    if (!top) keep(join(p, ".."));
    const real = await realOf(p);
    if (real && !isHidden(real) && roots.some((r) => inside(real, r) && real !== r)) keep(real);
  }
}
