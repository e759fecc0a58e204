/**
 * The session tree of an agent: fork and clone lineage (the `lineage` field
 * of a session_meta) and subagent children (the `subagent` events of a
 * parent's traces; a child's own session_meta says `source: "subagent"`).
 *
 * A fork or clone copies its source's records, `subagent` events included;
 * a child is attached to the session that spawned it: among the sessions
 * naming it, the most recently created one that is not newer than the child.
 *
 * @module
 */
import { subagentChildren } from "./_subagents.ts";
import { pooled } from "./_pooled.ts";
import { isOwnChild } from "./delete.ts";
import { listSessions, listSessionsWithFiles, type SessionSummary } from "./list.ts";
import { locateSession, type SessionScope } from "./locate.ts";
import { tracesDir as agentTracesDir } from "../state/paths.ts";
import { PenguinError } from "../protocol/errors.ts";

/** How a node hangs from its parent. */
export type TreeRelation = "root" | "fork" | "clone" | "subagent";

/** One session in the tree. */
export interface TreeNode {
  /** The session id. */
  sessionId: string;
  /** How it relates to its parent. */
  relation: TreeRelation;
  /** Its listing row; null for a session named by another but not on disk. */
  summary: SessionSummary | null;
  /** Sessions below it, oldest first. */
  children: TreeNode[];
}

/** Options of {@linkcode sessionTree}. */
export interface TreeOptions extends SessionScope {
  /** Only the tree holding this session: an id, a unique part of one, `latest` or a trace path. */
  session?: string | undefined;
}

/** The session forest of an agent (or the one tree holding `session`), oldest roots first. */
export async function sessionTree(options: TreeOptions): Promise<TreeNode[]> {
  // Long because: three passes over the same rows and maps (subagent claims, fork and clone edges,
  // nesting); split, each pass would take all the maps as arguments.
  const { rows, files } = await listSessionsWithFiles({ ...options, allAgents: false });
  const byId = new Map(rows.map((r) => [r.sessionId, r]));
  const parentOf = new Map<string, { parent: string; relation: TreeRelation }>();

  // Subagent edges: the closest-created claimant not newer than the child.
  const claims = new Map<string, string[]>();
  const scans = rows.flatMap((r) =>
    (files.get(r.sessionId) ?? []).map((f) => ({ id: r.sessionId, path: f.path }))
  );
  // The children each file names, a few files at a time, each scan's read buffer reused.
  const found = await pooled(
    scans,
    SCANS_AT_ONCE,
    SCAN_BUFFER,
    (s, buf) => subagentChildren(s.path, buf),
  );
  scans.forEach((s, i) => {
    for (const child of found[i]!) {
      const list = claims.get(child) ?? [];
      if (!list.includes(s.id)) list.push(s.id);
      claims.set(child, list);
    }
  });
  for (const [child, parents] of claims) {
    const childCreated = byId.get(child)?.created ?? null;
    const own = parents.filter((p) => isOwnChild(byId.get(p)?.created ?? null, childCreated));
    const pick = (own.length > 0 ? own : parents).sort((a, b) =>
      (byId.get(a)?.created ?? "") < (byId.get(b)?.created ?? "") ? 1 : -1
    )[0]!;
    parentOf.set(child, { parent: pick, relation: "subagent" });
  }
  // Lineage edges win over copied subagent events.
  for (const r of rows) {
    if (r.lineage && r.parent) {
      parentOf.set(r.sessionId, { parent: r.parent, relation: r.lineage.kind });
    }
  }

  const nodes = new Map<string, TreeNode>();
  const node = (id: string, relation: TreeRelation): TreeNode => {
    let n = nodes.get(id);
    if (!n) {
      n = { sessionId: id, relation, summary: byId.get(id) ?? null, children: [] };
      nodes.set(id, n);
    }
    n.relation = relation;
    return n;
  };
  const ids = new Set([...byId.keys(), ...parentOf.keys()]);
  for (const id of ids) node(id, "root");
  const roots: TreeNode[] = [];
  for (const id of ids) {
    const edge = parentOf.get(id);
    const n = node(id, edge?.relation ?? "root");
    if (edge && !createsCycle(id, edge.parent, parentOf)) {
      node(edge.parent, parentOf.get(edge.parent)?.relation ?? "root").children.push(n);
    } else {
      n.relation = "root";
      roots.push(n);
    }
  }
  for (const id of parentOf.keys()) {
    const p = parentOf.get(id)!.parent;
    if (!ids.has(p) && !parentOf.has(p)) roots.push(nodes.get(p)!);
  }
  // A child run as another agent (run_subagent with agent_id) keeps its trace
  // under that agent: look there before calling it missing.
  const missing = [...nodes.values()].filter((n) => n.summary === null);
  if (missing.length > 0) {
    const everywhere = new Map(
      (await listSessions({ ...options, allAgents: true })).map((r) => [r.sessionId, r]),
    );
    for (const n of missing) n.summary = everywhere.get(n.sessionId) ?? null;
  }
  const key = (n: TreeNode) => n.summary?.created ?? n.sessionId;
  const order = (list: TreeNode[]) => {
    list.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    for (const n of list) order(n.children);
  };
  const forest = [...new Set(roots)];
  order(forest);
  if (options.session === undefined) return forest;
  const { id: target, notFound } = await treeTarget(options, options.session);
  if (!nodes.has(target)) {
    if (notFound) throw notFound;
    throw new PenguinError(
      "not_found",
      `Session does not exist: ${target} (searched ${agentTracesDir(options)})`,
    );
  }
  return forest.filter((r) => contains(r, target));
}

/** The session id `session` names; a session only named by others (not on disk) stays as given. */
/** Trace files scanned for subagent events at once. */
const SCANS_AT_ONCE = 16;
/** The read buffer each scan reuses from one file to the next. */
const SCAN_BUFFER = 256 * 1024;

async function treeTarget(
  scope: SessionScope,
  session: string,
): Promise<{ id: string; notFound?: PenguinError }> {
  try {
    return { id: (await locateSession({ ...scope, target: session })).sessionId };
  } catch (err) {
    if (err instanceof PenguinError && err.kind === "not_found") {
      return { id: session, notFound: err };
    }
    throw err;
  }
}

function createsCycle(
  id: string,
  parent: string,
  parentOf: Map<string, { parent: string }>,
): boolean {
  const seen = new Set([id]);
  for (let p: string | undefined = parent; p !== undefined; p = parentOf.get(p)?.parent) {
    if (seen.has(p)) return true;
    seen.add(p);
  }
  return false;
}

function contains(n: TreeNode, id: string): boolean {
  return n.sessionId === id || n.children.some((c) => contains(c, id));
}
