/**
 * Workspaces: an explicit one must already exist; otherwise a
 * fresh temporary one is created under `<agent>/workspaces/tmp-<8hex>`.
 *
 * @module
 */
import { join, relative, resolve, sep } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { mkdirPrivate, statExisting } from "./_fs.ts";
import { newTempWorkspaceId } from "./ids.ts";
import { type AgentRef, agentsDir, type ProjectRef, workspacesDir } from "./paths.ts";

/** How many fresh names {@linkcode createTempWorkspace} tries before giving up. */
export const TEMP_WORKSPACE_ATTEMPTS = 16;

/** Resolve an explicit workspace: it must exist and be a directory. Never created. */
export async function resolveWorkspace(dir: string): Promise<string> {
  const abs = resolve(dir);
  const info = await statExisting(abs, "Workspace");
  if (!info.isDirectory) throw new PenguinError("usage", `Workspace is not a directory: ${abs}`);
  return abs;
}

/**
 * Create a new temporary workspace for the agent. The directory is made
 * with a non-recursive mkdir, so a name collision retries with a new id.
 */
export async function createTempWorkspace(ref: AgentRef): Promise<string> {
  const parent = workspacesDir(ref);
  await mkdirPrivate(parent);
  for (let i = 0; i < TEMP_WORKSPACE_ATTEMPTS; i++) {
    const dir = join(parent, newTempWorkspaceId());
    try {
      await Deno.mkdir(dir, { mode: 0o700 });
      return dir;
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    }
  }
  throw new PenguinError(
    "runtime",
    `Cannot create a temporary workspace in ${parent}: ${TEMP_WORKSPACE_ATTEMPTS} names were all taken`,
  );
}

async function real(path: string): Promise<string | undefined> {
  try {
    return await Deno.realPath(path);
  } catch {
    return undefined;
  }
}

/**
 * True when `workspace` (by real path) lies under
 * `<project>/agents/<any agent>/workspaces/<something>`.
 */
export async function isTempWorkspace(workspace: string, ref: ProjectRef): Promise<boolean> {
  const ws = await real(workspace);
  const agents = await real(agentsDir(ref));
  if (!ws || !agents) return false;
  const rel = relative(agents, ws);
  if (rel === "" || rel.startsWith("..") || resolve(agents, rel) !== ws) return false;
  const segs = rel.split(sep);
  return segs.length >= 3 && segs[1] === "workspaces";
}

/**
 * Refuse a workspace the sandbox cannot keep the data root out of: the data
 * root itself, or any directory inside it other than an agent's temporary
 * workspaces. (A data root inside the workspace is fine: it is hidden.)
 */
export async function assertWorkspaceOutsideDataRoot(
  workspace: string,
  ref: ProjectRef,
): Promise<void> {
  const ws = await real(workspace);
  const root = await real(ref.root);
  if (!ws || !root) return;
  const rel = relative(root, ws);
  const inside = rel === "" || (!rel.startsWith("..") && resolve(root, rel) === ws);
  if (!inside || await isTempWorkspace(ws, ref)) return;
  throw new PenguinError(
    "usage",
    `Cannot use the workspace "${ws}": it ${
      rel === "" ? "is" : "lies inside"
    } penguin's data root "${root}", which the model must never see. ` +
      `Pick a workspace outside the data root (or omit --workspace for a fresh temporary one), ` +
      `or move the data root with --root or PENGUIN_HOME.`,
  );
}
