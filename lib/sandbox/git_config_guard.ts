/**
 * What git's configuration makes read-only to the model: the workspace paths
 * git runs or loads (`git_exec_keys.ts`) and the configuration files it reads,
 * found in the configuration resolved by `git_config.ts`. One list, used by
 * the command sandbox (`plan.ts` mounts each read-only, or holds a stand-in
 * for a missing one) and by the file tools (`lib/tools/workspace_path.ts`
 * refuses them with {@linkcode gitConfigRefusal}).
 *
 * @module
 */
import { dirname, isAbsolute, join, relative } from "node:path";
import { type ResolvedGitConfig, resolveGitConfig } from "./git_config.ts";
import { execKeyOf, type ExecTarget, gitExecTargets, pythonModules } from "./git_exec_keys.ts";
import { findGitLayout, type GitAccess, type GitLayout } from "./git_guard.ts";
import {
  CONVENTIONAL_HOOK_DIRS,
  conventionalHookTargets,
  hookLinkTargets,
  hookNamedTargets,
} from "./git_hook_scripts.ts";
import { inside, ownHome } from "./_paths.ts";
import { otherUserHomes } from "./_user_homes.ts";
import { existsNow, statOrNone } from "./_look.ts";
import { memoInPlan } from "./_plan_scope.ts";

export type { ExecTarget };

/** Options of {@linkcode gitConfigTargets}. */
export interface TargetOptions {
  /** Directories the model can write (default: the workspace); only targets inside count. */
  roots?: readonly string[];
  /** The home directory (default: `$HOME`, where permitted). */
  home?: string | undefined;
  /** Paths that count as missing (penguin's own stand-ins). */
  missing?: ReadonlySet<string>;
  /** The environment of {@linkcode resolveGitConfig} (tests). */
  env?: (name: string) => string | undefined;
  /**
   * Homes besides `home` whose global configuration counts (default: the
   * user's other homes, {@linkcode otherUserHomes}, unless `home` is given).
   */
  otherHomes?: readonly string[];
  /**
   * Also the targets of the repositories enclosing the workspace
   * ({@linkcode enclosingRepos}); default true.
   */
  enclosing?: boolean;
}

function ownEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * The work trees of the repositories git finds from the directories above
 * `workspaceReal` (a real path), nearest first: every ancestor holding a
 * `.git`. Like git's discovery, the walk stops at a directory on another
 * file system than the workspace (unless `GIT_DISCOVERY_ACROSS_FILESYSTEM`
 * is true) and at a directory of `GIT_CEILING_DIRECTORIES`, which is not
 * looked at. Every one counts, not only the nearest: the user may run git in
 * any of them, and each one's configuration may name workspace paths (husky
 * installed for a package in a subdirectory sets `core.hooksPath` to one).
 */
export function enclosingRepos(
  workspaceReal: string,
  env: (name: string) => string | undefined = ownEnv,
): string[] {
  const across = /^(1|true|yes|on)$/i.test(env("GIT_DISCOVERY_ACROSS_FILESYSTEM") ?? "");
  const ceilings = (env("GIT_CEILING_DIRECTORIES") ?? "").split(":")
    .filter((c) => isAbsolute(c)).map((c) => c.length > 1 ? c.replace(/\/+$/, "") : c);
  const dev = statOrNone(workspaceReal)?.dev;
  const out: string[] = [];
  for (let dir = dirname(workspaceReal);; dir = dirname(dir)) {
    if (ceilings.includes(dir)) break;
    // Looked at once per plan (`_plan_scope.ts`): each writable root's walk, for each home, goes
    // through the same directories above the data root.
    const info = memoInPlan(`stat:${dir}`, () => statOrNone(dir));
    if (!info || (!across && dev !== undefined && info.dev !== dev)) break;
    if (memoInPlan(`exists:${join(dir, ".git")}`, () => existsNow(join(dir, ".git")))) {
      out.push(dir);
    }
    if (dir === dirname(dir)) break;
  }
  return out;
}

/** The configuration git reads in the work tree `workTree` with git directories `layout`. */
function layoutConfig(
  workTree: string,
  layout: GitLayout,
  home: string | undefined,
  env: TargetOptions["env"],
): Promise<ResolvedGitConfig> {
  return resolveGitConfig({
    workTree,
    gitDirs: [layout.dotGit, ...layout.gitDirs],
    gitDir: layout.gitDirs[0],
    commonDir: layout.gitDirs[1] ?? layout.gitDirs[0],
    home,
    ...(env ? { env } : {}),
  });
}

/** The hooks directories of a repository at `top`: its configured ones, `hooks/`, the conventional ones. */
function hookDirsOf(top: string, layout: GitLayout, targets: readonly ExecTarget[]): string[] {
  const common = layout.gitDirs[1] ?? layout.gitDirs[0];
  return [
    ...targets.filter((t) => t.key === "core.hooksPath").map((t) => t.path),
    ...(common ? [join(common, "hooks")] : []),
    ...CONVENTIONAL_HOOK_DIRS.map((n) => join(top, n)),
  ];
}

/**
 * What git run in the repository at `top` (git directories `layout`) with
 * the home `home` runs or loads: the configured targets, the conventional
 * hook directories at its top, and the files its hooks name (those for which
 * `writable` holds).
 */
async function repoTargets(
  top: string,
  layout: GitLayout,
  home: string | undefined,
  env: TargetOptions["env"],
  writable: (path: string) => boolean,
): Promise<{ config: ResolvedGitConfig; targets: ExecTarget[] }> {
  const config = await layoutConfig(top, layout, home, env);
  const targets = await gitExecTargets(config, top, home);
  // Hooks belong to a repository: none where there is none (a missing `.git` cannot be made).
  if (layout.kind === "missing") return { config, targets };
  targets.push(...conventionalHookTargets(top));
  const hookDirs = hookDirsOf(top, layout, targets);
  targets.push(...hookLinkTargets(hookDirs));
  targets.push(...await hookNamedTargets(top, hookDirs, writable));
  return { config, targets };
}

/** {@linkcode gitConfigTargets} for one home, unfiltered. */
async function homeTargets(
  workspaceReal: string,
  layout: GitLayout,
  home: string | undefined,
  opts: TargetOptions,
  writable: (path: string) => boolean,
): Promise<ExecTarget[]> {
  const { config, targets: all } = await repoTargets(
    workspaceReal,
    layout,
    home,
    opts.env,
    writable,
  );
  if (opts.enclosing ?? true) {
    for (const top of await enclosingRepos(workspaceReal, opts.env)) {
      const outer = await findGitLayout(top, opts.missing);
      if (outer.kind === "missing") continue;
      all.push(...(await repoTargets(top, outer, home, opts.env, writable)).targets);
    }
  }
  for (const f of config.files) {
    if (f.scope === "system" || f.scope === "global") {
      all.push({
        path: f.path,
        key: `${f.scope} configuration`,
        value: f.path,
        file: f.path,
        use: "read",
        missing: "file",
      });
    }
  }
  return all;
}

/**
 * The paths inside `roots` that git, configured as it is now for the
 * workspace `workspaceReal` (a real path) with git directories `layout`, runs
 * or loads (whatever `_access`: every `onbranch:` include counts, since the
 * user may switch branches). Bare command words count only when they exist.
 * The global configuration is that of `$HOME` and of the user's other homes
 * (`_user_homes.ts`: the account's home from `/etc/passwd`, `SUDO_USER`'s),
 * since the user's later shell may have either; a repository's conventional
 * hook directories and the files its hooks name count too
 * (`git_hook_scripts.ts`), unless the workspace has no repository.
 */
export async function gitConfigTargets(
  workspaceReal: string,
  layout: GitLayout,
  _access: GitAccess,
  opts: TargetOptions = {},
): Promise<ExecTarget[]> {
  const home = "home" in opts ? opts.home : ownHome();
  const others = opts.otherHomes ?? ("home" in opts ? [] : otherUserHomes(home));
  const roots = opts.roots ?? [workspaceReal];
  const writable = (p: string) => roots.some((r) => inside(p, r));
  const all: ExecTarget[] = [];
  for (const h of [home, ...others]) {
    all.push(...await homeTargets(workspaceReal, layout, h, opts, writable));
  }
  // A path the configuration names is refused under its key, before a convention or hook names it.
  all.sort((a, b) => Number(a.why !== undefined) - Number(b.why !== undefined));
  const out: ExecTarget[] = [];
  for (const t of all) {
    // A path outside every root still counts when a command can re-point it: through a link, or
    // an entry a `..` steps out of, inside a root.
    const movable = (t.links ?? []).some(writable) || (t.via ?? []).some(writable);
    if (!writable(t.path) && !movable) continue;
    if (out.some((o) => o.path === t.path && !movable)) continue;
    if (t.ifExists) {
      const there = !opts.missing?.has(t.path) &&
        existsNow(t.path);
      if (!there) continue;
    }
    out.push(t);
  }
  return out;
}

/**
 * Why the model may not write `real` (or its lexical form `path`), both
 * inside the workspace `workspaceReal`, given `targets`; undefined when no
 * target covers it.
 */
export function gitConfigRefusal(
  path: string,
  real: string,
  workspaceReal: string,
  targets: readonly ExecTarget[],
): string | undefined {
  const lower = [path.toLowerCase(), real.toLowerCase()];
  const t = targets.find((t) => lower.some((p) => inside(p, t.path.toLowerCase())));
  if (!t) return undefined;
  const rel = relative(workspaceReal, real) || ".";
  const verb = t.use === "run" ? "run" : "read";
  return `${rel} is ${verb} by git (${t.why ?? `${t.key} = ${t.value}`}); read-only to the model`;
}

/**
 * One line for each module git's configuration for the workspace
 * `workspaceReal` (a real path) runs as `python -m <module>`: python imports
 * from the work tree first, so the model's files there may run on the host
 * when the user's git runs the filter or driver. {@linkcode gitConfigTargets}
 * keeps the module's own names read-only; what the module imports in turn
 * is not covered, which is what the warning says.
 */
export async function pythonImportWarnings(
  workspaceReal: string,
  layout: GitLayout,
  opts: { home?: string | undefined; env?: (name: string) => string | undefined } = {},
): Promise<string[]> {
  const home = "home" in opts ? opts.home : ownHome();
  const config = await layoutConfig(workspaceReal, layout, home, opts.env);
  const keys = new Map<string, string[]>();
  for (const e of config.entries) {
    const row = execKeyOf(e.key);
    if (!row || row.kind !== "command" || e.value === null) continue;
    if (row.applies && !row.applies(e.value)) continue;
    for (const mod of pythonModules(row.command ? row.command(e.value) : e.value)) {
      const list = keys.get(mod) ?? [];
      if (!list.includes(e.key)) list.push(e.key);
      keys.set(mod, list);
    }
  }
  return [...keys].map(([mod, list]) => {
    const top = mod.split(".")[0];
    return `git runs "python -m ${mod}" (${list.join(", ")}), and python imports code from ` +
      `the work tree first: what the model writes there can run on this machine when your git ` +
      `runs it. penguin keeps ${top}.py and ${top}/ read-only, but not every module ${mod} ` +
      `imports in turn (see "Git" in docs/security.md)`;
  });
}
