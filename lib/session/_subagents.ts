// Finding the `subagent` events of a trace file without parsing every line:
// the file is searched for the event's type marker (which, with its
// unescaped quotes, cannot occur inside a JSON string) by lib/trace/lines.ts,
// and only a short line holding a hit is parsed and checked.
import { openRegularFile } from "../state/_fs.ts";
import { linesWith } from "../trace/lines.ts";

const MARK = new TextEncoder().encode('"type":"subagent"');
const SHORT = 1024; // a subagent event line is far shorter than this
const dec = new TextDecoder();
/** The read buffer of a scan: the file's size within these bounds. */
const CHUNK_MIN = 4096;
const CHUNK_MAX = 1 << 20;

function childOfLine(bytes: Uint8Array): string | null {
  if (bytes.length > SHORT) return null;
  try {
    const v = JSON.parse(dec.decode(bytes)) as {
      type?: unknown;
      origin?: unknown;
      payload?: { type?: unknown; session_id?: unknown };
    };
    if (v.type !== "event_msg" || v.origin !== undefined) return null;
    if (v.payload?.type !== "subagent") return null;
    const id = v.payload.session_id;
    return typeof id === "string" && id !== "" ? id : null;
  } catch {
    return null;
  }
}

/** The child session ids named by `subagent` events in the trace at `path`, in order, without duplicates. */
export async function subagentChildren(path: string, buf?: Uint8Array): Promise<string[]> {
  let file: Deno.FsFile;
  try {
    // Not a regular file (a FIFO would block the open, a device read without end): no children.
    file = await openRegularFile(path);
  } catch {
    return [];
  }
  const found: string[] = [];
  try {
    // Without a buffer to reuse, one no larger than the file: `sessions tree` scans every file of
    // the agent, and a megabyte each (off the heap, freed late) took 60,000 small files to 450 MB.
    const chunk = buf ?? Math.min(CHUNK_MAX, Math.max(CHUNK_MIN, (await file.stat()).size + 1));
    for await (const line of linesWith(file, MARK, SHORT, chunk)) {
      const id = childOfLine(line);
      if (id !== null && !found.includes(id)) found.push(id);
    }
  } finally {
    file.close();
  }
  return found;
}
