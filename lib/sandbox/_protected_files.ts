/**
 * The files penguin keeps from commands outside the writable roots that may
 * have other names (hard links) inside one: `ln ~/.bashrc ws/bashrc` gives a
 * command the host's startup file under a path it may write, whatever the
 * hidden home holds.
 *
 * The rule: every regular file of a hidden home with more than one name on
 * a root's file system (outside the roots and the shown toolchain
 * directories) is protected, a file of the hide list hidden, every other one
 * read-only; so are the files of git's `init.templateDir` (copied into every
 * new repository), wherever it lies. They are found by one walk of each home
 * at any depth within a budget (`_home_links_walk.ts`).
 *
 * Looked at first, by stat only, and kept past that walk's budget: the
 * startup files of the hidden homes and what they source or name
 * (`home.ts`), git's global and system configuration files with what they
 * include, the files of the `core.hooksPath` and `init.templateDir`
 * directories they set (every `includeIf` followed, whether it matches
 * here or not), the hooks of each root's repository (its configuration's
 * hooks directories and `<git dir>/hooks`, wherever they lie), the programs in the `PATH` directories of the homes
 * (`~/.local/bin`, `~/bin`), and the files of the hide list (`~/.ssh/*`,
 * `~/.aws/*`, the toolchain credential walk's finds). Those directories are
 * read breadth first, {@linkcode MAX_DEPTH} levels deep, at most
 * {@linkcode MAX_ENTRIES} entries a process; a directory on a file system
 * no writable root is on is not entered (no hard link crosses one). Once per
 * process: these files do not change while penguin runs.
 *
 * @module
 */
import { listDirInPlan } from "./_plan_scope.ts";
import { isAbsolute, join } from "node:path";
import { type ResolvedGitConfig, resolveGitConfig } from "./git_config.ts";
import { findGitLayout } from "./git_guard.ts";
import { STARTUP_DIRS, STARTUP_TEXT_PATHS, startupReferences } from "./home.ts";
import { inside, realOf } from "./_paths.ts";
import { lstatOrNone, statOrNone } from "./_look.ts";
import { homeLinks } from "./_home_links_walk.ts";

/** How many directory entries one search reads at the most. */
export const MAX_ENTRIES = 16_384;
/** How deep below a listed directory the search goes (`~/.config/git/hooks/pre-push` is 3). */
export const MAX_DEPTH = 3;

/** What to look at. */
export interface ProtectedQuery {
  /** Real paths of the hidden homes (outside every root). */
  homes: readonly string[];
  /** The secret paths (files or directories) of the hide list. */
  secrets: readonly string[];
  /** The `PATH` directories of the host and the child. */
  pathDirs: readonly string[];
  /** Real paths of the writable roots. */
  roots: readonly string[];
}

/** Files outside the roots with other names: `secret` ones hidden from commands, `kept` read-only. */
export interface ProtectedFiles {
  secret: string[];
  kept: string[];
}

/** Options of {@linkcode protectedWithOtherNames}. */
export interface ProtectedOptions {
  /**
   * Only the named files (see the module) are looked for; the homes are not
   * walked (the plans of commands walk them). For a check before any
   * command runs, which must not hold up the session's first request.
   */
  check?: boolean;
}

const cache = new Map<string, ProtectedFiles>();

/** The protected files of `q` outside its roots that have more than one name (see the module). */
export async function protectedWithOtherNames(
  q: ProtectedQuery,
  opts: ProtectedOptions = {},
): Promise<ProtectedFiles> {
  const devs = new Set<number>();
  for (const r of q.roots) {
    const dev = statOrNone(r)?.dev;
    if (dev !== undefined && dev !== null) devs.add(dev);
  }
  if (devs.size === 0) return { secret: [], kept: [] };
  const named = await namedWithOtherNames(q, devs);
  if (opts.check) return named;
  const walks = q.homes.map(async (home) => {
    const templates = (await gitFiles(home)).templates;
    return homeLinks(home, templates, devs, q.roots);
  });
  const found: ProtectedFiles = { secret: [...named.secret], kept: [...named.kept] };
  const walked = await Promise.all(walks);
  if (walked.every(({ files }) => files.length === 0)) return found;
  // Where the hide list's entries really lie, to tell secrets among what the walks found (a
  // usual home has no file with other names, and then nothing is looked up).
  const secrets = [...q.secrets];
  for (const s of q.secrets) {
    const real = lstatOrNone(s) === undefined ? undefined : await realOf(s);
    if (real !== undefined && real !== s) secrets.push(real);
  }
  for (const { files } of walked) {
    for (const p of files) {
      if (found.secret.includes(p) || found.kept.includes(p)) continue;
      if (secrets.some((s) => inside(p, s))) found.secret.push(p);
      else found.kept.push(p);
    }
  }
  return found;
}

/** The files named in the module, looked at first (within their own bounds). */
async function namedWithOtherNames(
  q: ProtectedQuery,
  devs: ReadonlySet<number>,
): Promise<ProtectedFiles> {
  const key = JSON.stringify(q);
  const known = cache.get(key);
  if (known !== undefined) return known;
  const found: ProtectedFiles = { secret: [], kept: [] };
  const search = newSearch(devs, q.roots);
  await secretFiles(q, search, found.secret);
  await keptFiles(q, search, found.kept);
  found.kept = found.kept.filter((p) => !found.secret.includes(p));
  cache.set(key, found);
  return found;
}

/** The hide list's files, and git's global configuration files with what they include. */
async function secretFiles(q: ProtectedQuery, search: Search, out: string[]): Promise<void> {
  await search.paths(q.secrets, out);
  for (const home of q.homes) {
    const git = await gitFiles(home);
    await search.paths(git.config, out);
  }
}

/** The startup files and what they pull in, the homes' programs, the hooks git runs. */
async function keptFiles(q: ProtectedQuery, search: Search, out: string[]): Promise<void> {
  for (const home of q.homes) {
    const refs = await startupReferences(home);
    await search.paths(
      [
        ...[...STARTUP_TEXT_PATHS, ...STARTUP_DIRS].map((n) => join(home, n)),
        ...refs.sourced,
        ...refs.named,
      ],
      out,
    );
    await search.paths(q.pathDirs.filter((d) => inside(d, home) && d !== home), out);
    const git = await gitFiles(home);
    await search.paths([...git.hooks, ...git.templates], out);
  }
  for (const root of q.roots) {
    const git = await rootGitFiles(root, q.homes[0]);
    await search.paths([...git.hooks, ...git.templates], out);
  }
}

/** What git reads of a home: its configuration files, and the directories they name. */
interface GitFiles {
  /** Configuration files read (global, system, included). */
  config: string[];
  /** `core.hooksPath` directories. */
  hooks: string[];
  /** `init.templateDir` directories (their hooks are copied into every new repository). */
  templates: string[];
}

/** Per home: what git reads (see {@linkcode GitFiles}). */
const gitCache = new Map<string, Promise<GitFiles>>();

/**
 * Per home: what git reads of it in any repository. Every `includeIf` is
 * followed, matching here or not: a `gitdir:~/work/` include sets the hooks
 * of the user's other repositories, whose hook files may have a name in a root.
 */
function gitFiles(home: string): Promise<GitFiles> {
  let found = gitCache.get(home);
  if (found === undefined) {
    found = resolveGitConfig({ workTree: home, gitDirs: [], home })
      .then((r) => filesOf(r, home, home))
      .catch(() => ({ config: [], hooks: [], templates: [] }));
    gitCache.set(home, found);
  }
  return found;
}

/** The configuration files, hooks and template directories `r` names (`~` is `home`). */
function filesOf(r: ResolvedGitConfig, home: string | undefined, top: string): GitFiles {
  const dirs = (key: string) =>
    r.entries
      .filter((e) => e.key === key && e.value !== null)
      .map((e) => {
        const v = e.value!;
        if (v.startsWith("~/")) return home === undefined ? v : join(home, v.slice(2));
        // A relative hooks path is taken from the top of the work tree git runs in.
        return isAbsolute(v) ? v : join(top, v);
      })
      .filter((p) => isAbsolute(p));
  return {
    config: r.files.filter((f) => f.state === "read").map((f) => f.path),
    hooks: dirs("core.hookspath"),
    templates: dirs("init.templatedir"),
  };
}

/**
 * What git runs for the repository of the root `root`, wherever it lies: its
 * configuration's hooks and template directories (every `includeIf`
 * followed) and `<git dir>/hooks` of each of its git directories (a `.git`
 * file may name one outside every root).
 */
async function rootGitFiles(root: string, home: string | undefined): Promise<GitFiles> {
  try {
    const layout = await findGitLayout(root);
    if (layout.gitDirs.length === 0) return { config: [], hooks: [], templates: [] };
    const r = await resolveGitConfig({
      workTree: root,
      gitDirs: [layout.dotGit, ...layout.gitDirs],
      gitDir: layout.gitDirs[0],
      commonDir: layout.gitDirs[layout.gitDirs.length - 1],
      home,
    });
    const found = filesOf(r, home, root);
    for (const d of layout.gitDirs) found.hooks.push(join(d, "hooks"));
    return found;
  } catch {
    return { config: [], hooks: [], templates: [] };
  }
}

/** A bounded, stat-only search for files with more than one name on the roots' file systems. */
interface Search {
  /** Add to `out` the files among `paths` (and below those that are directories) with other names. */
  paths(paths: readonly string[], out: string[]): Promise<void>;
}

function newSearch(devs: ReadonlySet<number>, roots: readonly string[]): Search {
  let left = MAX_ENTRIES;
  const seen = new Set<string>();
  const inRoots = (p: string) => roots.some((r) => inside(p, r));
  const onRootDevice = (info: Deno.FileInfo | undefined) =>
    info?.dev !== null && info?.dev !== undefined && devs.has(info.dev);
  const file = (real: string, info: Deno.FileInfo, out: string[]) => {
    if (!info.isFile || (info.nlink ?? 1) < 2 || !onRootDevice(info)) return;
    if (inRoots(real)) return; // the roots' own rule has it
    if (!out.includes(real)) out.push(real);
  };
  const paths = async (paths: readonly string[], out: string[]) => {
    const dirs: { dir: string; depth: number }[] = [];
    for (const p of paths) {
      // Most named paths are missing (the hide list names ~100): one lstat each, no realpath.
      if (lstatOrNone(p) === undefined) continue;
      const real = await realOf(p);
      if (real === undefined || seen.has(real)) continue;
      seen.add(real);
      const info = lstatOrNone(real);
      if (info?.isDirectory) dirs.push({ dir: real, depth: 1 });
      else if (info !== undefined) file(real, info, out);
    }
    // Breadth first over all of them: the shallow files of every directory before deep ones.
    while (dirs.length > 0 && left > 0) {
      const { dir, depth } = dirs.shift()!;
      // Another file system holds no name of a root's; a root's own walk covers its directories.
      if (!onRootDevice(lstatOrNone(dir)) || roots.some((r) => inside(dir, r))) continue;
      let entries: Deno.DirEntry[];
      try {
        entries = listDirInPlan(dir);
      } catch {
        continue;
      }
      for (const e of entries) {
        if (--left < 0) break;
        const path = join(dir, e.name);
        if (e.isDirectory) {
          if (depth < MAX_DEPTH) dirs.push({ dir: path, depth: depth + 1 });
        } else if (e.isFile && !seen.has(path)) {
          seen.add(path);
          const info = lstatOrNone(path);
          if (info !== undefined) file(path, info, out);
        }
      }
    }
  };
  return { paths };
}
