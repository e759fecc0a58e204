/**
 * Healing a torn trace tail: a record whose write failed part-way (a full
 * disk, a killed process) leaves the file ending in a fragment without its
 * newline. The next writer of the trace cuts that fragment off, so the file
 * ends at its last complete record again and `trace validate` passes, and
 * says what it dropped.
 *
 * @module
 */
import { tryOpen } from "../state/_fs.ts";

const SCAN = 64 * 1024;
const PEEK = 512;

/** What {@linkcode cutTornTail} removed. */
export interface TornTail {
  /** The file. */
  path: string;
  /** Bytes removed. */
  bytes: number;
  /** The cut record's kind (`tool_call`, `session_meta`…) when its start says so. */
  kind?: string;
}

/** The kind a record's first bytes name: its payload type, else its message type. */
function kindOf(head: string): string | undefined {
  const payload = /"payload":\{"type":"([a-z_]{1,40})"/.exec(head);
  if (payload) return payload[1];
  const type = /^\{(?:"timestamp":"[^"]{0,40}",)?"type":"([a-z_]{1,40})"/.exec(head);
  return type?.[1];
}

/**
 * Truncate the file at `path` after its last newline (to empty when it has
 * none) when its last byte is not a newline. Returns what was removed, or
 * undefined when the tail was whole (or the file missing or empty).
 */
export async function cutTornTail(path: string): Promise<TornTail | undefined> {
  const file = await tryOpen(path, { read: true, write: true }, "missing");
  if (file === null) return undefined;
  try {
    const { size } = await file.stat();
    if (size === 0) return undefined;
    const buf = new Uint8Array(SCAN);
    let end = size;
    let keep = 0; // bytes kept: up to and including the last newline
    let first = true;
    while (end > 0) {
      const from = Math.max(0, end - SCAN);
      await file.seek(from, Deno.SeekMode.Start);
      const want = end - from;
      let got = 0;
      while (got < want) {
        const n = await file.read(buf.subarray(got, want));
        if (n === null) break;
        got += n;
      }
      if (got < want) throw new Error(`the file shrank while its tail was read`);
      if (first && buf[want - 1] === 0x0a) return undefined;
      first = false;
      const nl = buf.subarray(0, want).lastIndexOf(0x0a);
      if (nl >= 0) {
        keep = from + nl + 1;
        break;
      }
      end = from;
    }
    await file.seek(keep, Deno.SeekMode.Start);
    const head = new Uint8Array(Math.min(PEEK, size - keep));
    let got = 0;
    while (got < head.length) {
      const n = await file.read(head.subarray(got));
      if (n === null) break;
      got += n;
    }
    await file.truncate(keep);
    await file.sync();
    const kind = kindOf(new TextDecoder().decode(head.subarray(0, got)));
    return { path, bytes: size - keep, ...(kind ? { kind } : {}) };
  } finally {
    file.close();
  }
}

/** The line that reports a cut tail. */
export function tornTailNotice(cut: TornTail): string {
  const what = cut.kind ? `a ${cut.kind} record` : "a record";
  return `[trace] removed the torn end of "${cut.path}": ${what} cut short by a write that failed ` +
    `(${cut.bytes} byte(s) without their newline); the trace ends at its last complete record`;
}
