/**
 * Unpacking a `.tar.gz` to disk with bounded memory: the file is
 * decompressed once, in pieces (lib/state/_gzip.ts), each piece parsed as
 * tar as it comes (lib/state/_tar.ts), and each file's bytes written to its
 * file as they arrive. Nothing holds more than one decompressed piece (about
 * 8 MiB), whatever the archive's size. The caller decides where each entry
 * goes (or refuses it by throwing) before any of its bytes are written.
 *
 * @module
 */
import { dirname } from "node:path";
import { gunzipFileStream } from "./_gzip.ts";
import { type TarHeader, tarParser } from "./_tar.ts";

/** Where an entry goes: a file to create, a directory to make, or nowhere (its bytes dropped). */
export type Placement =
  | { file: string; mode: number; onData?: (piece: Uint8Array) => void }
  | { dir: string }
  | undefined;

/** The archive is not gzip data (`layer: "gzip"`) or not a tar archive (`"tar"`). */
export class ArchiveFormatError extends Error {
  /** Which layer is malformed. */
  readonly layer: "gzip" | "tar";
  constructor(layer: "gzip" | "tar", message: string) {
    super(message);
    this.layer = layer;
  }
}

/** A write error in words for a refusal (a name too long, a path given twice…). */
export function writeFailure(err: unknown): string {
  if (err instanceof Deno.errors.AlreadyExists || err instanceof Deno.errors.NotADirectory) {
    return "the path is given twice, or is both a file and a directory";
  }
  const message = err instanceof Error ? err.message : String(err);
  if (/name too long/i.test(message)) return "a name in the path is too long for the file system";
  return message.replace(/ \(os error \d+\)$/, "");
}

/**
 * Unpack the `.tar.gz` at `source`: each entry is given to `place`, which
 * throws to refuse it; a file is created new (never through an existing
 * path) and written as its bytes arrive. Returns false, having stopped, when
 * the tar would pass `limit` bytes. Throws {@linkcode ArchiveFormatError} for
 * a malformed archive, `fail(why)` when a file or directory cannot be made,
 * and what `place` throws; on any failure the caller removes what was written.
 */
export async function unpackTarGz(
  source: string,
  limit: number,
  place: (header: TarHeader) => Placement | Promise<Placement>,
  fail: (path: string, why: string) => Error,
): Promise<boolean> {
  let file: Deno.FsFile | undefined;
  let onData: ((piece: Uint8Array) => void) | undefined;
  let current = "";
  const parser = tarParser({
    async entry(header) {
      const where = await place(header);
      if (where === undefined) return;
      const path = "dir" in where ? where.dir : where.file;
      try {
        if ("dir" in where) {
          await Deno.mkdir(where.dir, { recursive: true, mode: 0o700 });
          return;
        }
        await Deno.mkdir(dirname(where.file), { recursive: true, mode: 0o700 });
        file = await Deno.open(where.file, { write: true, createNew: true, mode: where.mode });
        if (Deno.build.os !== "windows") await Deno.chmod(where.file, where.mode);
      } catch (err) {
        throw fail(path, writeFailure(err));
      }
      onData = where.onData;
      current = path;
    },
    async data(piece) {
      onData?.(piece);
      if (!file) return;
      try {
        for (let off = 0; off < piece.length;) off += await file.write(piece.subarray(off));
      } catch (err) {
        throw fail(current, writeFailure(err));
      }
    },
    done() {
      file?.close();
      file = undefined;
      onData = undefined;
      return Promise.resolve();
    },
  });
  let parsing: unknown;
  const tarStep = async (step: () => Promise<void>) => {
    try {
      await step();
    } catch (err) {
      parsing = err; // told apart from the decompressor's own errors below
      throw err;
    }
  };
  try {
    let size: number | undefined;
    try {
      size = await gunzipFileStream(source, limit, (chunk) => tarStep(() => parser.push(chunk)));
    } catch (err) {
      if (err === parsing) throw err;
      if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.PermissionDenied) {
        throw err;
      }
      throw new ArchiveFormatError("gzip", err instanceof Error ? err.message : String(err));
    }
    if (size === undefined) return false;
    await tarStep(() => parser.end());
    return true;
  } catch (err) {
    if (err === parsing && !(err instanceof Deno.errors.NotFound) && isTarError(err)) {
      throw new ArchiveFormatError("tar", (err as Error).message);
    }
    throw err;
  } finally {
    file?.close();
  }
}

/** True for the tar reader's own errors (plain Errors), not a refusal or a write failure. */
function isTarError(err: unknown): boolean {
  return err instanceof Error && err.constructor === Error;
}
