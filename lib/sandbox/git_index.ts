/**
 * Reads a git index (`<git dir>/index`) for entries git's `verify_path`
 * would refuse. git 2.39 does not verify an index's paths when it checks out
 * from it (`git checkout -- .`, `git restore .`): an entry `.git/hooks/x`
 * is written into the real `.git/hooks`, an entry `sub/.git/config` makes a
 * nested repository (attack round 19 concgit, R2). A command that can write
 * an index (one in a repository it made, or the workspace's own with
 * `--git-writable`) could so make the user's next checkout plant a hook.
 *
 * The reader is bounded: the file (and a split index's `sharedindex.<hash>`)
 * is read in windows of {@linkcode WINDOW} bytes, up to
 * {@linkcode MAX_INDEX_BYTES}, and only the previous entry's name is kept
 * (index v4 compresses a name against it). It reads versions 2, 3 and 4,
 * extended flags, the `link` (split index) and `REUC` (resolve-undo)
 * extensions, and the entries and extensions a multi-threaded git reads at
 * the offsets of `EOIE` and `IEOT`. It does not know whether the repository
 * uses SHA-1 or SHA-256 for sure (git takes `extensions.objectformat` from
 * a configuration that is the model's in a repository a command made), so
 * when the configuration mentions it the file is read both ways: a refused
 * entry in a reading of the whole file is a problem. A file that cannot be
 * read as the configuration says is a problem too (fail closed); a missing
 * index is none. Synchronous (`_look.ts`): a plan's look.
 *
 * @module
 */
import { isAbsolute, join } from "node:path";
import { closeSync, constants, fstatSync, readSync } from "node:fs";
import { lstatOrNone, openNoFollowNow, readRegularTextNow } from "./_look.ts";
import { hexOf } from "../protocol/hex.ts";

/** An index (or shared index) larger than this is not read: it counts as a problem. */
export const MAX_INDEX_BYTES = 64 * 1024 * 1024;

/** How much of the file is read at a time. */
const WINDOW = 1 << 20;

/** An `IEOT` naming more blocks than this is not read (git writes one per thread): a problem. */
const MAX_BLOCKS = 4096;

/** A name longer than this is not read (no file system takes it): a problem. */
const MAX_NAME_BYTES = 64 * 1024;

/** Why the index cannot be read as git reads it. */
class Malformed extends Error {}

/** Random access to a file through one window of {@linkcode WINDOW} bytes. */
class Source {
  private buf = new Uint8Array(0);
  private start = 0;
  constructor(private fd: number, readonly size: number) {}

  /** The `n` bytes at `pos` (a view, valid until the next call); throws past the end. */
  at(pos: number, n: number): Uint8Array {
    if (pos < 0 || n < 0 || pos + n > this.size) throw new Malformed("it is truncated");
    if (pos >= this.start && pos + n <= this.start + this.buf.length) {
      return this.buf.subarray(pos - this.start, pos - this.start + n);
    }
    const want = Math.min(Math.max(n, WINDOW), this.size - pos);
    const buf = new Uint8Array(want);
    let got = 0;
    while (got < want) {
      const r = readSync(this.fd, buf, got, want - got, pos + got);
      if (r === 0) throw new Malformed("it is truncated");
      got += r;
    }
    this.buf = buf;
    this.start = pos;
    return buf.subarray(0, n);
  }

  u32(pos: number): number {
    const b = this.at(pos, 4);
    return ((b[0]! << 24) >>> 0) + (b[1]! << 16) + (b[2]! << 8) + b[3]!;
  }

  u16(pos: number): number {
    const b = this.at(pos, 2);
    return (b[0]! << 8) + b[1]!;
  }

  /** The offset of the first NUL at or after `pos`, looked for up to `max` bytes. */
  nul(pos: number, max: number): number {
    for (let from = pos; from < this.size && from - pos <= max;) {
      const n = Math.min(WINDOW, this.size - from);
      const at = this.at(from, n).indexOf(0);
      if (at >= 0) return from + at <= pos + max ? from + at : -1;
      from += n;
    }
    return -1;
  }
}

const SIGNATURE = [0x44, 0x49, 0x52, 0x43]; // "DIRC"
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;

/** What one reading of an index found: a refused entry, or nothing; throws {@linkcode Malformed}. */
interface Reading {
  bad?: string;
  /** The shared index a `link` extension names (hex), or undefined. */
  shared?: string;
}

const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));
const EXT = {
  link: ascii("link"),
  reuc: ascii("REUC"),
  eoie: ascii("EOIE"),
  ieot: ascii("IEOT"),
};

/** The extensions git knows (the others it ignores when their name starts in upper case). */
const KNOWN_EXTENSIONS = ["TREE", "REUC", "link", "UNTR", "FSMN", "EOIE", "IEOT", "sdir"].map(
  ascii,
);

function sameBytes(a: Uint8Array, b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Shown in a reason: the path as text (lossily), quoted. */
function shown(name: Uint8Array): string {
  const text = new TextDecoder().decode(name.length > 300 ? name.subarray(0, 300) : name);
  return JSON.stringify(text);
}

/**
 * Read `count` entries of an index of `version` from `pos` with hashes of
 * `hash` bytes; the offset after them and the first refused entry.
 */
function readEntries(
  src: Source,
  pos: number,
  count: number,
  version: number,
  hash: number,
): { end: number; bad?: string; unnamed: boolean } {
  let prev: Uint8Array = new Uint8Array(0);
  let bad: string | undefined;
  let unnamed = false;
  for (let i = 0; i < count; i++) {
    const mode = src.u32(pos + 24);
    const flags = src.u16(pos + 40 + hash);
    let nameAt = pos + 40 + hash + 2;
    // git reads extended flags whenever the bit is set, whatever the version.
    if (flags & 0x4000) nameAt += 2;
    const flagLen = flags & 0x0fff;
    let name: Uint8Array;
    if (version === 4) {
      const { strip, at } = varint(src, nameAt);
      if (strip > prev.length) throw new Malformed("an entry strips more than the previous name");
      const keep = prev.length - strip;
      let len = flagLen;
      if (flagLen === 0x0fff) {
        const nul = src.nul(at, MAX_NAME_BYTES);
        if (nul < 0) throw new Malformed("an entry's name is too long");
        len = nul - at + keep;
      }
      // git copies the name's length (from the flags) less what it keeps, and a byte more.
      if (len < keep) throw new Malformed("an entry's name is shorter than what it keeps");
      if (len > MAX_NAME_BYTES) throw new Malformed("an entry's name is too long");
      name = new Uint8Array(len);
      name.set(prev.subarray(0, keep));
      name.set(src.at(at, len - keep), keep);
      pos = at + (len - keep) + 1;
    } else {
      let len = flagLen;
      if (flagLen === 0x0fff) {
        const nul = src.nul(nameAt, MAX_NAME_BYTES);
        if (nul < 0) throw new Malformed("an entry's name is too long");
        len = nul - nameAt;
      }
      name = src.at(nameAt, len).slice();
      pos += (nameAt - pos + len + 8) & ~7;
    }
    // A split index writes an entry that replaces one of its shared index without a name: that
    // one's (checked in the shared index). Refused below when there is none.
    if (name.length === 0) unnamed = true;
    else bad ??= pathProblem(name, mode);
    prev = name;
  }
  if (pos > src.size) throw new Malformed("it is truncated");
  return { end: pos, unnamed, ...(bad !== undefined ? { bad } : {}) };
}

/** git's `decode_varint` at `pos`: the number and the offset after it (`pos`, 0 on overflow). */
function varint(src: Source, pos: number): { strip: number; at: number } {
  let at = pos;
  let c = src.at(at++, 1)[0]!;
  let val = c & 127;
  while (c & 128) {
    val += 1;
    // git's overflow check (at 64 bits); numbers past 2^53 are no name's length anyway.
    if (val >= 2 ** 45) return { strip: 0, at: pos };
    c = src.at(at++, 1)[0]!;
    val = val * 128 + (c & 127);
  }
  return { strip: val, at };
}

/**
 * Read the extensions from `pos` to `end` (where the trailing hash starts) as
 * git walks them; the first refused resolve-undo entry, the shared index a
 * `link` names, and the `IEOT` blocks (offset, count).
 */
function readExtensions(
  src: Source,
  pos: number,
  end: number,
  hash: number,
): { bad?: string; shared?: string; blocks: [number, number][] } {
  let bad: string | undefined;
  let shared: string | undefined;
  const blocks: [number, number][] = [];
  while (pos + 8 <= end) {
    const sig = src.at(pos, 4).slice();
    const size = src.u32(pos + 4);
    const data = pos + 8;
    if (sameBytes(sig, EXT.link)) {
      if (size < hash) throw new Malformed("its link extension is truncated");
      const oid = src.at(data, hash);
      if (oid.some((b) => b !== 0)) {
        shared = hexOf(oid);
      }
    } else if (sameBytes(sig, EXT.reuc)) {
      bad ??= readResolveUndo(src, data, data + size, hash);
    } else if (sameBytes(sig, EXT.ieot)) {
      if (size < 4 || src.u32(data) !== 1 || (size - 4) % 8 !== 0 || size > 4 + 8 * MAX_BLOCKS) {
        throw new Malformed("its IEOT extension is malformed");
      }
      for (let p = data + 4; p < data + size; p += 8) blocks.push([src.u32(p), src.u32(p + 4)]);
    } else if (
      !KNOWN_EXTENSIONS.some((k) => sameBytes(sig, k)) && !(sig[0]! >= 0x41 && sig[0]! <= 0x5a)
    ) {
      // git ignores an unknown optional extension (upper case) and refuses any other.
      throw new Malformed("it has an extension git does not know");
    }
    pos = data + size;
  }
  return { ...(bad !== undefined ? { bad } : {}), ...(shared ? { shared } : {}), blocks };
}

/** The first refused path of a `REUC` extension's data at `pos`..`end`. */
function readResolveUndo(src: Source, pos: number, end: number, hash: number): string | undefined {
  if (end > src.size) throw new Malformed("its REUC extension is truncated");
  let bad: string | undefined;
  while (pos < end) {
    const nul = src.nul(pos, Math.min(MAX_NAME_BYTES, end - pos));
    if (nul < 0 || nul >= end) throw new Malformed("its REUC extension is malformed");
    const name = src.at(pos, nul - pos).slice();
    pos = nul + 1;
    let link = false;
    const modes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const m = src.nul(pos, Math.min(16, end - pos));
      if (m < 0 || m >= end) throw new Malformed("its REUC extension is malformed");
      const text = new TextDecoder().decode(src.at(pos, m - pos));
      if (!/^[0-7]+$/.test(text)) throw new Malformed("its REUC extension is malformed");
      modes.push(parseInt(text, 8));
      pos = m + 1;
    }
    for (const mode of modes) {
      if ((mode & S_IFMT) === S_IFLNK) link = true;
      if (mode !== 0) pos += hash;
    }
    bad ??= pathProblem(name, link ? S_IFLNK : 0o100644);
  }
  return bad;
}

/**
 * Read the index `src` as git does with hashes of `hash` bytes: its entries
 * in order, its extensions, and (as a git with threads would) the extensions
 * from the offset an `EOIE` names and the entry blocks an `IEOT` there names.
 */
function readIndex(src: Source, hash: number): Reading {
  if (src.size < 12 + hash) throw new Malformed("it is truncated");
  if (!sameBytes(src.at(0, 4), SIGNATURE)) throw new Malformed("it has no index signature");
  const version = src.u32(4);
  if (version < 2 || version > 4) throw new Malformed(`it has the unknown version ${version}`);
  const count = src.u32(8);
  const entries = readEntries(src, 12, count, version, hash);
  const end = src.size - hash;
  const ext = readExtensions(src, entries.end, end, hash);
  let bad = entries.bad ?? ext.bad;
  let shared = ext.shared;
  // A threaded git takes the extensions' offset from `EOIE`, the last one, and reads the entry
  // blocks an `IEOT` there names: both are read too, whatever the walk above found.
  const eoieAt = end - (8 + 4 + hash);
  if (eoieAt >= 12 && sameBytes(src.at(eoieAt, 4), EXT.eoie) && src.u32(eoieAt + 4) === 4 + hash) {
    const offset = src.u32(eoieAt + 8);
    const walks = [ext.blocks];
    if (offset !== entries.end && offset >= 12 && offset < end) {
      const other = readExtensions(src, offset, end, hash);
      bad ??= other.bad;
      if (other.shared !== undefined && shared !== undefined && other.shared !== shared) {
        throw new Malformed("its extensions name two shared indexes");
      }
      shared ??= other.shared;
      walks.push(other.blocks);
    }
    for (const blocks of walks) {
      // git reads as many entries through the blocks as the header counts: no more are read.
      if (blocks.reduce((sum, [, n]) => sum + n, 0) > count) {
        throw new Malformed("its IEOT extension names more entries than it has");
      }
      for (const [at, n] of blocks) {
        const block = readEntries(src, at, n, version, hash);
        bad ??= block.bad;
        if (block.unnamed) entries.unnamed = true;
      }
    }
  }
  if (entries.unnamed && shared === undefined) bad ??= "an entry has an empty name";
  return { ...(bad !== undefined ? { bad } : {}), ...(shared ? { shared } : {}) };
}

/** The ignorable code points HFS+ drops from a name, as UTF-8 (git's `next_hfs_char`). */
function hfsIgnorable(b: Uint8Array, i: number): number {
  if (b[i] === 0xe2 && b[i + 1] === 0x80) {
    const c = b[i + 2]!;
    if ((c >= 0x8c && c <= 0x8f) || (c >= 0xaa && c <= 0xae)) return 3;
  }
  if (b[i] === 0xe2 && b[i + 1] === 0x81 && b[i + 2]! >= 0xaa && b[i + 2]! <= 0xaf) return 3;
  if (b[i] === 0xef && b[i + 1] === 0xbb && b[i + 2] === 0xbf) return 3;
  return 0;
}

/** `part` with HFS+'s ignorable code points dropped, ASCII lower-cased, as text. */
function hfsFolded(part: Uint8Array): string {
  let out = "";
  for (let i = 0; i < part.length;) {
    const skip = hfsIgnorable(part, i);
    if (skip > 0) {
      i += skip;
      continue;
    }
    const c = part[i++]!;
    // Only ASCII can spell `.git`: anything else stands for itself.
    out += c < 0x80 ? String.fromCharCode(c).toLowerCase() : "\u0080";
  }
  return out;
}

/** `part` (ASCII lower-cased, other bytes as U+0080) as text. */
function asciiFolded(part: Uint8Array): string {
  let out = "";
  for (const c of part) out += c < 0x80 ? String.fromCharCode(c).toLowerCase() : "\u0080";
  return out;
}

/** Whether the rest of an NTFS name is only spaces and periods (an alternate stream after `:`). */
function ntfsTail(rest: string): boolean {
  return /^[. ]*(:.*)?$/s.test(rest);
}

/** An NTFS fall-back short name (8.3) for a name whose short-name prefix is `prefix`. */
function ntfsHashedShortName(name: string, prefix: string): boolean {
  // Up to six characters of `prefix`, `~`, a digit 1-9, digits up to eight characters, then spaces
  // and periods (git's is_ntfs_dot_generic).
  let i = 0;
  while (i < 6 && i < name.length && name[i] !== "~") {
    if (name[i] !== prefix[i]) return false;
    i++;
  }
  if (name[i] !== "~" || !/[1-9]/.test(name[i + 1] ?? "")) return false;
  i += 2;
  while (i < 8) {
    if (!/[0-9]/.test(name[i] ?? "")) return false;
    i++;
  }
  return ntfsTail(name.slice(8));
}

/** Whether git's `verify_path` refuses the path component `part` (lower-cased `low`). */
function refusedPart(part: Uint8Array, link: boolean): string | undefined {
  const low = asciiFolded(part);
  if (low === "" || low === "." || low === "..") return `a component ${JSON.stringify(low)}`;
  if (low === ".git") return "a component .git";
  const ntfs = (long: string, short: string) =>
    (low.startsWith(long) && ntfsTail(low.slice(long.length))) ||
    (low.startsWith(short) && ntfsTail(low.slice(short.length)));
  if (ntfs(".git", "git~1")) return "a component NTFS takes for .git";
  if (hfsFolded(part) === ".git") return "a component HFS+ takes for .git";
  if (!link) return undefined;
  // A symbolic link `.gitmodules` (git: the link's target would be read as the submodule list).
  if (
    low === ".gitmodules" || hfsFolded(part) === ".gitmodules" ||
    (low.startsWith(".gitmodules") && ntfsTail(low.slice(11))) ||
    (/^gitmod~[1-4]/.test(low) && ntfsTail(low.slice(8))) || ntfsHashedShortName(low, "gi7eba")
  ) return "a symbolic link .gitmodules";
  return undefined;
}

/**
 * Why git's `verify_path` refuses the index entry `name` of `mode`, or
 * undefined: an empty, `.` or `..` component, one git takes for `.git` (in
 * any case; also as NTFS or HFS+ would), a NUL byte (git would cut the name
 * there), or a symbolic link `.gitmodules`. Components are split at `/` and
 * at `\` (NTFS). A sparse index's directory entry may end in `/`.
 */
export function pathProblem(name: Uint8Array, mode: number): string | undefined {
  if (name.includes(0)) return `the entry ${shown(name)} holds a NUL byte`;
  const link = (mode & S_IFMT) === S_IFLNK;
  const dir = (mode & S_IFMT) === S_IFDIR;
  const end = dir && name.length > 0 && name[name.length - 1] === 0x2f
    ? name.length - 1
    : name.length;
  let from = 0;
  for (let i = 0; i <= end; i++) {
    if (i < end && name[i] !== 0x2f && name[i] !== 0x5c) continue;
    const why = refusedPart(name.subarray(from, i), link);
    if (why !== undefined) return `the entry ${shown(name)} has ${why}`;
    from = i + 1;
  }
  return undefined;
}

/** A test seam: run between the look at an index and its opening (a concurrent swap). */
export const indexSeam: { afterLook: (path: string) => void } = { afterLook: () => {} };

/**
 * Open `path` for reading if it is a regular file; undefined when missing;
 * throws otherwise. Opened without following a last link and without
 * blocking: a command running beside the check may swap the name for a
 * FIFO, whose opening would stop penguin until a writer came, or for a link
 * to a device, whose opening alone may do something (`/dev/watchdog`).
 */
function openIndex(
  path: string,
): { file: { close(): void; fd: number }; size: number } | undefined {
  const info = lstatOrNone(path);
  if (info === undefined) return undefined;
  if (info.isSymlink) throw new Malformed("it is a symbolic link");
  if (!info.isFile) throw new Malformed("it is not a regular file");
  indexSeam.afterLook(path);
  let fd: number;
  try {
    fd = openNoFollowNow(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new Malformed(`it cannot be read (${err instanceof Error ? err.message : err})`);
  }
  const file = { fd, close: () => closeSync(fd) };
  // What was opened, not what was looked at: the name may have been replaced in between.
  let opened;
  try {
    opened = fstatSync(fd);
  } catch (err) {
    file.close();
    throw new Malformed(`it cannot be read (${err instanceof Error ? err.message : err})`);
  }
  if (!opened.isFile() || opened.size > MAX_INDEX_BYTES) {
    file.close();
    throw new Malformed(
      opened.isFile() ? `it is larger than ${MAX_INDEX_BYTES} bytes` : "it is not a regular file",
    );
  }
  return { file, size: opened.size };
}

/** One reading of the index file `path` with hashes of `hash` bytes; undefined: missing. */
function readingOf(path: string, hash: number): Reading | undefined {
  const opened = openIndex(path);
  if (opened === undefined) return undefined;
  try {
    return readIndex(new Source(opened.file.fd, opened.size), hash);
  } finally {
    opened.file.close();
  }
}

/**
 * The hash length the repository of `gitDir` uses (SHA-256 when its configuration, or that of
 * the common directory its `commondir` names, sets `objectformat = sha256`), and whether that
 * reading may differ from git's: a configuration that mentions `objectformat` at all, or cannot
 * be read (git takes it only with `repositoryformatversion = 1`).
 */
function hashOf(gitDir: string): { hash: number; unsure: boolean } {
  const configs = [join(gitDir, "config"), join(gitDir, "config.worktree")];
  try {
    if (lstatOrNone(join(gitDir, "commondir")) !== undefined) {
      // Read without blocking: a FIFO named `commondir` must not stop penguin.
      const read = readRegularTextNow(join(gitDir, "commondir"), MAX_CONFIG_BYTES, false);
      if (read === undefined) return { hash: 20, unsure: true };
      const common = read.replace(/[\r\n]+$/, "");
      configs.push(join(isAbsolute(common) ? common : join(gitDir, common), "config"));
    }
    let text = "";
    for (const c of configs) {
      if (lstatOrNone(c) === undefined) continue;
      const read = readRegularTextNow(c, MAX_CONFIG_BYTES, false);
      if (read === undefined) return { hash: 20, unsure: true };
      text += read;
    }
    if (!/objectformat/i.test(text)) return { hash: 20, unsure: false };
    return { hash: /objectformat\s*=\s*"?sha256/i.test(text) ? 32 : 20, unsure: true };
  } catch {
    return { hash: 20, unsure: true };
  }
}

/** A configuration larger than this is not read for its hash: both readings are made. */
const MAX_CONFIG_BYTES = 1 << 20;

/** The problem of the split index `r` names (in `dir`), or undefined; throws Malformed. */
function sharedProblem(r: Reading, dir: string, hash: number): string | undefined {
  if (r.shared === undefined) return undefined;
  // The shared index a split index names holds the rest of its entries.
  const sharedPath = join(dir, `sharedindex.${r.shared}`);
  const s = readingOf(sharedPath, hash);
  if (s === undefined) throw new Malformed(`the shared index ${sharedPath} is missing`);
  if (s.shared !== undefined) throw new Malformed(`${sharedPath} names another one`);
  return s.bad === undefined ? undefined : `${s.bad} (in ${sharedPath})`;
}

/**
 * The problem of the index at `path` (its shared index in `dir`), or undefined; throws
 * Malformed. Read with the hash length of the repository's configuration; when that may not be
 * git's, also with the other one, which counts only where it reads the whole file.
 */
function fileProblem(path: string, dir: string): string | undefined {
  const { hash, unsure } = hashOf(dir);
  const r = readingOf(path, hash);
  if (r === undefined) return undefined;
  const bad = r.bad ?? sharedProblem(r, dir, hash);
  if (bad !== undefined || !unsure) return bad;
  const other = hash === 20 ? 32 : 20;
  try {
    const o = readingOf(path, other);
    return o === undefined ? undefined : o.bad ?? sharedProblem(o, dir, other);
  } catch (err) {
    if (!(err instanceof Malformed)) throw err;
    return undefined;
  }
}

/**
 * Why the index of the git directory `gitDir` would make git check out a
 * path its `verify_path` refuses (into `.git`, or making a repository), or
 * why penguin cannot tell (it cannot be read as an index, is larger than
 * {@linkcode MAX_INDEX_BYTES}, a symbolic link, names a missing shared
 * index); undefined when it has none or is missing.
 */
export function indexProblem(gitDir: string): string | undefined {
  const path = join(gitDir, "index");
  try {
    const bad = fileProblem(path, gitDir);
    return bad === undefined ? undefined : `its index ${path} holds a path git refuses: ${bad}`;
  } catch (err) {
    if (!(err instanceof Malformed)) {
      return `its index ${path} cannot be checked (${err instanceof Error ? err.message : err})`;
    }
    return `its index ${path} cannot be checked: ${err.message}`;
  }
}

/** The first {@linkcode indexProblem} of the git directories `gitDirs`, or undefined. */
export function indexesProblem(gitDirs: readonly string[]): string | undefined {
  for (const dir of gitDirs) {
    const why = indexProblem(dir);
    if (why !== undefined) return why;
  }
  return undefined;
}
