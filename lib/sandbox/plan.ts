/**
 * Turn a {@linkcode SandboxPolicy} into a {@linkcode SandboxPlan}: real,
 * existing paths sorted into what is writable, protected and hidden. This is
 * the only part of the argv construction that touches the file system; the
 * bubblewrap and Seatbelt builders are pure functions of the plan.
 *
 * @module
 */
import { join, sep } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { buildChildEnv } from "./env.ts";
import type { SandboxPolicy } from "./policy.ts";

/** A policy resolved against the file system. All paths are real (symlink-free) and exist. */
export interface SandboxPlan {
  /** True in `workspace-write`: roots are bound writable; else read-only. */
  writableRoots: boolean;
  /** Workspace, scratchpad and extra writable directories (extra ones only when writable). */
  roots: string[];
  /** Existing paths inside writable roots re-bound read-only (`.git/hooks`, `.git/config`). */
  protect: string[];
  /** Missing directories inside writable roots covered by an empty read-only tmpfs (`.git/hooks`). */
  protectMissing: string[];
  /**
   * Writable directories bound onto themselves so they become mount points
   * that cannot be renamed or removed (`.git`: otherwise `mv .git x` and a
   * fresh `.git/hooks` would bypass the read-only hooks). Absent: none.
   */
  pinned?: string[];
  /** Directories to hide (an empty tmpfs over them). */
  hideDirs: string[];
  /** Files to hide (`/dev/null` bound over them). */
  hideFiles: string[];
  /** Whether the network is shared with the host. */
  network: boolean;
  /** Working directory of the child. */
  cwd: string;
  /** The complete child environment. */
  env: Record<string, string>;
}

/** True when `path` is `root` or lies below it. */
export function isInside(path: string, root: string): boolean {
  if (root === "/") return true;
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

async function real(path: string): Promise<{ path: string; info: Deno.FileInfo } | undefined> {
  try {
    const p = await Deno.realPath(path);
    return { path: p, info: await Deno.stat(p) };
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw err;
  }
}

async function mustBeDir(what: string, path: string): Promise<string> {
  const r = await real(path);
  if (!r) throw new PenguinError("runtime", `Cannot sandbox: the ${what} "${path}" does not exist`);
  if (!r.info.isDirectory) {
    throw new PenguinError("runtime", `Cannot sandbox: the ${what} "${path}" is not a directory`);
  }
  return r.path;
}

/**
 * Resolve `policy` for a child started in `cwd`. Throws a runtime error when
 * the workspace or cwd is missing; silently skips hide entries, scratchpad
 * and extra directories that do not exist.
 */
export async function resolvePlan(
  policy: SandboxPolicy,
  cwd: string,
): Promise<SandboxPlan> {
  const writableRoots = policy.mode === "workspace-write";
  const workspace = await mustBeDir("workspace", policy.workspace);
  const roots = [workspace];
  const optional = [
    ...(policy.scratchpad ? [policy.scratchpad] : []),
    ...(writableRoots ? policy.extraWritable : []),
  ];
  for (const p of optional) {
    const r = await real(p);
    if (r?.info.isDirectory && !roots.includes(r.path)) roots.push(r.path);
  }

  const protect: string[] = [];
  const protectMissing: string[] = [];
  const pinned: string[] = [];
  if (writableRoots) {
    // The workspace's confinement policy is read-only to the commands it confines.
    const policyFile = await real(join(workspace, "penguin.jsonc"));
    if (policyFile?.info.isFile && roots.some((r) => isInside(policyFile.path, r))) {
      protect.push(policyFile.path);
    }
    const git = await real(join(workspace, ".git"));
    if (git?.info.isDirectory) {
      if (roots.some((r) => git.path !== r && isInside(git.path, r))) pinned.push(git.path);
      for (const name of ["hooks", "config"]) {
        const target = await real(join(git.path, name));
        if (target) {
          if (roots.some((r) => isInside(target.path, r))) protect.push(target.path);
        } else if (name === "hooks" && isInside(git.path, workspace)) {
          protectMissing.push(join(git.path, name));
        }
      }
    }
  }

  const hideDirs: string[] = [];
  const hideFiles: string[] = [];
  for (const p of policy.hide) {
    const r = await real(p);
    if (!r || r.path === "/") continue;
    const list = r.info.isDirectory ? hideDirs : hideFiles;
    if (!list.includes(r.path)) list.push(r.path);
  }

  const env = buildChildEnv({
    host: policy.env.host ?? Deno.env.toObject(),
    allow: policy.env.allow,
    vault: policy.env.vault,
    network: policy.network,
  });
  return {
    writableRoots,
    roots,
    protect,
    protectMissing,
    ...(pinned.length > 0 ? { pinned } : {}),
    hideDirs,
    hideFiles,
    network: policy.network,
    cwd: await mustBeDir("working directory", cwd),
    env,
  };
}
