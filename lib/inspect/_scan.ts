// A fast, tolerant trace scanner for `trace stats`. It yields light records:
// the envelope kind, payload type, timestamp and the handful of fields stats
// needs, without parsing the large strings (tool outputs, arguments, text,
// thinking) of model messages written in the canonical field order
// (`{"timestamp","type","payload":{"type","role",…,"tool_call_id","stop_reason"}}`,
// what penguin and PenguinHarness write). Events and session metas are parsed
// in full (they are small), tool_list_ready is skipped, and every line that
// does not have the canonical shape goes through JSON.parse. Memory stays flat:
// a line longer than LONG_LINE is never gathered unless the slow path needs it.
import { formatProblem, MAX_RECORD_BYTES, type TraceProblem } from "../trace/reader.ts";
import { formatSize } from "../protocol/format_size.ts";
import { openTrace, readLines } from "../trace/lines.ts";
import { PenguinError } from "../protocol/errors.ts";
import { fast, type LiteRecord, slow } from "./_scan_record.ts";

export type { LiteRecord } from "./_scan_record.ts";

const dec = new TextDecoder();
const LONG_LINE = 4 << 20;
const EDGE = 64 * 1024;

/** Options of {@linkcode scanTrace}. */
export interface ScanOptions {
  /** Called for every skipped line. */
  onProblem?: (problem: TraceProblem) => void;
  /** Throw on the first problem instead (kind "data"). */
  strict?: boolean;
}

function isBlank(head: Uint8Array): boolean {
  return head.length === 0 ||
    (head[0] !== 0x7b && dec.decode(head.subarray(0, 4096)).trim() === "");
}

/** Scan the trace at `path`, calling `onRecord` for every record, in order. */
export async function scanTrace(
  path: string,
  onRecord: (rec: LiteRecord) => void,
  options: ScanOptions = {},
): Promise<{ lines: number; records: number; bytes: number }> {
  const file = await openTrace(path);
  let records = 0;
  const problem = (line: number, kind: TraceProblem["kind"], reason: string) => {
    const p: TraceProblem = { file: path, line, kind, reason };
    if (options.strict) throw new PenguinError("data", formatProblem(p));
    options.onProblem?.(p);
  };
  const finish = (rec: LiteRecord | string, line: number, terminated: boolean) => {
    if (typeof rec === "string") {
      if (!terminated && rec.startsWith("not valid JSON")) {
        problem(line, "torn_tail", "torn last line: a record cut short without its newline");
      } else problem(line, rec.startsWith("not valid JSON") ? "malformed" : "invalid", rec);
      return;
    }
    records++;
    onRecord(rec);
  };
  let lines = 0;
  try {
    for await (const batch of readLines(file, { decode: false, gatherLimit: LONG_LINE })) {
      for (const l of batch) {
        lines = l.no;
        if (l.kind === "bytes") {
          const bytes = l.bytes;
          if (isBlank(bytes)) continue;
          finish(fast(bytes, bytes, l.no) ?? slow(bytes, l.no), l.no, l.terminated);
        } else if (l.kind === "long") {
          // Never gathered unless the slow path needs the whole line.
          const head = await l.read(0, EDGE);
          if (isBlank(head)) continue;
          const tail = await l.read(Math.max(0, l.size - EDGE), l.size);
          const rec = fast(head, tail, l.no);
          if (rec !== null) finish(rec, l.no, l.terminated);
          // Read whole only within the record bound: a sparse or hostile tail of gigabytes cost
          // its size in memory (attack round 24 bounded R14: 4 GiB, 4.3 GB and a crash).
          else if (l.size > MAX_RECORD_BYTES) {
            problem(
              l.no,
              "malformed",
              `a record of ${formatSize(l.size)}, over the ${
                formatSize(MAX_RECORD_BYTES)
              } a record may hold (not read)`,
            );
          } else finish(slow(await l.read(), l.no), l.no, l.terminated);
        }
      }
    }
    return { lines, records, bytes: await file.seek(0, Deno.SeekMode.Current) };
  } finally {
    file.close();
  }
}
