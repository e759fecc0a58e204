/**
 * Finding a session's trace files: by id, by a unique part of its id, by the
 * path of any of its files, or `latest`. Every command that takes a session
 * resolves it here, the same way. Only directory listings and file heads are
 * read. A session's files may span date directories; the highest-index file
 * is its current context. `latest` is the newest session (date directories,
 * then file names, both descending) with a record besides its session_meta.
 *
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { agentsDir, tracesDir as agentTracesDir } from "../state/paths.ts";
import {
  assertSessionId,
  isDateDirName,
  listSessionFiles,
  parseTraceFileName,
  type TraceFileRef,
} from "../trace/paths.ts";
import { agentsWithTraces, sessionFilesIn, tracesDirsOfRoot } from "../trace/layout.ts";
import { payloadOf, readHead } from "./_head_tail.ts";
import { statExisting, tryOpen } from "../state/_fs.ts";

/** The agent whose sessions are meant. */
export interface SessionScope {
  /** Absolute data root. */
  root: string;
  /** Project id. */
  projectId: string;
  /** Agent id. */
  agentId: string;
}

/** A session found on disk. */
export interface LocatedSession {
  /** The session id (from the file names; for a loose file, from its session_meta). */
  sessionId: string;
  /** The traces directory it lives in; null for a loose file outside any traces directory. */
  tracesDir: string | null;
  /** The agent it belongs to, when it lives under `<project>/agents/<agent>/traces`. */
  agentId: string | null;
  /** Every file of the session, by ascending index. */
  files: TraceFileRef[];
  /** The highest-index file: the current model context. */
  latest: TraceFileRef;
}

/** Options of {@linkcode locateSession}. */
export interface LocateOptions extends SessionScope {
  /**
   * A session id, a unique part of one (see {@linkcode sessionIdMatches}),
   * the path of one of its trace files, or `latest`.
   */
  target: string;
  /** Search every agent of the project when the id is not under `agentId` (default false). */
  allAgents?: boolean;
  /** Let `latest` pick subagent sessions too (default false: they are skipped). */
  latestIncludesSubagents?: boolean;
}

/** True when `target` names a file rather than a session id. */
export function isPathTarget(target: string): boolean {
  return target.includes("/") || target.includes("\\") || target.endsWith(".jsonl");
}

async function dirNames(dir: string): Promise<{ dirs: string[]; files: string[] }> {
  const dirs: string[] = [];
  const files: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.name.startsWith(".")) continue;
      if (e.isDirectory) dirs.push(e.name);
      else if (e.isFile) files.push(e.name);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return { dirs, files };
    }
    throw err;
  }
  return { dirs, files };
}

const desc = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);

/** The first record and whether any other record follows, from the head of `path`. */
export async function peekHead(
  path: string,
): Promise<
  {
    first: Record<string, unknown> | null;
    meta: Record<string, unknown> | null;
    more: boolean;
  } | null
> {
  const file = await tryOpen(path, { read: true });
  if (file === null) return null;
  try {
    const { size } = await file.stat();
    const head = await readHead(file, size);
    const meta = head.first?.type === "session_meta" ? payloadOf(head.first) : null;
    return { first: head.first, meta, more: head.more };
  } finally {
    file.close();
  }
}

/**
 * The most recent session with at least one record besides its
 * session_meta: date directories descending, then file names descending;
 * meta-only files are skipped, and so are subagent sessions unless
 * `includeSubagents`. Null when there is none.
 */
export async function latestSessionId(
  tracesDir: string,
  options: { includeSubagents?: boolean | undefined } = {},
): Promise<string | null> {
  return (await latestEntry(tracesDir, options))?.sessionId ?? null;
}

async function latestEntry(
  tracesDir: string,
  options: { includeSubagents?: boolean | undefined },
): Promise<{ sessionId: string; dateDir: string } | null> {
  const { dirs } = await dirNames(tracesDir);
  const rejected = new Set<string>();
  for (const d of dirs.sort(desc)) {
    const { files } = await dirNames(join(tracesDir, d));
    for (const f of files.sort(desc)) {
      const parsed = parseTraceFileName(f);
      if (!parsed || rejected.has(parsed.sessionId)) continue;
      const head = await peekHead(join(tracesDir, d, f));
      if (!head?.more) continue;
      if (!options.includeSubagents && head.meta?.source === "subagent") {
        rejected.add(parsed.sessionId);
        continue;
      }
      return { sessionId: parsed.sessionId, dateDir: d };
    }
  }
  return null;
}

/** The session ids that have a trace file in `tracesDir`, sorted. */
async function sessionIdsIn(tracesDir: string): Promise<string[]> {
  return [...(await sessionFilesIn(tracesDir)).keys()].sort();
}

/**
 * The ids among `ids` that `target` names: `target` alone when it is one of
 * them; else every id that starts or ends with it, or whose last `-` part
 * (the 8 hex digits of `session-…-3f8a1c2d`) starts with it.
 */
export function sessionIdMatches(target: string, ids: Iterable<string>): string[] {
  const all = [...new Set(ids)];
  if (all.includes(target)) return [target];
  if (target === "") return [];
  return all.filter((s) =>
    s.startsWith(target) || s.endsWith(target) ||
    s.slice(s.lastIndexOf("-") + 1).startsWith(target)
  ).sort();
}

/** The usage error for a `target` that matches several sessions, listing them. */
function ambiguous(target: string, matches: string[], where: string): PenguinError {
  const shown = matches.slice(0, 10).join(", ") + (matches.length > 10 ? ", …" : "");
  return new PenguinError(
    "usage",
    `"${target}" matches ${matches.length} sessions in ${where}: ${shown}; give more of the id`,
  );
}

function agentOfTracesDir(tracesDir: string): string | null {
  if (basename(tracesDir) !== "traces") return null;
  const agent = dirname(tracesDir);
  return basename(dirname(agent)) === "agents" ? basename(agent) : null;
}

async function locateByPath(target: string): Promise<LocatedSession> {
  const path = resolve(target);
  const info = await statExisting(path, "Trace file");
  if (!info.isFile) {
    throw new PenguinError("usage", `Not a trace file: ${path} is a directory`);
  }
  const dir = dirname(path);
  const parsed = parseTraceFileName(basename(path));
  if (parsed && isDateDirName(basename(dir))) {
    const tracesDir = dirname(dir);
    const files = await listSessionFiles(tracesDir, parsed.sessionId);
    if (files.length > 0) {
      return {
        sessionId: parsed.sessionId,
        tracesDir,
        agentId: agentOfTracesDir(tracesDir),
        files,
        latest: files[files.length - 1]!,
      };
    }
  }
  // A loose file (or a set of `<stem>_NNN.jsonl` siblings) outside any traces layout.
  let files: TraceFileRef[];
  if (parsed) {
    files = [];
    for (const f of (await dirNames(dir)).files) {
      const p = parseTraceFileName(f);
      if (p && p.sessionId === parsed.sessionId) {
        files.push({ path: join(dir, f), dateDir: basename(dir), ...p });
      }
    }
    files.sort((a, b) => a.index - b.index);
  } else {
    files = [{ path, dateDir: basename(dir), sessionId: basename(path, ".jsonl"), index: 1 }];
  }
  const latest = files[files.length - 1]!;
  const head = await peekHead(files[0]!.path);
  const metaId = head?.meta?.session_id;
  return {
    sessionId: typeof metaId === "string" && metaId !== "" ? metaId : latest.sessionId,
    tracesDir: null,
    agentId: null,
    files,
    latest,
  };
}

/**
 * Find a session by id, by a unique part of its id, by the path of one of
 * its trace files, or `latest`. The agent's own sessions are searched first,
 * then (for a hint, or with `allAgents` for the session itself) the
 * project's other agents. Throws a PenguinError of kind "not_found" naming
 * what was searched when there is no such session, and of kind "usage"
 * listing the candidates when part of an id matches several sessions.
 */
export async function locateSession(options: LocateOptions): Promise<LocatedSession> {
  const { root, projectId, agentId, target } = options;
  const tracesDir = agentTracesDir({ root, projectId, agentId });
  if (target === "latest") {
    const id = await latestSessionId(tracesDir, {
      includeSubagents: options.latestIncludesSubagents,
    });
    if (id === null) {
      throw new PenguinError(
        "not_found",
        `No session found: no trace with records under ${tracesDir}`,
      );
    }
    return await locateById(id, tracesDir, agentId);
  }
  if (isPathTarget(target)) return await locateByPath(target);
  assertSessionId(target);
  const here = await listSessionFiles(tracesDir, target);
  if (here.length > 0) return found(target, tracesDir, agentId, here);
  const hereIds = sessionIdMatches(target, await sessionIdsIn(tracesDir));
  if (hereIds.length > 1) throw ambiguous(target, hereIds, tracesDir);
  if (hereIds.length === 1) return await locateById(hereIds[0]!, tracesDir, agentId);
  const hits: { agent: string; dir: string; id: string }[] = [];
  for (const other of (await agentsWithTraces(root, projectId)).filter((a) => a !== agentId)) {
    const dir = agentTracesDir({ root, projectId, agentId: other });
    for (const id of sessionIdMatches(target, await sessionIdsIn(dir))) {
      hits.push({ agent: other, dir, id });
    }
  }
  const exact = hits.filter((h) => h.id === target);
  const elsewhere = exact.length > 0 ? exact : hits;
  if (elsewhere.length > 1) {
    throw ambiguous(
      target,
      elsewhere.map((h) => `${h.id} (agent ${h.agent})`),
      agentsDir({ root, projectId }),
    );
  }
  const other = elsewhere[0];
  if (other !== undefined) {
    if (options.allAgents) return await locateById(other.id, other.dir, other.agent);
    const named = other.id === target ? target : `${target} (${other.id})`;
    throw new PenguinError(
      "not_found",
      `Session does not exist: ${named} (searched ${tracesDir}); it belongs to agent "${other.agent}": pass --agent-id ${other.agent}`,
    );
  }
  const searched = options.allAgents ? agentsDir({ root, projectId }) + "/*/traces" : tracesDir;
  throw new PenguinError("not_found", `Session does not exist: ${target} (searched ${searched})`);
}

async function locateById(id: string, tracesDir: string, agentId: string): Promise<LocatedSession> {
  const files = await listSessionFiles(tracesDir, id);
  if (files.length === 0) {
    throw new PenguinError("not_found", `Session does not exist: ${id} (searched ${tracesDir})`);
  }
  return found(id, tracesDir, agentId, files);
}

function found(
  sessionId: string,
  tracesDir: string,
  agentId: string,
  files: TraceFileRef[],
): LocatedSession {
  return { sessionId, tracesDir, agentId, files, latest: files[files.length - 1]! };
}

/**
 * Find a session anywhere in the data root `root` (every project and agent):
 * by id, by a unique part of its id, or `latest` (the most recent session
 * with records, subagent sessions skipped), with the same rules and errors
 * as {@linkcode locateSession}. For commands that read traces without an
 * agent scope (`penguin trace …`).
 */
export async function locateInRoot(root: string, target: string): Promise<LocatedSession> {
  let info: Deno.FileInfo | null = null;
  try {
    info = await Deno.stat(root);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  if (!info?.isDirectory) {
    throw new PenguinError(
      "not_found",
      `Cannot find session "${target}": the data root "${root}" does not exist (give a trace file or directory, or set --root/PENGUIN_HOME)`,
    );
  }
  const dirs = await tracesDirsOfRoot(root);
  if (target === "latest") {
    let best: { sessionId: string; dateDir: string; tracesDir: string; agentId: string } | null =
      null;
    for (const d of dirs) {
      const e = await latestEntry(d.tracesDir, {});
      if (e === null) continue;
      if (
        best === null || e.dateDir > best.dateDir ||
        (e.dateDir === best.dateDir && e.sessionId > best.sessionId)
      ) best = { ...e, ...d };
    }
    if (best === null) {
      throw new PenguinError(
        "not_found",
        `No session found: no trace with records under ${root}/*/agents/*/traces`,
      );
    }
    return await locateById(best.sessionId, best.tracesDir, best.agentId);
  }
  assertSessionId(target);
  const hits: { tracesDir: string; agentId: string; id: string }[] = [];
  for (const d of dirs) {
    for (const id of sessionIdMatches(target, await sessionIdsIn(d.tracesDir))) {
      hits.push({ ...d, id });
    }
  }
  const exact = hits.filter((h) => h.id === target);
  const matches = exact.length > 0 ? exact : hits;
  const ids = [...new Set(matches.map((h) => h.id))];
  if (ids.length > 1) throw ambiguous(target, ids, `"${root}"`);
  const hit = matches[0];
  if (hit === undefined) {
    throw new PenguinError(
      "not_found",
      `Cannot find "${target}": not a file or directory, and no session with that id under "${root}"`,
    );
  }
  return await locateById(hit.id, hit.tracesDir, hit.agentId);
}
