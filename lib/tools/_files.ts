/**
 * File helpers shared by the file tools: atomic writes that keep the file's
 * mode, line counting, pluralising, and the not-found message.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";

const CAN_CHMOD = Deno.build.os !== "windows";

function randomSuffix(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 8);
}

/**
 * Write `data` to `path` atomically: a temp file `.<base>.tmp-<pid>-<rand>`
 * in the same directory is written, flushed and renamed over `path`. `mode`
 * (the previous file's permission bits) is applied exactly; without it the
 * new file gets the default mode (0666 minus umask). Renaming replaces a
 * hard link instead of writing through it.
 */
export async function writeFileAtomic(
  path: string,
  data: Uint8Array,
  mode?: number,
): Promise<void> {
  const base = basename(path).slice(0, 200);
  const tmp = join(dirname(path), `.${base}.tmp-${Deno.pid}-${randomSuffix()}`);
  const file = await Deno.open(tmp, { write: true, createNew: true, mode: mode ?? 0o666 });
  try {
    try {
      let off = 0;
      while (off < data.length) off += await file.write(data.subarray(off));
      await file.syncData();
    } finally {
      file.close();
    }
    if (mode !== undefined && CAN_CHMOD) await Deno.chmod(tmp, mode);
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}

/** Lines as `cat -n` numbers them: a trailing newline ends the last line, it does not add one. */
export function contentLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** `1 line`, `2 lines`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** True for errors meaning "no such file" (including a file used as a directory). */
export function isNotFound(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory;
}
