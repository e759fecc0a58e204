/**
 * Fork and clone: a new session (new id, new session_meta carrying a
 * `lineage` field) whose first trace file holds, byte for byte, the records
 * of one file of the source session up to a cut. The source is only read.
 *
 * - `forkSession({before: n})`: the cut is right before user message n (as
 *   numbered by `sessions show`, see outline.ts), in the file holding it.
 * - `forkSession({at: n})`: the cut is right after the last completed request
 *   of task n (the assistant's complete answer), outside compaction spans.
 * - `cloneSession`: the cut is the end of the latest file, less a request or
 *   compaction still open at its end (a live or crashed round).
 *
 * Only the cut file is copied (it holds the whole model context, including
 * a `[context_summary]` written after a compaction); the new session's
 * replay equals the replay of the source file up to the cut.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import type { Lineage, SessionMeta, SessionMetaEnvelope } from "../protocol/types.ts";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID, newSessionId } from "../state/ids.ts";
import { tracesDir as agentTracesDir } from "../state/paths.ts";
import { acquireSessionLock, releaseSessionLock } from "../trace/lock.ts";
import { listSessionFiles, traceFilePath } from "../trace/paths.ts";
import { readTrace } from "../trace/reader.ts";
import { dateDirName } from "../trace/paths.ts";
import { alreadyExists, copyLines, createTraceFile } from "./_copy.ts";
import { type LocatedSession, locateSession, type SessionScope } from "./locate.ts";
import { buildOutline, cutAfterAnswer, cutBefore, type CutPoint } from "./outline.ts";

/** Options of {@linkcode forkSession}. Give exactly one of `before` and `at`. */
export interface ForkOptions extends SessionScope {
  /** The source: a session id, the path of one of its files, or `latest`. */
  session: string;
  /** Fork before user message n (1-based). */
  before?: number | undefined;
  /** Fork after the complete answer to user message n (1-based). */
  at?: number | undefined;
  /** Clock for the new id (tests). */
  now?: Date;
}

/** Options of {@linkcode cloneSession}. */
export interface CloneOptions extends SessionScope {
  /** The source: a session id, the path of one of its files, or `latest`. */
  session: string;
  /** Clock for the new id (tests). */
  now?: Date;
}

/** A session created by fork or clone. */
export interface CopiedSession {
  /** The new session id. */
  sessionId: string;
  /** `fork` or `clone`. */
  kind: "fork" | "clone";
  /** Path of the new trace file. */
  path: string;
  /** The source session and where it was cut. */
  lineage: Lineage;
  /** The source trace file that was copied from. */
  sourcePath: string;
  /** Records copied after the new session_meta. */
  records: number;
  /** Commands that continue the new session. */
  continueWith: string[];
}

/** The commands that continue session `id` (flags added for a non-default project or agent). */
export function continueCommands(id: string, projectId: string, agentId: string): string[] {
  let flags = "";
  if (projectId !== DEFAULT_PROJECT_ID) flags += ` --project-id ${projectId}`;
  if (agentId !== DEFAULT_AGENT_ID) flags += ` --agent-id ${agentId}`;
  return [
    `penguin run --resume ${id}${flags} -m "<message>"`,
    `penguin chat --resume ${id}${flags}`,
  ];
}

function usage(msg: string): PenguinError {
  return new PenguinError("usage", msg);
}

/** Fork a session before user message n, or after its answer (see the module doc). */
export async function forkSession(options: ForkOptions): Promise<CopiedSession> {
  const { before, at } = options;
  if ((before === undefined) === (at === undefined)) {
    throw usage("sessions fork: give exactly one of --before <n> and --at <n>");
  }
  const n = (before ?? at)!;
  if (!Number.isInteger(n) || n < 1) {
    throw usage(`sessions fork: the message number must be a positive integer, got ${n}`);
  }
  const located = await locateSession({ ...options, target: options.session });
  const outline = await buildOutline(located, { preview: 0 });
  if (n > outline.prompts) {
    throw usage(
      `sessions fork: session ${located.sessionId} has ${outline.prompts} user message(s); ` +
        `${before !== undefined ? "--before" : "--at"} ${n} is out of range`,
    );
  }
  const cut = before !== undefined ? cutBefore(outline, n) : cutAfterAnswer(outline, n);
  if (cut === null) {
    throw new PenguinError(
      "not_found",
      `Cannot fork session ${located.sessionId} at user message ${n}: its task has no completed answer; use --before ${n}`,
    );
  }
  return await copyCut(located, cut, "fork", options);
}

/** Clone a session at its current leaf (see the module doc). */
export async function cloneSession(options: CloneOptions): Promise<CopiedSession> {
  const located = await locateSession({ ...options, target: options.session });
  const latest = located.latest;
  let lastLine = 0;
  let openAt: number | null = null; // line where a still-open request began
  let compactionAt: number | null = null; // line where a still-open compaction began
  for await (const { line, message: m } of readTrace(latest.path)) {
    lastLine = line;
    if (m.type !== "event_msg") continue;
    const t = m.payload.type;
    if (t === "request_begin") openAt = line;
    else if (t === "request_end") openAt = null;
    else if (t === "compaction_begin") compactionAt = line;
    else if (t === "compaction_end") compactionAt = null;
  }
  const stops = [openAt, compactionAt].filter((x): x is number => x !== null);
  const line = stops.length > 0 ? Math.min(...stops) - 1 : lastLine;
  return await copyCut(located, { file: latest.index, line }, "clone", options);
}

async function copyCut(
  located: LocatedSession,
  cut: CutPoint,
  kind: "fork" | "clone",
  options: SessionScope & { now?: Date },
): Promise<CopiedSession> {
  const source = located.files.find((f) => f.index === cut.file);
  if (!source) throw new Error(`no file with index ${cut.file}`);
  const keep = new Set<number>();
  let meta: SessionMeta | null = null;
  for await (const { line, message: m } of readTrace(source.path)) {
    if (line > cut.line) break;
    if (m.type === "session_meta") meta ??= m.payload;
    else keep.add(line);
  }
  if (meta === null) {
    throw new PenguinError(
      "data",
      `Cannot ${kind} session ${located.sessionId}: ${source.path} has no readable session_meta`,
    );
  }
  const lineage: Lineage = {
    parent_session_id: located.sessionId,
    trace_index: cut.file,
    line: Math.max(cut.line, 0),
    kind,
  };
  const agentId = located.agentId ?? options.agentId;
  const tracesDir = located.tracesDir ?? agentTracesDir(options);
  const now = options.now ?? new Date();
  for (let attempt = 0; attempt < 16; attempt++) {
    const id = newSessionId(now);
    if ((await listSessionFiles(tracesDir, id)).length > 0) continue;
    const payload: SessionMeta = {
      session_id: id,
      provider: meta.provider,
      model_id: meta.model_id,
      model_context_window: meta.model_context_window,
      system_prompt: meta.system_prompt,
      agent_state: meta.agent_state,
      workspace: meta.workspace,
      lineage,
    };
    const envelope: SessionMetaEnvelope = {
      timestamp: new Date().toISOString(),
      type: "session_meta",
      payload,
    };
    const path = traceFilePath(tracesDir, dateDirName(now), id, 1);
    const lock = await acquireSessionLock(tracesDir, id);
    let records = 0;
    try {
      await createTraceFile(path, async (sink) => {
        await sink.text(JSON.stringify(envelope) + "\n");
        records = await copyLines(source.path, (l) => keep.has(l), cut.line, sink);
      });
    } catch (err) {
      if (alreadyExists(err)) continue;
      throw err;
    } finally {
      await releaseSessionLock(lock);
    }
    return {
      sessionId: id,
      kind,
      path,
      lineage,
      sourcePath: source.path,
      records,
      continueWith: continueCommands(id, options.projectId, agentId),
    };
  }
  throw new PenguinError(
    "runtime",
    `Cannot ${kind} session ${located.sessionId}: no free session id`,
  );
}
