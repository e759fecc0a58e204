// Writing new trace files from the bytes of existing ones: fork, clone and
// import copy the selected lines of a source file verbatim (so `fidelity`
// and every other field keep their exact bytes) behind a new first line.
import { dirname } from "node:path";
import { errorMessage, PenguinError } from "../protocol/errors.ts";

const NL = 0x0a;
const CHUNK = 1 << 20;
const enc = new TextEncoder();

/** Where copied bytes go. */
export interface Sink {
  /** Write bytes (buffered). */
  write(bytes: Uint8Array): Promise<void>;
  /** Write a string as UTF-8. */
  text(s: string): Promise<void>;
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) {
    const n = await file.write(bytes.subarray(off));
    if (n <= 0) throw new Error("the write made no progress");
    off += n;
  }
}

async function mkdirPrivate(dir: string): Promise<void> {
  try {
    await Deno.stat(dir);
    return;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const parent = dirname(dir);
  if (parent !== dir) await mkdirPrivate(parent);
  try {
    await Deno.mkdir(dir, { mode: 0o700 });
    await Deno.chmod(dir, 0o700);
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
  }
}

/**
 * Create `path` exclusively (mode 0600; missing directories 0700) and fill
 * it through `fill`; the file is synced and closed. Throws a PenguinError of
 * kind "runtime" with `AlreadyExists` as its cause when the file exists;
 * on any other failure the partial file is removed.
 */
export async function createTraceFile(
  path: string,
  fill: (sink: Sink) => Promise<void>,
): Promise<void> {
  await mkdirPrivate(dirname(path));
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
  } catch (err) {
    throw new PenguinError("runtime", `Cannot create trace "${path}": ${errorMessage(err)}`, {
      cause: err,
    });
  }
  const buf = new Uint8Array(CHUNK);
  let used = 0;
  const flush = async () => {
    if (used > 0) await writeAll(file, buf.subarray(0, used));
    used = 0;
  };
  const sink: Sink = {
    async write(bytes) {
      if (used + bytes.length > buf.length) await flush();
      if (bytes.length >= buf.length) await writeAll(file, bytes);
      else {
        buf.set(bytes, used);
        used += bytes.length;
      }
    },
    text(s) {
      return sink.write(enc.encode(s));
    },
  };
  try {
    await Deno.chmod(path, 0o600);
    await fill(sink);
    await flush();
    await file.sync();
  } catch (err) {
    try {
      file.close();
    } catch { /* already closed */ }
    await Deno.remove(path).catch(() => {});
    if (err instanceof PenguinError) throw err;
    throw new PenguinError("runtime", `Cannot write trace "${path}": ${errorMessage(err)}`, {
      cause: err,
    });
  }
  file.close();
}

/** True when `err` (or its cause) says the file already existed. */
export function alreadyExists(err: unknown): boolean {
  return err instanceof Deno.errors.AlreadyExists ||
    (err instanceof Error && err.cause instanceof Deno.errors.AlreadyExists);
}

/**
 * Copy the lines of `src` for which `select(line)` holds (1-based, counted
 * as the trace reader counts them), up to line `lastLine`, byte for byte. A
 * selected last line without its newline gets one. Returns the number of
 * lines copied.
 */
export async function copyLines(
  src: string,
  select: (line: number) => boolean,
  lastLine: number,
  sink: Sink,
): Promise<number> {
  if (lastLine < 1) return 0;
  const file = await Deno.open(src, { read: true });
  try {
    const buf = new Uint8Array(CHUNK);
    let line = 1;
    let selected = select(1);
    let open = false; // the current selected line has bytes but no newline yet
    let copied = 0;
    while (line <= lastLine) {
      const n = await file.read(buf);
      if (n === null) break;
      const view = n === buf.length ? buf : buf.subarray(0, n);
      let start = 0;
      while (start < n && line <= lastLine) {
        const nl = view.indexOf(NL, start);
        const end = nl === -1 ? n : nl + 1;
        if (selected) {
          await sink.write(view.subarray(start, end));
          open = nl === -1;
        }
        if (nl === -1) break;
        if (selected) copied++;
        line++;
        selected = line <= lastLine && select(line);
        open = false;
        start = end;
      }
    }
    if (open) {
      await sink.write(new Uint8Array([NL]));
      copied++;
    }
    return copied;
  } finally {
    file.close();
  }
}
