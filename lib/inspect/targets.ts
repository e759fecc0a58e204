/**
 * What an inspect command works on. A target is a trace file, a directory
 * (searched recursively), or a session looked up in the data root
 * (`<root>/*\/agents/*\/traces/*\/<id>_NNN.jsonl`): an id, a unique part of
 * one, or `latest`. Files are grouped into
 * sessions by their name (`<session>_<NNN>.jsonl`), or by the session_meta's
 * `session_id` for other names. Paths need no data root; only a session id
 * does. Nothing here writes.
 *
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import type { SessionMeta } from "../protocol/types.ts";
import { resolveDataRoot } from "../state/root.ts";
import { isDateDirName, parseTraceFileName } from "../trace/paths.ts";
import { locateInRoot } from "../session/locate.ts";

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

/** Options of {@linkcode resolveTargets}. */
export interface TargetOptions {
  /** The `--root` flag; only used for session ids. */
  root?: string;
  /** Environment lookup for the data root; default `Deno.env.get`. */
  env?: (name: string) => string | undefined;
}

const SESSION_ARG_RE = /^[A-Za-z0-9_-]+$/;

async function statOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch {
    return null;
  }
}

async function entries(dir: string): Promise<Deno.DirEntry[]> {
  const out: Deno.DirEntry[] = [];
  try {
    for await (const e of Deno.readDir(dir)) out.push(e);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) return [];
    throw err;
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Every `*.jsonl` file under `dir`, sorted. Inside a data root only trace
 * directories are searched: below an `agents` directory only
 * `<agent>/traces`, and in an agent directory (one holding `agent_state`)
 * only `traces`, so files an agent left in its scratchpad or workspaces are
 * never taken for traces. Symlinked directories are not followed.
 */
export async function walkTraceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const visit = async (d: string, mode: "any" | "agents") => {
    const list = await entries(d);
    const isAgentDir = list.some((e) => e.isDirectory && e.name === "agent_state");
    for (const e of list) {
      const p = join(d, e.name);
      if (e.isDirectory) {
        if (e.name.startsWith(".")) continue;
        if (mode === "agents") {
          await visit(join(p, "traces"), "any");
        } else if (isAgentDir) {
          if (e.name === "traces") await visit(p, "any");
        } else {
          await visit(p, e.name === "agents" ? "agents" : "any");
        }
      } else if (mode === "any" && !isAgentDir && e.name.endsWith(".jsonl")) {
        if (e.isFile || (e.isSymlink && (await statOrNull(p))?.isFile)) out.push(p);
      }
    }
  };
  await visit(dir, basename(dir) === "agents" ? "agents" : "any");
  return out;
}

/**
 * The first record of a trace file, parsed, when it is a session_meta; null
 * otherwise (missing file, empty file, not JSON, or another record first).
 * Reads at most the first 16 MiB.
 */
export async function readSessionMeta(path: string): Promise<SessionMeta | null> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch {
    return null;
  }
  try {
    const chunks: Uint8Array[] = [];
    let total = 0;
    const buf = new Uint8Array(64 * 1024);
    while (total < 16 << 20) {
      const n = await file.read(buf);
      if (n === null) break;
      const view = buf.subarray(0, n);
      const nl = view.indexOf(0x0a);
      if (nl >= 0) {
        chunks.push(view.slice(0, nl));
        total += nl;
        break;
      }
      chunks.push(view.slice());
      total += n;
    }
    const all = new Uint8Array(total);
    let off = 0;
    for (const c of chunks) {
      all.set(c.subarray(0, Math.min(c.length, total - off)), off);
      off += c.length;
    }
    const value = JSON.parse(new TextDecoder().decode(all).trim());
    if (value?.type !== "session_meta" || typeof value.payload !== "object") return null;
    return typeof value.payload.session_id === "string" ? value.payload as SessionMeta : null;
  } catch {
    return null;
  } finally {
    file.close();
  }
}

/** Group trace files into sessions (see the module doc). */
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
  for (const [key, files] of groups) {
    files.sort((a, b) =>
      (a.index ?? 0) - (b.index ?? 0) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
    );
    out.push({ key, files });
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * The files of session `target` in the data root: a session id, a unique
 * part of one, or `latest`, resolved as every command resolves a session
 * ({@linkcode locateInRoot}). Throws not_found when nothing matches and
 * usage, listing the candidates, when several sessions do.
 */
export async function findSessionInRoot(root: string, target: string): Promise<SessionFiles> {
  const located = await locateInRoot(root, target);
  return {
    key: located.sessionId,
    files: located.files.map((f) => ({ path: f.path, index: f.index })),
  };
}

/**
 * Resolve one target (file, directory, session id, unique part of one, or
 * `latest`) to its sessions. A path that exists wins over a session id of
 * the same name.
 */
export async function resolveTarget(
  target: string,
  options: TargetOptions = {},
): Promise<SessionFiles[]> {
  const info = await statOrNull(target);
  if (info?.isDirectory) return groupSessions(await walkTraceFiles(target));
  if (info) return groupSessions([target]);
  if (!SESSION_ARG_RE.test(target)) {
    throw new PenguinError("not_found", `Cannot read "${target}": no such file or directory`);
  }
  const root = resolveDataRoot({ root: options.root, env: options.env });
  return [await findSessionInRoot(root, target)];
}

/** Resolve several targets; sessions found twice are kept once. */
export async function resolveTargets(
  targets: readonly string[],
  options: TargetOptions = {},
): Promise<SessionFiles[]> {
  const out: SessionFiles[] = [];
  const seen = new Set<string>();
  for (const t of targets) {
    for (const s of await resolveTarget(t, options)) {
      const id = s.files.map((f) => resolve(f.path)).join("\0");
      if (seen.has(id)) continue;
      seen.add(id);
      out.push(s);
    }
  }
  return out;
}

/**
 * The directory tree searched for a trace's relatives (subagent children,
 * forks): the traces directory when the file sits in `<traces>/<yyyy-mm-dd>/`,
 * else the file's own directory.
 */
export function relativesDirOf(tracePath: string): string {
  const dir = dirname(tracePath);
  return isDateDirName(basename(dir)) ? dirname(dir) : dir;
}

/**
 * Directories to search for the traces of session relatives of the file at
 * `tracePath`: its relatives dir, plus the traces dirs of sibling agents when
 * it lives in `<proj>/agents/<agent>/traces/…` (a cross-agent subagent keeps
 * its trace with its own agent).
 */
export async function relativesDirsOf(tracePath: string): Promise<string[]> {
  const own = relativesDirOf(tracePath);
  const dirs = [own];
  if (basename(own) === "traces" && basename(dirname(dirname(own))) === "agents") {
    const agents = dirname(dirname(own));
    for (const a of await entries(agents)) {
      const t = join(agents, a.name, "traces");
      if (a.isDirectory && t !== own) dirs.push(t);
    }
  }
  return dirs;
}

/**
 * Find the trace files of session `id` near `tracePath` (see
 * {@linkcode relativesDirsOf}): by file name first, else by reading the
 * session_meta of each other `*.jsonl` there. Null when not found.
 */
export async function findRelative(
  tracePath: string,
  id: string,
  metaCache?: Map<string, string | null>,
): Promise<SessionFiles | null> {
  const dirs = await relativesDirsOf(tracePath);
  const byName: string[] = [];
  const others: string[] = [];
  for (const dir of dirs) {
    for (const f of await walkTraceFiles(dir)) {
      const parsed = parseTraceFileName(basename(f));
      if (parsed?.sessionId === id) byName.push(f);
      else if (!parsed) others.push(f);
    }
  }
  if (byName.length > 0) return (await groupSessions(byName))[0]!;
  const matches: string[] = [];
  for (const f of others) {
    let sid = metaCache?.get(f);
    if (sid === undefined) {
      sid = (await readSessionMeta(f))?.session_id ?? null;
      metaCache?.set(f, sid);
    }
    if (sid === id) matches.push(f);
  }
  return matches.length > 0
    ? { key: id, files: matches.map((path) => ({ path, index: null })) }
    : null;
}

/**
 * The `.project_config.toml` that prices a trace: `<proj>/.project_config.toml`
 * when the file sits in `<proj>/agents/<agent>/traces/<date>/`; null otherwise.
 */
export function projectConfigPathOf(tracePath: string): string | null {
  const abs = resolve(tracePath);
  const traces = dirname(dirname(abs));
  const agents = dirname(dirname(traces));
  if (basename(traces) !== "traces" || basename(agents) !== "agents") return null;
  return join(dirname(agents), ".project_config.toml");
}

/**
 * The agent id of a session: from the meta's `agent_state`
 * (`…/agents/<agent>/agent_state`), else from the trace path, else null.
 */
export function agentIdOf(meta: SessionMeta | null, tracePath: string): string | null {
  const state = meta?.agent_state;
  if (typeof state === "string" && basename(state) === "agent_state") {
    const agentDir = dirname(state);
    if (basename(dirname(agentDir)) === "agents") return basename(agentDir);
  }
  const traces = dirname(dirname(resolve(tracePath)));
  if (basename(traces) === "traces" && basename(dirname(dirname(traces))) === "agents") {
    return basename(dirname(traces));
  }
  return null;
}
