/**
 * The append-only trace writer of one session.
 *
 * Each recordable message becomes one line, `JSON.stringify(msg) + "\n"`,
 * written with a single `write(2)` on a file opened with `O_APPEND` (a
 * short-write loop is only a safety net). Appends, rotations and close are
 * serialized through one promise chain in submission order; a failed append
 * rejects only its caller. A record is never split across files. A torn
 * tail (a record whose write failed part-way, here or in an earlier
 * process) is cut off before the next record is written, and reported.
 *
 * @module
 */
import { join } from "node:path";
import { encodeJoined } from "../protocol/bytes.ts";
import { defaultWarn, errorMessage, PenguinError } from "../protocol/errors.ts";
import { isRecordable } from "../protocol/guards.ts";
import { pairSafeSlices } from "../protocol/pair_safe_slices.ts";
import type { OmniMessage } from "../protocol/types.ts";
import { FILE_MODE, lastByte } from "./_fs.ts";
import { mkdirPrivate } from "../state/_fs.ts";
import { acquireSessionLock, releaseSessionLock, type SessionLock } from "./lock.ts";
import { cutTornTail, tornTailNotice } from "./_torn_tail.ts";
import { assertSessionId, dateDirName, traceFilePath, tracesDirOf } from "./paths.ts";
import { largeGarbage } from "../state/_gc.ts";

/**
 * When the writer calls fsync: `"commit"` after `request_end` and
 * `compaction_end` records and on rotate/close (the default), `"always"` after
 * every record, `"never"` not at all.
 */
export type FsyncPolicy = "commit" | "never" | "always";

/**
 * Sees what a trace writer wrote: each record once it is in the file, in
 * file order, then the writer's close. Called inside the writer's queue, so
 * it must be quick and must not throw (a throw is ignored); it cannot change
 * or hold up what is written.
 */
export interface TraceObserver {
  /** A record reached the file. */
  appended(msg: OmniMessage): void;
  /** The writer closed; nothing more comes. */
  closed(): void;
}

/** Options of {@linkcode openTraceWriter}. Give `tracesDir` or `agentDir`. */
export interface TraceWriterOptions {
  /** The traces directory (`<agentDir>/traces`). */
  tracesDir?: string;
  /** The agent directory; the traces go to `<agentDir>/traces`. */
  agentDir?: string;
  /** The session whose trace this is. */
  sessionId: string;
  /** Date directory (`yyyy-mm-dd`); default: today's local date. A resumed writer passes the located file's. */
  dateDir?: string;
  /** File index to start at (default 1). A resumed writer passes the located file's. */
  index?: number;
  /** When to fsync (default `"commit"`). */
  fsync?: FsyncPolicy;
  /** Take the session lock (default true). Pass false only in tests or tools that coordinate otherwise. */
  lock?: boolean;
  /**
   * The session lock, already taken with `acquireSessionLock` (a resume
   * locks before it reads the trace). The writer owns it from here on and
   * releases it on close; `lock` is then ignored.
   */
  heldLock?: SessionLock;
  /**
   * After a failed append or rotation, reject every later one with that
   * error instead of writing it (default false: a later append may succeed).
   * A live session sets it: records already queued behind a failed one must
   * not land in the trace after the gap.
   */
  stopAfterFailure?: boolean;
  /** Told of every record written and of the close (e.g. a live telemetry export). */
  observer?: TraceObserver;
  /**
   * Where the writer reports a torn tail it cut off (default: stderr). A
   * record whose write failed part-way leaves a fragment without its
   * newline; the next append (in this writer or the next one of the
   * session) truncates the file to its last complete record first.
   */
  warn?: (line: string) => void;
}

/** A per-session trace writer. */
export interface TraceWriter {
  /** The session written. */
  readonly sessionId: string;
  /** The traces directory. */
  readonly tracesDir: string;
  /** The date directory, fixed for the writer's life. */
  readonly dateDir: string;
  /** The current file index. */
  readonly index: number;
  /** Path of the current file (it may not exist until the first record). */
  readonly path: string;
  /**
   * Append `msg` when it is recordable; resolves true when it was written,
   * false when it was skipped (partials and origin-tagged messages). `msg` is
   * serialized at call time; a message that cannot be serialized rejects at once.
   */
  append(msg: OmniMessage): Promise<boolean>;
  /** Move to the next file index; nothing is written until the next record. */
  rotate(): Promise<void>;
  /** Flush (per the fsync policy), close the file and release the lock. */
  close(): Promise<void>;
}

/** Run an observer callback; what it throws is not the writer's problem. */
function tell(fn: () => void): void {
  try {
    fn();
  } catch {
    // An observer never disturbs the trace.
  }
}

function isCommitPoint(msg: OmniMessage): boolean {
  if (msg.type !== "event_msg") return false;
  const t = msg.payload.type;
  return t === "request_end" || t === "compaction_end";
}

/**
 * Where a writer of `options` writes: its traces directory and date
 * directory, after checking the session id, the first index and a held
 * lock against it.
 */
function writerPlace(options: TraceWriterOptions): { tracesDir: string; dateDir: string } {
  const dir = options.tracesDir ??
    (options.agentDir !== undefined ? tracesDirOf(options.agentDir) : undefined);
  if (dir === undefined) {
    throw new PenguinError("usage", "Cannot open a trace writer: give tracesDir or agentDir");
  }
  const tracesDir: string = dir;
  const { sessionId } = options;
  assertSessionId(sessionId);
  const dateDir = options.dateDir ?? dateDirName();
  traceFilePath(tracesDir, dateDir, sessionId, options.index ?? 1); // validates the index
  if (options.heldLock !== undefined && options.heldLock.sessionId !== sessionId) {
    throw new PenguinError(
      "usage",
      `Cannot open the trace writer of session ${sessionId} with the lock of session ${options.heldLock.sessionId}`,
    );
  }
  return { tracesDir, dateDir };
}

/**
 * Whether the file at `path` ends in a torn record (no final "\n") that
 * could not be cut off; a torn tail that could be cut is cut and reported
 * through `warn`.
 */
async function probeTornTail(path: string, warn: (line: string) => void): Promise<boolean> {
  const last = await lastByte(path);
  let torn = last !== null && last !== 0x0a;
  if (torn) {
    // A record whose write failed (a full disk, a killed writer) is cut off, so the trace
    // stays valid; should that fail, the next record still starts on a line of its own.
    try {
      const cut = await cutTornTail(path);
      torn = false;
      if (cut) tell(() => warn(tornTailNotice(cut)));
    } catch {
      // Keep `torn`: the record is written after a newline.
    }
  }
  return torn;
}

/** Flush `f` (the trace at `path`) to disk. */
async function syncTrace(f: Deno.FsFile, path: string): Promise<void> {
  try {
    await f.sync();
  } catch (err) {
    throw new PenguinError("runtime", `Cannot fsync trace "${path}": ${errorMessage(err)}`, {
      cause: err,
    });
  }
}

const encoder = new TextEncoder();

/** Records of at least this many characters are encoded and written a slice at a time. */
const SLICED_RECORD_CHARS = 1024 * 1024;
/** Characters encoded at a time into a sliced record's block (at most 3 bytes each). */
const SLICE_CHARS = 256 * 1024;

/**
 * The UTF-8 bytes of `parts` joined, in the pieces to write one after the
 * other: one array for a short record, else one block of
 * {@linkcode SLICE_CHARS} characters' bytes at a time, reused (each piece must
 * be written before the next is asked for). Every array is let go of once
 * written, not at a later collection: a record holding an image or a
 * signature is megabytes.
 */
function* recordBytes(parts: readonly string[]): Generator<Uint8Array> {
  const chars = parts.reduce((n, p) => n + p.length, 0);
  if (chars < SLICED_RECORD_CHARS) {
    // Encoded in parts: `json + "\n"` would be flattened into a copy of the record.
    const data = encodeJoined(parts);
    try {
      yield data;
    } finally {
      data.buffer.transfer(0);
    }
    return;
  }
  const block = new Uint8Array(new ArrayBuffer(3 * SLICE_CHARS));
  try {
    for (const part of parts) {
      for (const slice of pairSafeSlices(part, SLICE_CHARS)) {
        const { written } = encoder.encodeInto(slice, block);
        yield block.subarray(0, written);
      }
    }
  } finally {
    block.buffer.transfer(0);
  }
}

/**
 * Open the trace writer of a session. Takes the session lock unless
 * `lock: false`; throws a PenguinError of kind "locked" when another live
 * process writes the same session. No file is created until the first record.
 */
export async function openTraceWriter(options: TraceWriterOptions): Promise<TraceWriter> {
  // Long because: one closure-based writer whose methods share the open file, the lock, rotation
  // and the queue of appends; each method is short.
  const { tracesDir, dateDir } = writerPlace(options);
  const { sessionId } = options;
  const fsync: FsyncPolicy = options.fsync ?? "commit";
  let index = options.index ?? 1;
  const lock: SessionLock | null = options.heldLock ??
    (options.lock === false ? null : await acquireSessionLock(tracesDir, sessionId));

  let file: Deno.FsFile | null = null;
  let probed = false; // torn-tail probe done for the current index
  let torn = false; // the current file's tail lacks its "\n"
  let closed = false;
  let failure: unknown = undefined;
  let tail: Promise<unknown> = Promise.resolve();

  const currentPath = () => traceFilePath(tracesDir, dateDir, sessionId, index);

  function enqueue<T>(op: () => Promise<T>): Promise<T> {
    const run = tail.then(op);
    tail = run.then(() => undefined, () => undefined);
    return run;
  }

  async function closeFile(sync: boolean): Promise<void> {
    const f = file;
    file = null;
    if (!f) return;
    try {
      if (sync) await f.sync();
    } finally {
      f.close();
    }
  }

  async function ensureOpen(path: string): Promise<Deno.FsFile> {
    if (file) return file;
    await mkdirPrivate(join(tracesDir, dateDir));
    if (!probed) {
      torn = await probeTornTail(path, options.warn ?? defaultWarn);
      probed = true;
    }
    const f = await Deno.open(path, { append: true, create: true, mode: FILE_MODE });
    try {
      await Deno.chmod(path, FILE_MODE);
    } catch (err) {
      f.close();
      throw err;
    }
    file = f;
    return f;
  }

  /** Write one record: `json`, the JSON text of a message, and its newline. */
  async function writeRecord(json: string, sync: boolean): Promise<void> {
    const path = currentPath();
    if (closed) {
      throw new PenguinError("runtime", `Cannot append to trace "${path}": the writer is closed`);
    }
    let f: Deno.FsFile;
    try {
      f = await ensureOpen(path);
    } catch (err) {
      throw new PenguinError(
        "runtime",
        `Cannot open trace "${path}" for appending: ${errorMessage(err)}`,
        { cause: err },
      );
    }
    let off = 0;
    let stalled = false;
    let size = 0;
    try {
      // A large record is encoded and written a slice at a time through one block, not as one
      // copy of its bytes (a 15 MB signature: 15 MB more per record, attack round 24 R10).
      for (const data of recordBytes(torn ? ["\n", json, "\n"] : [json, "\n"])) {
        for (let at = 0; at < data.length;) {
          const n = await f.write(data.subarray(at));
          if (n <= 0) {
            stalled = true;
            throw new Error("the write made no progress");
          }
          at += n;
          off += n;
        }
        size += data.length;
      }
    } catch (err) {
      // Part of the record reached the file (or we cannot tell): that torn
      // fragment must be closed off, so the next record starts with "\n". A
      // write that failed outright wrote nothing and leaves the tail as it was.
      if (off > 0 || stalled) {
        torn = true;
        probed = false; // the next append cuts the fragment off first
      }
      // Reopen on the next append in case the handle itself went bad.
      try {
        f.close();
      } catch { /* already closed */ }
      file = null;
      throw new PenguinError(
        "runtime",
        `Cannot append to trace "${path}": ${errorMessage(err)} after ${off} of ${size} bytes`,
        { cause: err },
      );
    }
    torn = false;
    if (sync) await syncTrace(f, path);
  }

  return {
    sessionId,
    tracesDir,
    dateDir,
    get index() {
      return index;
    },
    get path() {
      return currentPath();
    },
    append(msg: OmniMessage): Promise<boolean> {
      if (!isRecordable(msg)) return Promise.resolve(false);
      let json: string;
      try {
        json = JSON.stringify(msg);
      } catch (err) {
        return Promise.reject(
          new PenguinError(
            "runtime",
            `Cannot append to trace of session ${sessionId}: ${errorMessage(err)}`,
            {
              cause: err,
            },
          ),
        );
      }
      const sync = fsync === "always" || (fsync === "commit" && isCommitPoint(msg));
      return enqueue(async () => {
        if (failure !== undefined) throw failure;
        try {
          await writeRecord(json, sync);
          largeGarbage(json.length); // its text and bytes, once a record of megabytes is written
        } catch (err) {
          if (options.stopAfterFailure) failure = err;
          throw err;
        }
        tell(() => options.observer?.appended(msg));
        return true;
      });
    },
    rotate(): Promise<void> {
      return enqueue(async () => {
        if (failure !== undefined) throw failure;
        if (closed) {
          throw new PenguinError(
            "runtime",
            `Cannot rotate trace "${currentPath()}": the writer is closed`,
          );
        }
        try {
          await closeFile(fsync !== "never");
        } catch (err) {
          if (options.stopAfterFailure) failure = err;
          throw err;
        } finally {
          index += 1;
          probed = false;
          torn = false;
        }
      });
    },
    close(): Promise<void> {
      return enqueue(async () => {
        if (closed) return;
        closed = true;
        try {
          await closeFile(fsync !== "never");
        } finally {
          if (lock) await releaseSessionLock(lock);
          tell(() => options.observer?.closed());
        }
      });
    },
  };
}
