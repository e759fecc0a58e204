/**
 * Splitting trace bytes into lines: the one place that knows how a trace
 * file is cut into lines. A line ends at LF; a CR right before the LF is
 * dropped; a last line without its LF is delivered as not `terminated`.
 * Blank lines are delivered too (they count for line numbers).
 *
 * Three ways in:
 * - {@linkcode readLines}: a whole file, streamed in batches. The fast path
 *   decodes many lines at once when they are valid UTF-8 (`decode: true`);
 *   every other line comes as its bytes (the per-line fallback), and a line
 *   longer than `gatherLimit` is never gathered: it comes as a byte range to
 *   read on demand.
 * - {@linkcode readAt}, {@linkcode textLines}, {@linkcode textLinesFromEnd}:
 *   windows at the head or the tail of a file, for summaries;
 *   {@linkcode forEachLine} cuts such a window without copying its lines.
 * - {@linkcode followLines}: a file another process is appending to; only
 *   complete lines are returned, the partial last one waits.
 * - {@linkcode linesWith}: only the lines holding a marker, found by
 *   searching the read buffers for it (rare records in large files).
 *
 * @module
 */
import { openRegularFile, tryOpen } from "../state/_fs.ts";

/** A complete line of valid UTF-8, decoded together with its neighbours (the fast path). */
export interface TextLine {
  /** Discriminant. */
  kind: "text";
  /** 1-based line number. */
  no: number;
  /** The line, without its line end. */
  text: string;
  /** Always true: only terminated lines take the fast path. */
  terminated: true;
}

/** A line handed over as bytes (the per-line fallback). */
export interface BytesLine {
  /** Discriminant. */
  kind: "bytes";
  /** 1-based line number. */
  no: number;
  /** The line's bytes without its line end; a view valid until the next batch is asked for, unless `own`. */
  bytes: Uint8Array;
  /** True when `bytes` is a buffer of its own (gathered across reads), which the caller may keep or detach. */
  own: boolean;
  /** False for a last line without its newline. */
  terminated: boolean;
}

/** A line longer than the gather limit: only its place in the file is known. */
export interface LongLine {
  /** Discriminant. */
  kind: "long";
  /** 1-based line number. */
  no: number;
  /** Its length in bytes, without its line end. */
  size: number;
  /** False for a last line without its newline. */
  terminated: boolean;
  /** Read bytes [from, to) of the line (default: all of it) into a buffer of their own. Call before asking for the next batch. */
  read(from?: number, to?: number): Promise<Uint8Array>;
}

/** One line of a file. */
export type Line = TextLine | BytesLine | LongLine;

/** Options of {@linkcode readLines}. */
export interface ReadLinesOptions {
  /** Decode runs of valid UTF-8 lines to text (the fast path); false hands every line over as bytes (default true). */
  decode?: boolean;
  /** Lines longer than this (bytes) come as {@linkcode LongLine} (default: max(chunkSize, 1 MiB)). */
  gatherLimit?: number;
  /** Read buffer size in bytes (default 1 MiB). */
  chunkSize?: number;
}

const LF = 0x0a;
const CR = 0x0d;
/** The fast path decodes at most this many bytes at once, so the strings stay small and short-lived. */
const FAST_WINDOW = 32 * 1024;
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decode one line; null when it is not valid UTF-8. The lenient decoder is
 * much faster; only a line that decodes to U+FFFD is checked strictly.
 */
export function decodeLine(bytes: Uint8Array): string | null {
  const text = lenient.decode(bytes);
  if (!text.includes("\uFFFD")) return text;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Open a trace file for reading: only a regular file (`openRegularFile`).
 * Throws a PenguinError of kind "not_found" when it does not exist, of kind
 * "data" when it is not a regular file or cannot be opened.
 */
export function openTrace(path: string): Promise<Deno.FsFile> {
  return openRegularFile(path, { label: "Cannot read trace" });
}

/** Read up to `length` bytes at `offset` (fewer at the end of the file). Moves the file position. */
export async function readAt(
  file: Deno.FsFile,
  offset: number,
  length: number,
): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  await file.seek(offset, Deno.SeekMode.Start);
  let off = 0;
  while (off < length) {
    const n = await file.read(out.subarray(off));
    if (n === null) break;
    off += n;
  }
  return off === length ? out : out.subarray(0, off);
}

/**
 * The line made of `pieces` (copies of their own, `total` bytes) and `last`, decoded. The pieces
 * and the joined line are freed at once, not left for a full collection: a line of 64 MiB was
 * three times its size in bytes (attack round 25 bounded C5).
 */
function decodeJoined(pieces: Uint8Array[], total: number, last: Uint8Array): string {
  if (pieces.length === 0) return lenient.decode(dropCr(last));
  const line = concat([...pieces, last], total + last.length);
  const text = lenient.decode(dropCr(line));
  for (const b of [...pieces, line]) (b.buffer as ArrayBuffer).transfer(0);
  return text;
}

function concat(pieces: Uint8Array[], total: number): Uint8Array {
  if (pieces.length === 1) return pieces[0]!;
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of pieces) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

function dropCr(bytes: Uint8Array): Uint8Array {
  return bytes.length > 0 && bytes[bytes.length - 1] === CR
    ? bytes.subarray(0, bytes.length - 1)
    : bytes;
}

/**
 * The lines of `file`, from its current position to its end, in batches (see
 * the module doc). Views in a batch stay valid only until the next batch is
 * asked for. Never modifies the file; memory stays within a read buffer, one
 * fast-path window and lines up to `gatherLimit`.
 */
export async function* readLines(
  file: Deno.FsFile,
  options: ReadLinesOptions = {},
): AsyncGenerator<Line[], void, undefined> {
  // Long because: the hot loop that cuts every trace into lines; its buffer, offsets and carried
  // pieces stay locals of one loop (the measured fast path).
  const decode = options.decode ?? true;
  const chunkSize = options.chunkSize ?? 1 << 20;
  const gatherLimit = options.gatherLimit ?? Math.max(chunkSize, 1 << 20);
  const buf = new Uint8Array(chunkSize);
  let pieces: Uint8Array[] = [];
  let piecesLen = 0;
  let lineNo = 0;
  let pos = await file.seek(0, Deno.SeekMode.Current); // the offset just after the current chunk
  let longStart = -1; // offset where a long line began, while seeking its end
  let prevLast = -1; // the last byte of the previous chunk
  const long = (start: number, end: number, terminated: boolean): LongLine => ({
    kind: "long",
    no: ++lineNo,
    size: end - start,
    terminated,
    read: async (from = 0, to = end - start) => {
      const bytes = await readAt(file, start + from, Math.max(0, to - from));
      await file.seek(pos, Deno.SeekMode.Start);
      return bytes;
    },
  });
  while (true) {
    const n = await file.read(buf);
    if (n === null) break;
    const chunkStart = pos;
    pos += n;
    const view = n === buf.length ? buf : buf.subarray(0, n);
    let batch: Line[] = [];
    let start = 0;
    while (start < n) {
      const nl = view.indexOf(LF, start);
      if (nl === -1) {
        if (longStart < 0) {
          if (piecesLen + n - start > gatherLimit) {
            longStart = chunkStart + start - piecesLen;
            pieces = [];
            piecesLen = 0;
          } else {
            pieces.push(view.slice(start));
            piecesLen += n - start;
          }
        }
        break;
      }
      if (decode && longStart < 0 && piecesLen === 0) {
        // Fast path: decode a run of complete lines in one call (much cheaper
        // than one decode per line), then split the text.
        let last = view.lastIndexOf(LF, Math.min(n, start + FAST_WINDOW) - 1);
        if (last < nl) last = nl;
        const text = lenient.decode(view.subarray(start, last));
        if (!text.includes("\uFFFD")) {
          let from = 0;
          while (from <= text.length) {
            let to = text.indexOf("\n", from);
            if (to === -1) to = text.length;
            const end = to > from && text.charCodeAt(to - 1) === CR ? to - 1 : to;
            batch.push({
              kind: "text",
              no: ++lineNo,
              text: text.slice(from, end),
              terminated: true,
            });
            from = to + 1;
          }
          start = last + 1;
          // Hand each window over at once: its strings die young, cheap to collect.
          yield batch;
          batch = [];
          continue;
        }
        // Some line of the run is not valid UTF-8: this one goes byte by byte.
      }
      if (longStart >= 0) {
        const crBefore = nl > 0 ? view[nl - 1] === CR : prevLast === CR;
        batch.push(long(longStart, chunkStart + nl - (crBefore ? 1 : 0), true));
        longStart = -1;
      } else if (piecesLen === 0) {
        batch.push({
          kind: "bytes",
          no: ++lineNo,
          bytes: dropCr(view.subarray(start, nl)),
          own: false,
          terminated: true,
        });
      } else {
        pieces.push(view.subarray(start, nl));
        const joined = concat(pieces, piecesLen + nl - start);
        pieces = [];
        piecesLen = 0;
        batch.push({
          kind: "bytes",
          no: ++lineNo,
          bytes: dropCr(joined),
          own: true,
          terminated: true,
        });
      }
      start = nl + 1;
    }
    prevLast = view[n - 1]!;
    if (batch.length > 0) yield batch;
  }
  if (longStart >= 0) {
    yield [long(longStart, pos, false)];
  } else if (piecesLen > 0) {
    const joined = concat(pieces, piecesLen);
    pieces = [];
    yield [{ kind: "bytes", no: ++lineNo, bytes: joined, own: true, terminated: false }];
  }
}

/**
 * Call `visit(start, end)` for each line of `text` from index `from` (the
 * start of a line), in order: `text.slice(start, end)` is the line without
 * its line end. Nothing is copied (for scans that look at a few characters
 * of each line; a callback rather than a generator keeps the scan as fast as
 * a hand-written loop). When not `complete`, a last line without its newline
 * is left out: it may be cut short.
 */
export function forEachLine(
  text: string,
  complete: boolean,
  from: number,
  visit: (start: number, end: number) => void,
): void {
  let start = from;
  while (start < text.length) {
    let nl = text.indexOf("\n", start);
    if (nl === -1) {
      if (!complete) return;
      nl = text.length;
    }
    visit(start, nl > start && text.charCodeAt(nl - 1) === CR ? nl - 1 : nl);
    start = nl + 1;
  }
}

/**
 * The lines of `text` (the start of a file, or all of it when `complete`),
 * in order, without their line ends. When not `complete`, a last line
 * without its newline is left out: it may be cut short.
 */
export function* textLines(text: string, complete: boolean): Generator<string, void, undefined> {
  let start = 0;
  while (start < text.length) {
    let nl = text.indexOf("\n", start);
    if (nl === -1) {
      if (!complete) return;
      nl = text.length;
    }
    const end = nl > start && text.charCodeAt(nl - 1) === CR ? nl - 1 : nl;
    yield text.slice(start, end);
    start = nl + 1;
  }
}

/**
 * The lines of `text` (the end of a file, or all of it when `fromStart`),
 * last first, without their line ends. When not `fromStart`, the first line
 * is left out: it may start before `text` does.
 */
export function* textLinesFromEnd(
  text: string,
  fromStart: boolean,
): Generator<string, void, undefined> {
  let end = text.length;
  while (end > 0) {
    const nl = text.lastIndexOf("\n", end - 1);
    if (nl === -1 && !fromStart) return;
    const stop = end > nl + 1 && text.charCodeAt(end - 1) === CR ? end - 1 : end;
    yield text.slice(nl + 1, stop);
    end = nl === -1 ? 0 : nl;
  }
}

/**
 * The first line of the file at `path`, decoded and without its line end;
 * null when the file cannot be opened, or its first `cap` bytes hold no
 * complete line and are not the whole file.
 */
export async function readFirstLine(path: string, cap = 16 << 20): Promise<string | null> {
  const file = await tryOpen(path, { read: true });
  if (file === null) return null;
  try {
    const pieces: Uint8Array[] = [];
    let total = 0;
    const buf = new Uint8Array(64 * 1024);
    while (total < cap) {
      const n = await file.read(buf);
      if (n === null) break;
      const view = buf.subarray(0, n);
      const nl = view.indexOf(LF);
      if (nl >= 0) {
        pieces.push(view.slice(0, nl));
        total += nl;
        return lenient.decode(dropCr(concat(pieces, total)));
      }
      pieces.push(view.slice());
      total += n;
    }
    return total >= cap ? null : lenient.decode(concat(pieces, total));
  } finally {
    file.close();
  }
}

function indexOfBytes(hay: Uint8Array, needle: Uint8Array, from: number, to: number): number {
  const first = needle[0]!;
  for (
    let i = hay.indexOf(first, from);
    i !== -1 && i + needle.length <= to;
    i = hay.indexOf(first, i + 1)
  ) {
    let ok = true;
    for (let j = 1; j < needle.length; j++) {
      if (hay[i + j] !== needle[j]) {
        ok = false;
        break;
      }
    }
    if (ok) return i;
  }
  return -1;
}

/**
 * The lines of `file` (from its current position) that hold the bytes of
 * `marker`, without their LF, found by searching each read buffer for the
 * marker rather than cutting every line: for rare, short records in large
 * files. A line that runs past a read buffer and is longer than `maxLength`
 * bytes is skipped unread. Each line is a view valid until the next is asked for. Reads go
 * into `chunk`: a new buffer of that size, or a buffer the caller reuses from file to file.
 */
export async function* linesWith(
  file: Deno.FsFile,
  marker: Uint8Array,
  maxLength: number,
  chunk: number | Uint8Array = 1 << 20,
): AsyncGenerator<Uint8Array, void, undefined> {
  const buf = typeof chunk === "number" ? new Uint8Array(chunk) : chunk;
  let carry: Uint8Array | null = new Uint8Array(0); // a short unfinished line; null while skipping a long one
  while (true) {
    const n = await file.read(buf);
    if (n === null) break;
    let data: Uint8Array = buf.subarray(0, n);
    let start = 0;
    if (carry === null) {
      const nl = data.indexOf(LF);
      if (nl === -1) continue; // still inside the long line
      start = nl + 1;
    } else if (carry.length > 0) {
      data = concat([carry, data], carry.length + n);
    }
    const end = data.lastIndexOf(LF) + 1; // complete lines are data[start, end)
    for (
      let i = indexOfBytes(data, marker, start, end);
      i !== -1;
      i = indexOfBytes(data, marker, i + 1, end)
    ) {
      const from = Math.max(start, data.lastIndexOf(LF, i) + 1);
      yield data.subarray(from, data.indexOf(LF, i));
    }
    const rest = data.subarray(Math.max(start, end));
    carry = rest.length <= maxLength ? rest.slice() : null;
  }
  if (carry !== null && carry.length > 0 && indexOfBytes(carry, marker, 0, carry.length) !== -1) {
    yield carry;
  }
}

/** The longest line a trace record may be (a longer one is not read, by any reader). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** One complete line read by {@linkcode followLines}. */
export interface FollowedLine {
  /** 1-based line number since the start of the file (or since following began at its end). */
  no: number;
  /** The line, decoded (invalid UTF-8 replaced), without its line end; empty when not read. */
  text: string;
  /** The line's length when it is over {@linkcode MAX_LINE_BYTES}: not read, `text` is empty. */
  skipped?: number;
}

/** What one `read()` of a follower gathers at most before it returns (the rest on the next). */
const FOLLOW_BATCH_BYTES = 8 * 1024 * 1024;

/** A file being followed (see {@linkcode followLines}). */
export interface LineFollower {
  /** Read what was appended since the last call: the complete new lines, and how many bytes came in. */
  read(): Promise<{ lines: FollowedLine[]; bytes: number }>;
  /** Bytes of a last line still waiting for its newline. */
  pending(): number;
  /** True when the file is now shorter than what was read (truncated or replaced). */
  shrank(): Promise<boolean>;
  /** Start over from the beginning of the file (after it shrank). */
  restart(): Promise<void>;
  /** Close the file. */
  close(): void;
}

/**
 * Follow the file at `path` as another process appends to it: each
 * `read()` returns the lines completed since the last one; a partial last
 * line is held until its newline arrives. With `fromEnd`, what the file
 * already holds is skipped, and so is the rest of a line caught half-written.
 * One file handle, one read buffer and the pending partial line are all it holds:
 * a line past {@linkcode MAX_LINE_BYTES} is counted, not kept, and a read
 * returns once it has gathered about 8 MiB of lines (attack round 24 bounded
 * R13: a 1 GiB line without a newline took 1.1 GB, a 240 MB backlog 474 MB).
 */
export async function followLines(
  path: string,
  options: { fromEnd?: boolean | undefined } = {},
): Promise<LineFollower> {
  const file = await openTrace(path);
  const buf = new Uint8Array(1 << 20);
  let offset = 0;
  let skipPartial = false;
  if (options.fromEnd) {
    offset = (await file.stat()).size;
    if (offset > 0) skipPartial = (await readAt(file, offset - 1, 1))[0] !== LF;
    await file.seek(offset, Deno.SeekMode.Start);
  }
  let partial: Uint8Array[] = [];
  let partialLen = 0;
  // The length of a line past MAX_LINE_BYTES read so far (its bytes not kept), or 0.
  let overLen = 0;
  let lineNo = 0;
  return {
    async read() {
      const lines: FollowedLine[] = [];
      let bytes = 0;
      let gathered = 0;
      while (gathered < FOLLOW_BATCH_BYTES) {
        const n = await file.read(buf);
        if (n === null || n === 0) break;
        bytes += n;
        offset += n;
        const view = buf.subarray(0, n);
        let start = 0;
        while (start < n) {
          const nl = view.indexOf(LF, start);
          const end = nl < 0 ? n : nl;
          if (overLen > 0 || partialLen + end - start > MAX_LINE_BYTES) {
            overLen = (overLen || partialLen) + end - start;
            for (const b of partial) (b.buffer as ArrayBuffer).transfer(0);
            partial = [];
            partialLen = 0;
            if (nl < 0) break;
            lineNo++;
            if (!skipPartial) lines.push({ no: lineNo, text: "", skipped: overLen });
            skipPartial = false;
            overLen = 0;
            start = nl + 1;
            continue;
          }
          if (nl < 0) {
            partial.push(view.slice(start));
            partialLen += n - start;
            break;
          }
          const text = decodeJoined(partial, partialLen, view.subarray(start, nl));
          lineNo++;
          gathered += partialLen + nl - start;
          partial = [];
          partialLen = 0;
          if (!skipPartial) lines.push({ no: lineNo, text });
          skipPartial = false;
          start = nl + 1;
        }
      }
      return { lines, bytes };
    },
    pending: () => overLen || partialLen,
    shrank: async () => (await file.stat()).size < offset,
    async restart() {
      await file.seek(0, Deno.SeekMode.Start);
      offset = 0;
      partial = [];
      partialLen = 0;
      overLen = 0;
      lineNo = 0;
      skipPartial = false;
    },
    close: () => file.close(),
  };
}
