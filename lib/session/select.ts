/**
 * Choosing sessions for a person: which rows `sessions list` shows by
 * default, and which session `--resume latest` means from a directory.
 *
 * Hidden unless asked: sessions with no completed turn (failed first runs,
 * `/model` and `/clear` stubs) and subagent sessions (they are reached from
 * their parent). `latest` is scoped to a workspace: from another directory it
 * used to resume a session of another project and run its tools there.
 *
 * @module
 */
import { resolve } from "node:path";
import { listSessions, type SessionSummary } from "./list.ts";
import type { SessionScope } from "./locate.ts";

/** Which sessions a listing keeps. */
export interface SessionFilter {
  /** Keep 0-turn sessions and subagent sessions too. */
  everything?: boolean;
  /** Keep only sessions recorded in this workspace directory (compared as real paths). */
  workspace?: string;
  /** Keep at most this many (the most recent); undefined or ≤ 0: all. */
  limit?: number;
}

/** A directory's real path, or its resolved path when it cannot be resolved (it no longer exists). */
export async function realDir(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch {
    return resolve(path);
  }
}

/**
 * True when a person would look for `row` in a listing: it is not a
 * subagent's, and it has a turn or was imported (an import records no
 * requests of its own).
 */
export function isUserSession(row: SessionSummary): boolean {
  return (row.turns !== 0 || row.importedFrom !== null) && row.source !== "subagent";
}

/**
 * `rows` (newest first) narrowed by `filter`, and how many of them the
 * limit left out.
 */
export async function selectSessions(
  rows: readonly SessionSummary[],
  filter: SessionFilter,
): Promise<{ rows: SessionSummary[]; hidden: number; omitted: number }> {
  const want = filter.workspace !== undefined ? await realDir(filter.workspace) : undefined;
  const real = new Map<string, string>();
  const out: SessionSummary[] = [];
  let hidden = 0;
  for (const row of rows) {
    if (want !== undefined) {
      if (row.workspace === null) continue;
      let r = real.get(row.workspace);
      if (r === undefined) real.set(row.workspace, r = await realDir(row.workspace));
      if (r !== want) continue;
    }
    if (!filter.everything && !isUserSession(row)) {
      hidden++;
      continue;
    }
    out.push(row);
  }
  const limit = filter.limit !== undefined && filter.limit > 0 ? filter.limit : out.length;
  return { rows: out.slice(0, limit), hidden, omitted: Math.max(0, out.length - limit) };
}

/**
 * The most recent user session of `scope` recorded in `workspace` (see
 * {@linkcode isUserSession}), or null when there is none.
 */
export async function latestSessionIn(
  scope: SessionScope,
  workspace: string,
): Promise<SessionSummary | null> {
  const rows = await listSessions(scope);
  const { rows: here } = await selectSessions(rows, { workspace, limit: 1 });
  return here[0] ?? null;
}
