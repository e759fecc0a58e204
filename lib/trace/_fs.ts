// Small file-system helpers shared by the writer, the lock and the layout queries.
import { tryOpen } from "../state/_fs.ts";

/** Mode of every file the trace store creates. */
export const FILE_MODE = 0o600;

/** The entries of `dir`, in no particular order; none when it is missing or not a directory. */
export async function readDirEntries(dir: string): Promise<Deno.DirEntry[]> {
  const out: Deno.DirEntry[] = [];
  try {
    for await (const e of Deno.readDir(dir)) out.push(e);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) return [];
    throw err;
  }
  return out;
}

/** The last byte of the file at `path`; null when it is missing or empty. */
export async function lastByte(path: string): Promise<number | null> {
  const file = await tryOpen(path, { read: true }, "missing");
  if (file === null) return null;
  try {
    const { size } = await file.stat();
    if (size === 0) return null;
    await file.seek(size - 1, Deno.SeekMode.Start);
    const one = new Uint8Array(1);
    const n = await file.read(one);
    return n === 1 ? one[0]! : null;
  } finally {
    file.close();
  }
}
