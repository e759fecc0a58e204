/**
 * One session and its subagent descendants, recognised among the sessions
 * a target holds (a directory of a parent's and its children's traces):
 * commands that take one session take the family's root, and follow its
 * children from there. A child names its parent in its session_meta
 * (`parent.session_id`).
 *
 * @module
 */
import { readSessionMeta, type SessionFiles } from "../trace/session_files.ts";

/**
 * The one session of `sessions` every other one descends from (through the
 * parents their session_metas name), or null when they are not one family.
 */
export async function familyRoot(sessions: readonly SessionFiles[]): Promise<SessionFiles | null> {
  if (sessions.length === 0) return null;
  const byId = new Map<string, SessionFiles>();
  const parentOf = new Map<string, string | null>();
  for (const s of sessions) {
    const meta = await readSessionMeta(s.files[0]!.path);
    if (meta === null) return null;
    const parent = (meta as { parent?: { session_id?: unknown } }).parent?.session_id;
    byId.set(meta.session_id, s);
    parentOf.set(meta.session_id, typeof parent === "string" ? parent : null);
  }
  if (byId.size !== sessions.length) return null;
  const roots = [...parentOf].filter(([, p]) => p === null || !byId.has(p)).map(([id]) => id);
  if (roots.length !== 1) return null;
  const root = roots[0]!;
  // Every session reaches the root (no cycle, no second tree).
  for (const id of byId.keys()) {
    let at: string | null | undefined = id;
    for (let steps = 0; at !== root; steps++) {
      if (at === null || at === undefined || steps > byId.size) return null;
      at = parentOf.get(at);
    }
  }
  return byId.get(root)!;
}
