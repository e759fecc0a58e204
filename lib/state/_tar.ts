/**
 * A strict reader of tar archives (ustar, with pax and GNU long names) that
 * returns every entry's path exactly as the archive wrote it, so callers can
 * refuse `..`, absolute paths and links instead of having them rewritten.
 * Pure: bytes in, entries out.
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
    let path = text(header, 0, 100);
    const magic = text(header, 257, 6);
    const prefix = magic.startsWith("ustar") ? text(header, 345, 155) : "";
    if (prefix) path = `${prefix}/${path}`;
    if (nextPath !== undefined) path = nextPath;
    nextPath = undefined;
    const kind = KINDS[flag] ?? "other";
    const mode = octal(header, 100, 8) & 0o7777;
    out.push({ path, kind, mode, data: kind === "file" ? data : new Uint8Array() });
  }
  return out;
}
