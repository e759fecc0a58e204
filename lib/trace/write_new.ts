/**
 * A whole trace written at once into a new file, for traces made from
 * something else (an imported session staged before it is moved into place):
 * the lines are those the session writer makes (`JSON.stringify(msg) + "\n"`
 * for each recordable message), gathered into writes of about a MiB instead
 * of one write per record. A session's live trace goes through the writer
 * (lib/trace/writer.ts), which keeps each record whole in the file as it
 * comes.
 *
 * @module
 */
import { dirname } from "node:path";
import { encodeJoined } from "../protocol/bytes.ts";
import { errorMessage, PenguinError } from "../protocol/errors.ts";
import { isRecordable } from "../protocol/guards.ts";
import type { OmniMessage } from "../protocol/types.ts";
import { mkdirPrivate } from "../state/_fs.ts";
import { COLLECT_EVERY_BYTES, collectorEvery } from "../state/_gc.ts";
import { FILE_MODE } from "./_fs.ts";

/** Gathered text is written once it reaches this many characters. */
const WRITE_AT = 1 << 20;

/**
 * Write `records` (the recordable ones) as a new trace at `path`, its
 * directory made private when missing; an existing file is refused. Synced
 * before it returns when `sync`. Returns the records written.
 */
export async function writeNewTrace(
  path: string,
  records: AsyncIterable<OmniMessage> | Iterable<OmniMessage>,
  sync: boolean,
): Promise<number> {
  await mkdirPrivate(dirname(path));
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { write: true, createNew: true, mode: FILE_MODE });
  } catch (err) {
    throw new PenguinError("runtime", `Cannot create trace "${path}": ${errorMessage(err)}`, {
      cause: err,
    });
  }
  let parts: string[] = [];
  let gathered = 0;
  let count = 0;
  // The records come from a conversion that makes garbage fast: collected as it goes.
  const collected = collectorEvery(COLLECT_EVERY_BYTES);
  const flush = async () => {
    const data = encodeJoined(parts);
    collected(gathered);
    parts = [];
    gathered = 0;
    for (let off = 0; off < data.length;) off += await file.write(data.subarray(off));
  };
  try {
    for await (const msg of records) {
      if (!isRecordable(msg)) continue;
      const json = JSON.stringify(msg);
      parts.push(json, "\n");
      gathered += json.length + 1;
      count++;
      if (gathered >= WRITE_AT) await flush();
    }
    await flush();
    if (sync) await file.sync();
  } catch (err) {
    throw new PenguinError("runtime", `Cannot write trace "${path}": ${errorMessage(err)}`, {
      cause: err,
    });
  } finally {
    file.close();
  }
  return count;
}
