/**
 * A strict reader of tar archives (ustar, with pax and GNU long names) that
 * returns every entry's path exactly as the archive wrote it, so callers can
 * refuse `..`, absolute paths and links instead of having them rewritten.
 * {@linkcode readTar} reads an archive held in memory; {@linkcode tarParser}
 * reads one as it arrives, in pieces, handing each entry's bytes on as they
 * come so an archive is never held whole.
 *
 * @module
 */

/** One entry: its raw path, kind, permission bits and (for files) bytes. */
export interface TarEntry {
  /** The path as written in the archive (long names and pax `path` applied). */
  path: string;
  /** `file`, `directory`, or what else the type flag says. */
  kind: "file" | "directory" | "symlink" | "hardlink" | "other";
  /** The mode field's permission bits (`0o7777` at most; 0 when the field is empty). */
  mode: number;
  /** File contents (empty for other kinds). */
  data: Uint8Array;
}

const BLOCK = 512;
const decoder = new TextDecoder();

function text(bytes: Uint8Array, start: number, length: number): string {
  const field = bytes.subarray(start, start + length);
  const nul = field.indexOf(0);
  return decoder.decode(nul < 0 ? field : field.subarray(0, nul));
}

function octal(bytes: Uint8Array, start: number, length: number): number {
  if ((bytes[start]! & 0x80) !== 0) throw new Error("base-256 sizes are not supported");
  const s = text(bytes, start, length).trim();
  if (s === "") return 0;
  if (!/^[0-7]+$/.test(s)) throw new Error(`bad octal field ${JSON.stringify(s)}`);
  return parseInt(s, 8);
}

function checksumOk(header: Uint8Array): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
  return sum === octal(header, 148, 8);
}

/** The `path` record of a pax extended header, if any. */
function paxPath(data: Uint8Array): string | undefined {
  const records = decoder.decode(data);
  let at = 0;
  let path: string | undefined;
  while (at < records.length) {
    const space = records.indexOf(" ", at);
    if (space < 0) break;
    const length = Number(records.slice(at, space));
    if (!Number.isInteger(length) || length <= 0) break;
    const record = records.slice(space + 1, at + length - 1);
    const eq = record.indexOf("=");
    if (eq > 0 && record.slice(0, eq) === "path") path = record.slice(eq + 1);
    at += length;
  }
  return path;
}

const KINDS: Record<string, TarEntry["kind"]> = {
  "0": "file",
  "": "file",
  "7": "file",
  "5": "directory",
  "2": "symlink",
  "1": "hardlink",
};

/** The path of the entry whose header is `header`: the long name or pax `path` when given. */
function entryPath(header: Uint8Array, nextPath: string | undefined): string {
  if (nextPath !== undefined) return nextPath;
  const path = text(header, 0, 100);
  const magic = text(header, 257, 6);
  const prefix = magic.startsWith("ustar") ? text(header, 345, 155) : "";
  return prefix ? `${prefix}/${path}` : path;
}

/** Read every entry of `tar`. Throws an Error saying what is wrong with a malformed archive. */
export function readTar(tar: Uint8Array): TarEntry[] {
  const out: TarEntry[] = [];
  let at = 0;
  let nextPath: string | undefined;
  while (at + BLOCK <= tar.length) {
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((b) => b === 0)) break; // end of archive
    if (!checksumOk(header)) throw new Error(`bad header checksum at byte ${at}`);
    const size = octal(header, 124, 12);
    const flag = text(header, 156, 1);
    const start = at + BLOCK;
    if (start + size > tar.length) throw new Error(`entry at byte ${at} runs past the end`);
    const data = tar.subarray(start, start + size);
    at = start + Math.ceil(size / BLOCK) * BLOCK;
    if (flag === "x") {
      nextPath = paxPath(data) ?? nextPath;
      continue;
    }
    if (flag === "L") {
      nextPath = text(data, 0, data.length);
      continue;
    }
    if (flag === "g" || flag === "K") continue;
    const path = entryPath(header, nextPath);
    nextPath = undefined;
    const kind = KINDS[flag] ?? "other";
    const mode = octal(header, 100, 8) & 0o7777;
    out.push({ path, kind, mode, data: kind === "file" ? data : new Uint8Array() });
  }
  return out;
}

/** An entry as {@linkcode tarParser} announces it, before its bytes. */
export interface TarHeader {
  /** The path as written in the archive (long names and pax `path` applied). */
  path: string;
  /** `file`, `directory`, or what else the type flag says. */
  kind: TarEntry["kind"];
  /** The mode field's permission bits. */
  mode: number;
  /** Bytes of the file (0 for other kinds). */
  size: number;
}

/** What {@linkcode tarParser} hands each entry to, in archive order. */
export interface TarSink {
  /** A new entry begins. */
  entry(header: TarHeader): Promise<void>;
  /** The next piece of the current file's bytes (valid only during the call). */
  data(piece: Uint8Array): Promise<void>;
  /** The current entry is complete. */
  done(): Promise<void>;
}

/** Pax and long-name records larger than this are refused (they are held in memory). */
export const TAR_META_LIMIT = 1024 * 1024;

/**
 * A tar reader fed in pieces: `push` each piece in order, then `end`. It
 * holds one header block and the pax or long-name record being read, never
 * a file's bytes, which go to `sink` as they arrive. Throws an Error saying
 * what is wrong with a malformed archive (or what `sink` threw).
 */
export function tarParser(sink: TarSink): {
  push(chunk: Uint8Array): Promise<void>;
  end(): Promise<void>;
} {
  // Long because: one state machine (header, data, padding) whose steps share its counters.
  const header = new Uint8Array(BLOCK);
  let have = 0; // bytes of `header` filled
  let offset = 0; // archive bytes consumed
  let remaining = 0; // bytes of the current entry still to come
  let pad = 0; // padding after them
  let meta: { flag: string; parts: Uint8Array[] } | undefined;
  let isFile = false;
  let open = false; // an entry was announced and not yet completed
  let nextPath: string | undefined;
  let ended = false;

  const finish = async () => {
    if (meta) {
      const data = new Uint8Array(meta.parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of meta.parts) {
        data.set(p, at);
        at += p.length;
      }
      if (meta.flag === "x") nextPath = paxPath(data) ?? nextPath;
      else if (meta.flag === "L") nextPath = text(data, 0, data.length);
      meta = undefined;
    } else if (open) {
      open = false;
      await sink.done();
    }
  };

  const start = async () => {
    if (header.every((b) => b === 0)) {
      ended = true; // end of archive
      return;
    }
    const at = offset - BLOCK;
    if (!checksumOk(header)) throw new Error(`bad header checksum at byte ${at}`);
    const size = octal(header, 124, 12);
    const flag = text(header, 156, 1);
    remaining = size;
    pad = Math.ceil(size / BLOCK) * BLOCK - size;
    if (flag === "x" || flag === "L" || flag === "g" || flag === "K") {
      if (size > TAR_META_LIMIT) {
        throw new Error(`a header record at byte ${at} is larger than ${TAR_META_LIMIT} bytes`);
      }
      meta = { flag, parts: [] };
    } else {
      const kind = KINDS[flag] ?? "other";
      isFile = kind === "file";
      const path = entryPath(header, nextPath);
      nextPath = undefined;
      open = true;
      await sink.entry({
        path,
        kind,
        mode: octal(header, 100, 8) & 0o7777,
        size: isFile ? size : 0,
      });
    }
    if (remaining === 0) await finish();
  };

  return {
    async push(chunk) {
      let i = 0;
      while (i < chunk.length && !ended) {
        if (remaining > 0) {
          const n = Math.min(remaining, chunk.length - i);
          const piece = chunk.subarray(i, i + n);
          if (meta) meta.parts.push(piece.slice());
          else if (isFile) await sink.data(piece);
          i += n;
          offset += n;
          remaining -= n;
          if (remaining === 0) await finish();
        } else if (pad > 0) {
          const n = Math.min(pad, chunk.length - i);
          i += n;
          offset += n;
          pad -= n;
        } else {
          const n = Math.min(BLOCK - have, chunk.length - i);
          header.set(chunk.subarray(i, i + n), have);
          have += n;
          i += n;
          offset += n;
          if (have === BLOCK) {
            have = 0;
            await start();
          }
        }
      }
    },
    async end() {
      if (remaining > 0) throw new Error(`the entry ending the archive runs past its end`);
      await finish();
    },
  };
}
