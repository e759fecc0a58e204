/**
 * Deleting a session: its trace files, its scratchpad directory, its MCP
 * server logs (`<agent>/mcp_logs/<session>`) and, recursively, the child sessions its traces name in `subagent` events.
 * Refused, with nothing deleted, while any of them is locked by a live
 * process (the trace writer's session lock).
 *
 * @module
 */
import { dirname, join } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { exists } from "../state/_fs.ts";
import { acquireSessionLock, releaseSessionLock, type SessionLock } from "../trace/lock.ts";
import { listSessionFiles } from "../trace/paths.ts";
import { subagentChildren } from "./_subagents.ts";
import { locateSession, peekHead, type SessionScope } from "./locate.ts";

/** What deleting a session removes. */
export interface DeletePlan {
  /** The session. */
  sessionId: string;
  /** Its traces directory. */
  tracesDir: string;
  /** Its trace files. */
  files: string[];
  /** Its scratchpad directory, when it exists. */
  scratchpad: string | null;
  /** Its MCP server logs directory, when it exists. */
  mcpLogs?: string | null;
  /** Its child sessions found on disk, each with its own plan. */
  children: DeletePlan[];
  /** Child ids named in its traces but not found under the same traces directory. */
  missingChildren: string[];
}

/** Options of {@linkcode planDelete} and {@linkcode deleteSession}. */
export interface DeleteOptions extends SessionScope {
  /** A session id or the path of one of its trace files (`latest` is refused). */
  session: string;
}

/** The session_meta timestamp of a trace file, or null. */
export async function createdAt(path: string | undefined): Promise<string | null> {
  if (path === undefined) return null;
  const head = await peekHead(path);
  const t = head?.first?.timestamp;
  return head?.meta && typeof t === "string" ? t : null;
}

/**
 * True when a child created at `child` can be the own child of a session
 * created at `parent`: not created before it (unknown times count as own).
 */
export function isOwnChild(parent: string | null, child: string | null): boolean {
  if (parent === null || child === null) return true;
  const p = Date.parse(parent);
  const c = Date.parse(child);
  return Number.isNaN(p) || Number.isNaN(c) || c >= p;
}

async function planOf(
  sessionId: string,
  tracesDir: string,
  files: string[],
  seen: Set<string>,
): Promise<DeletePlan> {
  seen.add(sessionId);
  const scratch = join(dirname(tracesDir), "scratchpad", sessionId);
  const mcpLogs = join(dirname(tracesDir), "mcp_logs", sessionId);
  const plan: DeletePlan = {
    sessionId,
    tracesDir,
    files,
    scratchpad: (await exists(scratch)) ? scratch : null,
    mcpLogs: (await exists(mcpLogs)) ? mcpLogs : null,
    children: [],
    missingChildren: [],
  };
  const created = await createdAt(files[0]);
  for (const f of files) {
    for (const child of await subagentChildren(f)) {
      if (seen.has(child)) continue;
      let childFiles: string[] = [];
      try {
        childFiles = (await listSessionFiles(tracesDir, child)).map((r) => r.path);
      } catch {
        childFiles = []; // an id unfit for a file name cannot have files
      }
      if (childFiles.length === 0) {
        if (!plan.missingChildren.includes(child)) plan.missingChildren.push(child);
        continue;
      }
      // A child older than this session was copied in by fork/clone from
      // the session that really spawned it: not ours to delete.
      if (!isOwnChild(created, await createdAt(childFiles[0]))) continue;
      plan.children.push(await planOf(child, tracesDir, childFiles, seen));
    }
  }
  return plan;
}

/** Work out what deleting the session would remove, without changing anything. */
export async function planDelete(options: DeleteOptions): Promise<DeletePlan> {
  if (options.session === "latest") {
    throw new PenguinError("usage", 'sessions delete: name the session by id, not "latest"');
  }
  const located = await locateSession({ ...options, target: options.session });
  if (located.tracesDir === null) {
    throw new PenguinError(
      "usage",
      `Cannot delete ${located.latest.path}: it is not inside a traces directory; delete the file itself`,
    );
  }
  return await planOf(
    located.sessionId,
    located.tracesDir,
    located.files.map((f) => f.path),
    new Set(),
  );
}

/** Every plan in the tree, children before their parent. */
export function flattenPlan(plan: DeletePlan): DeletePlan[] {
  return [...plan.children.flatMap(flattenPlan), plan];
}

/** Number of child sessions (at any depth) in a plan. */
export function childCount(plan: DeletePlan): number {
  return flattenPlan(plan).length - 1;
}

/**
 * Delete the session, its scratchpad and its child sessions. Every session
 * of the plan is locked first; if any is in use by a live process the
 * delete is refused (PenguinError of kind "locked") and nothing is removed.
 * Returns what was deleted.
 */
export async function deleteSession(options: DeleteOptions): Promise<DeletePlan> {
  const plan = await planDelete(options);
  const all = flattenPlan(plan);
  const locks: SessionLock[] = [];
  try {
    for (const p of all) {
      try {
        locks.push(await acquireSessionLock(p.tracesDir, p.sessionId));
      } catch (err) {
        if (err instanceof PenguinError && err.kind === "locked") {
          const who = err.message.replace(/^Cannot write session \S+: /, "");
          const what = p === plan ? "" : ` (its child session ${p.sessionId} is in use)`;
          throw new PenguinError(
            "locked",
            `Cannot delete session ${plan.sessionId}${what}: ${who}`,
          );
        }
        throw err;
      }
    }
    const dateDirs = new Set<string>();
    for (const p of all) {
      for (const f of p.files) {
        await Deno.remove(f).catch((err) => {
          if (!(err instanceof Deno.errors.NotFound)) throw err;
        });
        dateDirs.add(dirname(f));
      }
      if (p.scratchpad) await Deno.remove(p.scratchpad, { recursive: true });
      if (p.mcpLogs) await Deno.remove(p.mcpLogs, { recursive: true });
    }
    for (const d of dateDirs) await Deno.remove(d).catch(() => {}); // only when empty
  } finally {
    for (const l of locks) await releaseSessionLock(l);
  }
  return plan;
}
