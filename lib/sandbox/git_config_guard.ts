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
import { relative, sep } from "node:path";
import { resolveGitConfig } from "./git_config.ts";
import { type ExecTarget, gitExecTargets } from "./git_exec_keys.ts";
import type { GitAccess, GitLayout } from "./git_guard.ts";

export type { ExecTarget };

function inside(path: string, root: string): boolean {
  if (root === "/") return true;
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function ownHome(): string | undefined {
  try {
    return Deno.env.get("HOME") || undefined;
  } catch {
    return undefined;
  }
}

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
}

/**
 * The paths inside `roots` that git, configured as it is now for the
 * workspace `workspaceReal` (a real path) with git directories `layout`, runs
 * or loads (whatever `_access`: every `onbranch:` include counts, since the
 * user may switch branches). Bare command words count only when they exist.
 */
export async function gitConfigTargets(
  workspaceReal: string,
  layout: GitLayout,
  _access: GitAccess,
  opts: TargetOptions = {},
): Promise<ExecTarget[]> {
  const home = "home" in opts ? opts.home : ownHome();
  const roots = opts.roots ?? [workspaceReal];
  const config = await resolveGitConfig({
    workTree: workspaceReal,
    gitDirs: [layout.dotGit, ...layout.gitDirs],
    gitDir: layout.gitDirs[0],
    commonDir: layout.gitDirs[1] ?? layout.gitDirs[0],
    home,
    ...(opts.env ? { env: opts.env } : {}),
  });
  const all = gitExecTargets(config, workspaceReal, home);
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
  const out: ExecTarget[] = [];
  for (const t of all) {
    if (!roots.some((r) => inside(t.path, r))) continue;
    if (out.some((o) => o.path === t.path)) continue;
    if (t.ifExists) {
      const there = !opts.missing?.has(t.path) &&
        await Deno.lstat(t.path).then(() => true, () => false);
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
  return `${rel} is ${verb} by git (${t.key} = ${t.value}); read-only to the model`;
}
