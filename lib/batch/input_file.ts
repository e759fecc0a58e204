/**
 * Reading a file a batch command was given (a task file, a results file):
 * only a regular file is opened (`openRegularFile`) — a FIFO would block the
 * open until a writer came, and a device such as `/dev/zero` reads without
 * end — and never more than a limit, checked on the open handle before the
 * read.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import { formatSize } from "../protocol/format_size.ts";
import { openRegularFile, readOpenUpTo } from "../state/_fs.ts";

/**
 * The text of the regular file at `path`, at most `limit` bytes; undefined
 * when it does not exist. Anything else that stops the read — not a regular
 * file (a FIFO, device or socket), larger than `limit`, unreadable — is a
 * PenguinError of `kind`: `<label> "<path>": <why>`, where `label` says what
 * was attempted ("batch report: cannot read the results file") and
 * `tooLarge` why a file over `limit` is refused.
 */
export async function readBatchInput(
  path: string,
  label: string,
  limit: number,
  kind: "usage" | "runtime" = "usage",
  tooLarge = `it holds more than ${formatSize(limit)}`,
): Promise<string | undefined> {
  const refuse = (why: string) => new PenguinError(kind, `${label} "${path}": ${why}`);
  let bytes: Uint8Array | undefined;
  try {
    using file = await openRegularFile(path, { label, kind });
    bytes = await readOpenUpTo(file, limit);
  } catch (err) {
    if (err instanceof PenguinError && err.kind === "not_found") return undefined;
    if (err instanceof PenguinError) throw err;
    throw refuse((err as Error).message);
  }
  if (bytes === undefined) throw refuse(tooLarge);
  return new TextDecoder().decode(bytes);
}
