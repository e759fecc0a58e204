/**
 * The ids of the tool calls a session recorded, in trace order: what a view
 * that starts partway through a session (a resumed `run` or `chat`, `trace
 * follow` at the latest file) needs to go on numbering its calls as `trace
 * show` numbers them from the first file (lib/display/call_numbers.ts).
 * Calls forwarded from subagents (records with an `origin`) are left out:
 * they are numbered within their own sessions.
 *
 * @module
 */
import { basename, dirname } from "node:path";
import { readTrace } from "../trace/reader.ts";
import { listSessionFiles, parseTraceFileName } from "../trace/paths.ts";

/** The main-session tool call ids recorded in `paths`, read in the order given. */
export async function recordedCallIds(paths: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const path of paths) {
    // Tolerant: a torn or damaged line is skipped here as trace show skips it. Only lines naming
    // a tool call are read (a resumed run reads its whole latest file once more here).
    for await (
      const { message } of readTrace(path, { onProblem: () => {}, holding: '"tool_call"' })
    ) {
      if (message.origin && message.origin.length > 0) continue;
      if (message.type === "model_msg" && message.payload.type === "tool_call") {
        ids.push(message.payload.tool_call_id);
      }
    }
  }
  return ids;
}

/**
 * The trace files of the session whose file `tracePath` is, up to and
 * including it, in order: `<tracesDir>/<date>/<session>_<NNN>.jsonl`, across
 * date directories. Empty when the name is not a trace file name.
 */
export async function sessionFilesThrough(tracePath: string): Promise<string[]> {
  const parsed = parseTraceFileName(basename(tracePath));
  if (parsed === null) return [];
  const all = await listSessionFiles(dirname(dirname(tracePath)), parsed.sessionId);
  return all.filter((f) => f.index <= parsed.index).map((f) => f.path);
}
