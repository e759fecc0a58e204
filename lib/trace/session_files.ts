/**
 * Which trace files make up a session: grouping files into sessions (by
 * their `<session>_<NNN>.jsonl` name, else by their session_meta), and
 * finding the files of a related session (a subagent child, a parent, a
 * fork) near a trace. The one lookup every command uses for a child's trace.
 *
 * @module
 */
import { basename } from "node:path";
import { parseJsonBounded } from "../protocol/bounded_json.ts";
import type { SessionMeta } from "../protocol/types.ts";
import { relativesDirsOf, walkTraceFiles } from "./layout.ts";
import { readFirstLine } from "./lines.ts";
import { parseTraceFileName } from "./paths.ts";

/** One trace file of a session. */
export interface TraceFile {
  /** Path as found (absolute when found by session id). */
  path: string;
  /** The `_NNN` index from the file name; null for other names. */
  index: number | null;
}

/** The files of one session, in order. */
export interface SessionFiles {
  /** The grouping key: the session id from the file names, else the meta's, else the path. */
  key: string;
  /** The files, by index (then path). */
  files: TraceFile[];
}

/**
 * What {@linkcode findRelative} has read, to pass to repeated lookups so each
 * directory is walked and each file's head is read once. Opaque: create it
 * with `new Map()`.
 */
export type RelativesCache = Map<string, string | null>;

/**
 * The first record of a trace file, parsed, when it is a session_meta; null
 * otherwise (missing file, empty file, not JSON, or another record first).
 * Reads at most the first 16 MiB.
 */
export async function readSessionMeta(path: string): Promise<SessionMeta | null> {
  const line = await readFirstLine(path);
  if (line === null) return null;
  try {
    const value = parseJsonBounded(line.trim(), `"${path}" line 1`) as {
      type?: unknown;
      payload?: { session_id?: unknown };
    } | null;
    if (value?.type !== "session_meta" || typeof value.payload !== "object") return null;
    return typeof value.payload.session_id === "string" ? value.payload as SessionMeta : null;
  } catch {
    return null;
  }
}

function byIndexThenPath(a: TraceFile, b: TraceFile): number {
  return (a.index ?? 0) - (b.index ?? 0) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/**
 * Group trace files into sessions: by the session id of a
 * `<session>_<NNN>.jsonl` name, else by the session_meta's `session_id`,
 * else each file alone. Sessions are sorted by key, files by index.
 */
export async function groupSessions(paths: readonly string[]): Promise<SessionFiles[]> {
  const groups = new Map<string, TraceFile[]>();
  for (const path of paths) {
    const parsed = parseTraceFileName(basename(path));
    let key: string;
    let index: number | null = null;
    if (parsed) {
      key = parsed.sessionId;
      index = parsed.index;
    } else {
      key = (await readSessionMeta(path))?.session_id ?? path;
    }
    const list = groups.get(key) ?? [];
    list.push({ path, index });
    groups.set(key, list);
  }
  const out: SessionFiles[] = [];
  for (const [key, files] of groups) out.push({ key, files: files.sort(byIndexThenPath) });
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

// Cache keys: a directory walked is stored under NUL + its path (no file path
// holds a NUL), with its files joined by NUL; a file's meta id under its path.
async function walkCached(dir: string, cache: RelativesCache): Promise<string[]> {
  const key = `\0${dir}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit === null || hit === "" ? [] : hit.split("\0");
  const files = await walkTraceFiles(dir);
  cache.set(key, files.join("\0"));
  return files;
}

async function metaIdCached(path: string, cache: RelativesCache): Promise<string | null> {
  let id = cache.get(path);
  if (id === undefined) {
    id = (await readSessionMeta(path))?.session_id ?? null;
    cache.set(path, id);
  }
  return id;
}

/**
 * Find the trace files of session `id` near the trace at `tracePath`: in its
 * traces tree (or its own directory, for a file outside one) and in the
 * other agents' traces directories of its project ({@linkcode relativesDirsOf}).
 * Files named `<id>_NNN.jsonl` are taken first; else every other `*.jsonl`
 * there whose session_meta names `id`. Null when there is none.
 */
export async function findRelative(
  tracePath: string,
  id: string,
  cache: RelativesCache = new Map(),
): Promise<SessionFiles | null> {
  const byName: TraceFile[] = [];
  const others: string[] = [];
  for (const dir of await relativesDirsOf(tracePath)) {
    for (const f of await walkCached(dir, cache)) {
      const parsed = parseTraceFileName(basename(f));
      if (parsed?.sessionId === id) byName.push({ path: f, index: parsed.index });
      else if (!parsed) others.push(f);
    }
  }
  if (byName.length > 0) return { key: id, files: byName.sort(byIndexThenPath) };
  const matches: TraceFile[] = [];
  for (const f of others) {
    if (await metaIdCached(f, cache) === id) matches.push({ path: f, index: null });
  }
  return matches.length > 0 ? { key: id, files: matches } : null;
}
