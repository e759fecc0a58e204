// Finding the trace files of a subagent child next to its parent's trace
// file, for imports that bring a family along.
import { basename, dirname, join } from "node:path";
import { isDateDirName, listSessionFiles, parseTraceFileName } from "../trace/paths.ts";
import { peekHead } from "./locate.ts";

/** Files of session `id` next to `source`: its directory, its traces tree, sibling agents' traces. */
export async function childFiles(source: string, id: string): Promise<string[]> {
  const dir = dirname(source);
  if (isDateDirName(basename(dir))) {
    const traces = dirname(dir);
    const dirs = [traces];
    const agents = dirname(dirname(traces));
    if (basename(traces) === "traces" && basename(agents) === "agents") {
      try {
        for await (const e of Deno.readDir(agents)) {
          const t = join(agents, e.name, "traces");
          if (e.isDirectory && t !== traces) dirs.push(t);
        }
      } catch { /* no siblings */ }
    }
    for (const t of dirs) {
      const found = await listSessionFiles(t, id).catch(() => []);
      if (found.length > 0) return found.map((f) => f.path);
    }
  }
  const byName: Array<{ path: string; index: number }> = [];
  const others: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || !e.name.endsWith(".jsonl")) continue;
      const parsed = parseTraceFileName(e.name);
      if (parsed?.sessionId === id) byName.push({ path: join(dir, e.name), index: parsed.index });
      else if (!parsed) others.push(join(dir, e.name));
    }
  } catch {
    return [];
  }
  if (byName.length > 0) return byName.sort((a, b) => a.index - b.index).map((f) => f.path);
  const out: string[] = [];
  for (const f of others.sort()) {
    const head = await peekHead(f);
    if (head?.meta?.session_id === id) out.push(f);
  }
  return out;
}
