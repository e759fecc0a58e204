/**
 * Where traces live in a data root, beyond one session's file names (see
 * paths.ts): `<root>/<project>/agents/<agent>/traces/<yyyy-mm-dd>/<id>_NNN.jsonl`.
 * Walking a directory for trace files, listing the sessions of a traces
 * directory, the directories where a trace's relatives (subagent children,
 * forks) live, the next file of a rotated session, and what a trace's place
 * in the tree says (its agent, its project's config file).
 *
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import type { SessionMeta } from "../protocol/types.ts";
import { agentsDir, tracesDir as agentTracesDir } from "../state/paths.ts";
import { readDirEntries } from "./_fs.ts";
import { isDateDirName, parseTraceFileName, traceFileName, type TraceFileRef } from "./paths.ts";

async function entries(dir: string): Promise<Deno.DirEntry[]> {
  return (await readDirEntries(dir)).sort((
    a,
    b,
  ) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function isFileOrLinkToFile(e: Deno.DirEntry, path: string): Promise<boolean> {
  if (e.isFile) return true;
  if (!e.isSymlink) return false;
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/**
 * Every `*.jsonl` file under `dir`, sorted. Inside a data root only trace
 * directories are searched: below an `agents` directory only
 * `<agent>/traces`, and in an agent directory (one holding `agent_state`)
 * only `traces`, so files an agent left in its scratchpad or workspaces are
 * never taken for traces. Hidden and symlinked directories are not entered.
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
        if (await isFileOrLinkToFile(e, p)) out.push(p);
      }
    }
  };
  await visit(dir, basename(dir) === "agents" ? "agents" : "any");
  return out;
}

/**
 * Every session of a traces directory (`<tracesDir>/<yyyy-mm-dd>/<id>_NNN.jsonl`):
 * session id → its files by ascending index (then date directory). Hidden
 * entries and names of another form are ignored.
 */
export async function sessionFilesIn(tracesDir: string): Promise<Map<string, TraceFileRef[]>> {
  const byId = new Map<string, TraceFileRef[]>();
  for (const d of await entries(tracesDir)) {
    if (!d.isDirectory || d.name.startsWith(".")) continue;
    for (const f of await entries(join(tracesDir, d.name))) {
      if (!f.isFile || f.name.startsWith(".")) continue;
      const parsed = parseTraceFileName(f.name);
      if (!parsed) continue;
      const ref = { path: join(tracesDir, d.name, f.name), dateDir: d.name, ...parsed };
      const list = byId.get(parsed.sessionId);
      if (list) list.push(ref);
      else byId.set(parsed.sessionId, [ref]);
    }
  }
  for (const list of byId.values()) {
    list.sort((a, b) => a.index - b.index || (a.dateDir < b.dateDir ? -1 : 1));
  }
  return byId;
}

/** The agent ids of a project that have a traces directory, sorted. */
export async function agentsWithTraces(root: string, projectId: string): Promise<string[]> {
  const agents = agentsDir({ root, projectId });
  const out: string[] = [];
  for (const a of await entries(agents)) {
    if (!a.isDirectory || a.name.startsWith(".")) continue;
    const inside = await entries(join(agents, a.name));
    if (inside.some((e) => e.isDirectory && e.name === "traces")) out.push(a.name);
  }
  return out;
}

/** Every `<project>/agents/<agent>/traces` directory of the data root `root`, by project then agent. */
export async function tracesDirsOfRoot(
  root: string,
): Promise<{ tracesDir: string; agentId: string }[]> {
  const out: { tracesDir: string; agentId: string }[] = [];
  for (const p of await entries(root)) {
    if (!p.isDirectory || p.name.startsWith(".")) continue;
    for (const agentId of await agentsWithTraces(root, p.name)) {
      out.push({ tracesDir: agentTracesDir({ root, projectId: p.name, agentId }), agentId });
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
    for (const a of await entries(agents).catch(() => [])) {
      const t = join(agents, a.name, "traces");
      if (a.isDirectory && t !== own) dirs.push(t);
    }
  }
  return dirs;
}

/** The path of the file after `path` in a rotated session (`_NNN` + 1); null when the name has no index. */
export function nextShardPath(path: string): string | null {
  const parsed = parseTraceFileName(basename(path));
  if (!parsed) return null;
  try {
    return join(dirname(path), traceFileName(parsed.sessionId, parsed.index + 1));
  } catch {
    // Not a session-id-shaped name: keep its own spelling.
    const width = Math.max(3, String(parsed.index + 1).length);
    return join(
      dirname(path),
      `${parsed.sessionId}_${String(parsed.index + 1).padStart(width, "0")}.jsonl`,
    );
  }
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
