/**
 * Loading a session for resumption: locate its latest trace file (a missing
 * session is an error), read it tolerantly and replay it, require a
 * session_meta that names a provider, and require its workspace to still be
 * a directory. Nothing on disk changes here; closing a compaction the last
 * process left open is a separate step ({@linkcode closeDanglingCompaction}).
 *
 * With `lock: true` the session lock is taken as soon as the session is
 * located and before any of its trace is read, so what is replayed is what
 * the resumed writer continues: no other process can append a turn in
 * between. A session another live process writes is refused with a
 * "locked" error, having read nothing. The lock is handed back in
 * `LoadedSession.lock`, for the writer (`openTraceWriter({ heldLock })`).
 *
 * Left to the agent layer, which owns the live session: checking that the
 * recorded (provider, model_id) pair still exists in the project config
 * (step 5), rebuilding tools and environment (step 6), and opening the trace
 * writer on `file` (same date directory and index, step 7). When
 * `replay.danglingCompaction` is set, call {@linkcode closeDanglingCompaction}
 * with that writer (step 8).
 *
 * @module
 */
import { errorMessage, PenguinError } from "../protocol/errors.ts";
import { eventMsg } from "../protocol/builders.ts";
import type { OmniMessage, SessionMeta } from "../protocol/types.ts";
import { resolveWorkspace } from "../state/workspace.ts";
import {
  keepProblem,
  problemsLeftOut,
  readTrace,
  skippedLinesNotice,
  type TraceProblem,
} from "../trace/reader.ts";
import { acquireSessionLock, releaseSessionLock, type SessionLock } from "../trace/lock.ts";
import { listSessionFiles, type TraceFileRef } from "../trace/paths.ts";
import { locateSession, peekHead, type SessionScope } from "./locate.ts";
import { createReplay, type DanglingCompaction, type ResumeReplay } from "./replay.ts";

/** Options of {@linkcode loadSessionForResume}. */
export interface ResumeTarget extends SessionScope {
  /** A session id, the path of one of its trace files (inside a traces directory), or `latest`. */
  target: string;
  /** Also sees every record of the latest file as it is replayed (one pass serves both). */
  observe?: (message: OmniMessage) => void;
  /**
   * Take the session lock before reading anything (default false). The
   * caller then owns `LoadedSession.lock` (hand it to the writer, or release it).
   */
  lock?: boolean;
  /**
   * Do not refuse a session whose workspace is gone (the caller moves it
   * elsewhere); `LoadedSession.workspaceMissing` says so.
   */
  allowMissingWorkspace?: boolean;
}

/** Where the resumed session continues writing: hand these to `openTraceWriter`. */
export interface ResumeFile {
  /** Path of the latest trace file. */
  path: string;
  /** The traces directory (`<agent>/traces`). */
  tracesDir: string;
  /** Its date directory (`yyyy-mm-dd`), reused by the resumed writer. */
  dateDir: string;
  /** Its index, reused by the resumed writer (which rotates first when `replay.contextClosed`). */
  index: number;
}

/** A session ready to be resumed. */
export interface LoadedSession {
  /** The session id. */
  sessionId: string;
  /** The session_meta payload of the latest file (provider, model, system prompt, workspace…). */
  meta: SessionMeta;
  /** The latest trace file. */
  file: ResumeFile;
  /** The replay of the latest file. */
  replay: ResumeReplay;
  /** Lines of the latest file that were skipped (torn tail, malformed or invalid lines). */
  problems: TraceProblem[];
  /** The one-line `[trace] skipped N malformed line(s) …` diagnostic, or null. */
  notice: string | null;
  /** The session lock, when `lock: true` was asked for (taken before the trace was read). */
  lock?: SessionLock;
  /** Where the session works: the last `workspace_moved` target, else the meta's workspace. */
  workspace: string;
  /** True when that workspace no longer exists (only with `allowMissingWorkspace`). */
  workspaceMissing: boolean;
  /**
   * The model pair the session runs on: the last `model_switched` event's,
   * else the meta's (an explicit switch, written in the trace; never inferred).
   */
  pair: { provider: string; model_id: string };
}

function cannot(id: string, kind: "data" | "usage", why: string): PenguinError {
  return new PenguinError(kind, `Cannot resume session ${id}: ${why}`);
}

/**
 * Locate a session and replay its latest trace file (only that file is
 * read, streamed record by record). Throws a PenguinError, changing nothing
 * on disk, when the session does not exist, its trace has no readable
 * session_meta, the meta has no provider (legacy data), or its workspace is
 * gone (`Workspace does not exist: …`).
 */
export async function loadSessionForResume(options: ResumeTarget): Promise<LoadedSession> {
  const located = await locateSession(options);
  const { sessionId } = located;
  if (located.tracesDir === null) {
    throw cannot(
      sessionId,
      "usage",
      `${located.latest.path} is not inside a traces directory (<agent>/traces/<yyyy-mm-dd>/); import it first with "penguin sessions import"`,
    );
  }
  if (!options.lock) return await load(options, sessionId, located.tracesDir, located.latest);
  let lock: SessionLock;
  try {
    lock = await acquireSessionLock(located.tracesDir, sessionId);
  } catch (err) {
    if (err instanceof PenguinError && err.kind === "locked") {
      throw new PenguinError(
        "locked",
        err.message.replace(/^Cannot write session /, "Cannot resume session "),
        { cause: err },
      );
    }
    throw err;
  }
  try {
    // Listed again under the lock: the previous writer may have moved on to a new file.
    const files = await listSessionFiles(located.tracesDir, sessionId);
    const latest = files.at(-1);
    if (latest === undefined) {
      throw cannot(sessionId, "data", `its trace files are gone from ${located.tracesDir}`);
    }
    return { ...await load(options, sessionId, located.tracesDir, latest), lock };
  } catch (err) {
    await releaseSessionLock(lock);
    throw err;
  }
}

async function load(
  options: ResumeTarget,
  sessionId: string,
  tracesDir: string,
  latest: TraceFileRef,
): Promise<LoadedSession> {
  const head = await peekHead(latest.path);
  const headMeta = head?.meta ?? null;
  if (headMeta === null) {
    throw cannot(sessionId, "data", `${latest.path} does not start with a readable session_meta`);
  }
  if (typeof headMeta.provider !== "string") {
    throw cannot(
      sessionId,
      "data",
      `its session_meta in ${latest.path} has no provider (legacy data from an older version); start a new session`,
    );
  }
  if (headMeta.session_id !== sessionId) {
    throw cannot(
      sessionId,
      "data",
      `the session_meta in ${latest.path} names another session (${
        JSON.stringify(headMeta.session_id)
      })`,
    );
  }
  if (typeof headMeta.workspace !== "string" || headMeta.workspace === "") {
    throw cannot(sessionId, "data", `its session_meta in ${latest.path} records no workspace`);
  }
  const problems: TraceProblem[] = [];
  const replay = createReplay();
  for await (const rec of readTrace(latest.path, { onProblem: keepProblem(problems) })) {
    replay.push(rec.message);
    options.observe?.(rec.message);
  }
  const result = replay.finish();
  if (result.meta === null) {
    const first = problems.find((p) => p.line === 1);
    throw cannot(
      sessionId,
      "data",
      `the session_meta in ${latest.path} is not valid${first ? ` (${first.reason})` : ""}`,
    );
  }
  const workspace = result.workspace ?? headMeta.workspace;
  let workspaceMissing = false;
  try {
    await resolveWorkspace(workspace);
  } catch (err) {
    if (!(err instanceof PenguinError)) throw err;
    if (err.kind === "not_found" && options.allowMissingWorkspace) workspaceMissing = true;
    else throw workspaceError(sessionId, err);
  }
  return {
    sessionId,
    workspace,
    workspaceMissing,
    meta: result.meta.payload,
    pair: result.pair ??
      { provider: result.meta.payload.provider, model_id: result.meta.payload.model_id },
    file: {
      path: latest.path,
      tracesDir,
      dateDir: latest.dateDir,
      index: latest.index,
    },
    replay: result,
    problems,
    notice: skippedLinesNotice(latest.path, problems, problemsLeftOut(problems, latest.path)),
  };
}

/** The error for a recorded workspace that is gone or no directory (`err`, from resolveWorkspace). */
function workspaceError(sessionId: string, err: PenguinError): PenguinError {
  return new PenguinError(
    err.kind,
    `${err.message} (recorded by session ${sessionId}; a workspace is never recreated)` +
      (err.kind === "not_found"
        ? `. To continue the session in another directory, pass --workspace <dir>`
        : ""),
  );
}

/**
 * The error {@linkcode loadSessionForResume} gives for a session whose
 * workspace is gone, for a caller that loaded it with
 * `allowMissingWorkspace` and then found no other directory to move it to.
 */
export function missingWorkspaceError(sessionId: string, workspace: string): PenguinError {
  return workspaceError(
    sessionId,
    new PenguinError("not_found", `Workspace does not exist: ${workspace}`),
  );
}

/** Anything with a trace writer's `append` (see `openTraceWriter`). */
export interface RecordAppender {
  /** Append one record; resolves true when it was written. */
  append(msg: OmniMessage): Promise<boolean>;
}

/**
 * Close a compaction the previous process left open, right after resuming
 * and before anything else is written: append
 * `compaction_end{reason, mode, status: "failed"}`, discarding the
 * half-written summary. It is the only write a resume makes. Best-effort:
 * resolves false (and reports to `onError`) instead of throwing.
 */
export async function closeDanglingCompaction(
  writer: RecordAppender,
  dangling: DanglingCompaction,
  onError?: (message: string) => void,
): Promise<boolean> {
  const msg = eventMsg({
    type: "compaction_end",
    reason: dangling.reason,
    mode: dangling.mode,
    status: "failed",
  });
  try {
    return await writer.append(msg);
  } catch (err) {
    onError?.(`[trace] write failed: ${errorMessage(err)}`);
    return false;
  }
}
