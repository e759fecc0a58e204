/**
 * The tail of a truncation archive that outgrew its limit, kept in the
 * archive file itself rather than in memory: a ring of the last bytes of the
 * output in a region of the file past the limit. Its memory is one copy
 * block, whatever the output size and however many calls run at once (16
 * commands printing 50 MB each held 4 MiB of tail apiece, attack round 24).
 * The ring is the same few MiB of the file rewritten, so it stays in the
 * page cache. When the call ends, {@linkcode FileTail.moveTo} copies the
 * ring, in order and starting on a code point, to its place after the head
 * and the gap marker; the caller then cuts the file there.
 *
 * @module
 */

/** A file and its position (-1: unknown), so that writes in a row need no seek between them. */
export interface FileAt {
  file: Deno.FsFile;
  at: number;
}

/** Move `f` to `offset` unless it is there. */
function seekTo(f: FileAt, offset: number): void {
  if (f.at === offset) return;
  f.at = -1;
  f.file.seekSync(offset, Deno.SeekMode.Start);
  f.at = offset;
}

/** Write all of `data` at `offset` of `f`. */
export function writeAt(f: FileAt, offset: number, data: Uint8Array): void {
  seekTo(f, offset);
  f.at = -1;
  let off = 0;
  while (off < data.length) off += f.file.writeSync(data.subarray(off));
  f.at = offset + data.length;
}

/** Read up to `into.length` bytes at `offset` of `f` (fewer at its end); the count. */
export function readInto(f: FileAt, offset: number, into: Uint8Array): number {
  seekTo(f, offset);
  f.at = -1;
  let got = 0;
  while (got < into.length) {
    const n = f.file.readSync(into.subarray(got));
    if (n === null) break;
    got += n;
  }
  f.at = offset + got;
  return got;
}

/** A ring of the last `cap` bytes pushed, stored in a file region. */
export interface FileTail {
  /** Push the next bytes of the output (the oldest beyond `cap` are overwritten). */
  push(bytes: Uint8Array): void;
  /** Copy the bytes of the file region `[from, to)` in, as if pushed. */
  seed(from: number, to: number): void;
  /**
   * Copy the held bytes in order to `offset` of the file, dropping a cut
   * code point at their start; the offset just past them.
   */
  moveTo(offset: number): number;
}

/**
 * A tail ring of `cap` bytes in `file` from offset `start` on; `block` is
 * its copy buffer. The region must not overlap what the caller writes
 * before {@linkcode FileTail.moveTo}, nor where that copies to.
 */
export function fileTail(file: FileAt, start: number, cap: number, block: Uint8Array): FileTail {
  let pos = 0; // where the next byte goes, relative to `start`
  let len = 0; // bytes held

  const push = (bytes: Uint8Array) => {
    if (bytes.length >= cap) {
      writeAt(file, start, bytes.subarray(bytes.length - cap));
      pos = 0;
      len = cap;
      return;
    }
    const first = Math.min(bytes.length, cap - pos);
    writeAt(file, start + pos, bytes.subarray(0, first));
    if (first < bytes.length) writeAt(file, start, bytes.subarray(first));
    pos = (pos + bytes.length) % cap;
    len = Math.min(cap, len + bytes.length);
  };

  /** Copy the file's `[from, to)` to `offset` through `block`; the end of what was written. */
  const copy = (from: number, to: number, offset: number, skipCut: boolean) => {
    let at = offset;
    let skip = skipCut;
    for (let src = from; src < to;) {
      const n = readInto(file, src, block.subarray(0, Math.min(block.length, to - src)));
      if (n === 0) break;
      src += n;
      let piece = block.subarray(0, n);
      if (skip) {
        let k = 0;
        while (k < piece.length && (piece[k]! & 0xc0) === 0x80) k++;
        piece = piece.subarray(k);
        skip = k === n; // a block of nothing but continuation bytes: keep skipping
      }
      writeAt(file, at, piece);
      at += piece.length;
    }
    return at;
  };

  return {
    push,
    seed(from, to) {
      for (let src = from; src < to;) {
        const n = readInto(file, src, block.subarray(0, Math.min(block.length, to - src)));
        if (n === 0) break;
        src += n;
        push(block.subarray(0, n));
      }
    },
    moveTo(offset) {
      if (len < cap) return copy(start, start + len, offset, true);
      const mid = copy(start + pos, start + cap, offset, true);
      return copy(start, start + pos, mid, mid === offset);
    },
  };
}
