/**
 * Resuming a recorded session: the live half of what
 * `lib/session/resume.ts` prepares from the trace alone.
 *
 * Order, so that a refusal changes nothing on disk: locate the session and
 * take its lock (a session another live process writes is refused before
 * any of its trace is read, and nobody can append between the replay and
 * the resumed writer); load and replay the latest trace file (meta
 * readable, workspace present); check the session belongs to this agent and
 * that its model pair is still configured in the current project config;
 * then open the writer, which takes over the lock, on the same file (same
 * date directory and index). Only then is anything written: a
 * compaction the previous process left open is closed as failed. A file that
 * ends with a completed compaction is a closed context: the next record goes
 * to the next file, after `session_meta` and `tool_list_ready`.
 *
 * The system prompt is the recorded one, verbatim; tools, sandbox, vault and
 * limits come from the current agent state. The first run sends
 * `[pendingSummary?, …carryOver, …newMessages]`; only the summary and the new
 * messages are written.
 *
 * @module
 */
import { factsFilter } from "./subagents/_facts.ts";
import { defaultWarn, PenguinError } from "../protocol/errors.ts";
import { releaseSessionLock } from "../trace/lock.ts";
import { resolveWorkspace } from "../state/workspace.ts";
import type { CompleteMessage, SessionMeta } from "../protocol/types.ts";
import { describeConfiguredPairs, findModel, formatPair } from "../state/project_config.ts";
import {
  type LoadedSession,
  loadSessionForResume,
  missingWorkspaceError as missingWorkspace,
} from "../session/resume.ts";
import type { ResumeReplay } from "../session/replay.ts";
import { safeText } from "../display/terminal_text.ts";
import type { AgentBase, RecordedSessionOptions } from "./_build.ts";
import type { EngineState } from "./engine.ts";
import type { Session } from "./session.ts";
import type { RecordedSession } from "./recorded.ts";

/** Options of `agent.resumeSession`. */
export interface ResumeOptions extends RecordedSessionOptions {
  /** A session id, the path of one of its trace files, or `latest`. */
  target: string;
  /**
   * Continue on this provider instead of the recorded one (with `modelId`):
   * an explicit switch, e.g. for a session imported from another harness.
   * The pair must be configured; the recorded session_meta is not rewritten:
   * the first run records a `model_switched` event, and later resumes
   * continue on the pair of the last one.
   */
  provider?: string;
  /** The model id of the switch (with `provider`). */
  modelId?: string;
  /**
   * Continue in this workspace when the recorded one is gone (recorded with
   * a `workspace_moved` event). When the recorded workspace still exists it
   * must be the same directory: a session is never moved away from files
   * its conversation refers to.
   */
  workspace?: string;
  /**
   * The directory the host runs in (its current directory). The first
   * resume of an imported session (its trace holds no record of a resume
   * yet) continues here unless `workspace` names another, with a note; the
   * first run records the placement (a `workspace_moved` event), and later
   * resumes stay in the recorded workspace. Without it, such a session
   * continues where the import placed it.
   */
  currentDirectory?: string;
  /**
   * Called with the recorded `session_meta` once the session is found and
   * before anything opens; the options it returns override these (e.g. a
   * sandbox policy read from the recorded workspace).
   */
  configure?: (meta: SessionMeta) => RecordedSessionOptions | Promise<RecordedSessionOptions>;
}

/** Opens a recorded session (the agent's `openRecordedSession`). */
export type OpenRecorded = (rec: RecordedSession, opts: RecordedSessionOptions) => Promise<Session>;

function callOrder(history: readonly CompleteMessage[]): Map<string, number> {
  const order = new Map<string, number>();
  history.forEach((m, i) => {
    if (m.type === "tool_call") order.set(m.tool_call_id, i);
  });
  return order;
}

/** Stable sort of `msgs` by `rank`. */
function sortedBy<T>(msgs: readonly T[], rank: (m: T) => number): T[] {
  return msgs.map((m, i) => ({ m, i }))
    .sort((a, b) => rank(a.m) - rank(b.m) || a.i - b.i)
    .map((x) => x.m);
}

/**
 * The engine state of a replay. Tool outputs are written in completion
 * order but sent in call order: each run of consecutive outputs in the
 * history is put back in the order of its calls, as the live session sent
 * it. Carry-over tool outputs (replayed ones and the placeholders of calls
 * that never finished) go first, in call order, so the next request pairs
 * them with the calls they answer; the other carried inputs follow in trace
 * order.
 */
export function engineStateOf(replay: ResumeReplay): EngineState {
  const raw = replay.history.map((m) => m.payload);
  const order = callOrder(raw);
  const rank = (m: CompleteMessage) =>
    m.type === "tool_call_output" ? order.get(m.tool_call_id) ?? Infinity : Infinity;
  const history: CompleteMessage[] = [];
  for (let i = 0; i < raw.length;) {
    let j = i;
    while (j < raw.length && raw[j]!.type === "tool_call_output") j++;
    if (j > i + 1) history.push(...sortedBy(raw.slice(i, j), rank));
    else if (j === i + 1) history.push(raw[i]!);
    else history.push(raw[j++]!);
    i = j;
  }
  const carried = replay.carryOver.map((m) => m.payload);
  const outputs = sortedBy(carried.filter((m) => m.type === "tool_call_output"), rank);
  const state: EngineState = {
    history,
    carryOver: [...outputs, ...carried.filter((m) => m.type !== "tool_call_output")],
    sessionTokens: { ...replay.sessionTokens },
    lastRequestTotal: replay.lastRequestTotal,
    sessionTurns: replay.sessionTurns,
  };
  if (replay.pendingSummary) state.pendingSummary = replay.pendingSummary.payload;
  return state;
}

async function realOrSelf(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch {
    return path;
  }
}

async function checkOwner(base: AgentBase, loaded: LoadedSession): Promise<void> {
  const mine = await realOrSelf(base.paths.traces);
  if (await realOrSelf(loaded.file.tracesDir) === mine) return;
  const m = /\/agents\/([^/]+)\/traces\/?$/.exec(loaded.file.tracesDir);
  const hint = m ? `; pass --agent-id ${m[1]} (and its --project-id)` : "";
  throw new PenguinError(
    "usage",
    `Cannot resume session ${loaded.sessionId}: its trace lives in ${loaded.file.tracesDir}, not under agent "${base.ref.agentId}" of project "${base.ref.projectId}" (${base.paths.traces})${hint}`,
  );
}

function checkPair(
  base: AgentBase,
  loaded: LoadedSession,
  ref: { provider: string; model_id: string },
): void {
  const switched = ref.provider !== loaded.pair.provider || ref.model_id !== loaded.pair.model_id;
  if (findModel(base.projectConfig, ref)) return;
  const foreign = (loaded.meta.imported_from as { harness?: unknown } | undefined)?.harness;
  if (!switched && typeof foreign === "string") {
    throw new PenguinError(
      "config",
      `Cannot resume session ${loaded.sessionId}: it was imported from ${foreign}, recorded on ${
        formatPair(ref)
      }, which is not configured here; ${
        describeConfiguredPairs(base.projectConfig)
      }. Continue it on one of them with --provider <provider> --model-id <model-id>`,
    );
  }
  if (switched) {
    throw new PenguinError(
      "config",
      `Cannot resume session ${loaded.sessionId} on ${formatPair(ref)}: it is not configured in ${
        JSON.stringify(base.configPath)
      }; ${describeConfiguredPairs(base.projectConfig)}`,
    );
  }
  throw new PenguinError(
    "config",
    `Cannot resume session ${loaded.sessionId}: its model ${formatPair(ref)} is not configured in ${
      JSON.stringify(base.configPath)
    }; ${describeConfiguredPairs(base.projectConfig)}. Add it back with: ` +
      `penguin config model add --provider ${ref.provider} --model-id ${ref.model_id}`,
  );
}

/**
 * The project's default model for an imported session whose pair is not
 * configured here (the harness or machine it came from had other models),
 * or undefined: resumed without naming a pair, it continues on the default.
 */
function importedFallback(
  base: AgentBase,
  loaded: LoadedSession,
): { provider: string; model_id: string } | undefined {
  const imported = loaded.meta.imported_from;
  if (typeof imported !== "object" || imported === null) return undefined;
  if (findModel(base.projectConfig, loaded.pair)) return undefined;
  const wanted = base.projectConfig.default_model;
  if (!wanted || !findModel(base.projectConfig, wanted)) return undefined;
  return { provider: wanted.provider, model_id: wanted.model_id };
}

/** A resumed session's workspace when it is not the one it worked in so far. */
interface Placement {
  from: string;
  to: string;
  /** The first resume of an imported session placed it (see {@linkcode firstImportedResume}). */
  imported?: { note: string };
}

/** The `imported_from` of an imported session's meta, or undefined. */
function importedOf(meta: SessionMeta): Record<string, unknown> | undefined {
  const imported = meta.imported_from;
  return typeof imported === "object" && imported !== null
    ? imported as Record<string, unknown>
    : undefined;
}

/**
 * True when an imported session (placed at import: `workspace_from` is set)
 * has not been resumed yet: the import leaves out every `workspace_moved`
 * record, so one in the latest file was written by a resume, and a file a
 * resumed session rotated to carries `imported_from.placed` in its meta.
 */
function firstImportedResume(loaded: LoadedSession): boolean {
  const imported = importedOf(loaded.meta);
  return imported !== undefined && imported.workspace_from !== undefined &&
    imported.placed !== true && loaded.replay.workspace === undefined;
}

/** True when an imported session was placed by an earlier resume. */
function placedBefore(loaded: LoadedSession): boolean {
  return importedOf(loaded.meta)?.workspace_from !== undefined && !firstImportedResume(loaded);
}

/** The directory the imported file recorded (quoted, terminal-safe), else the session's workspace. */
function recordedIn(loaded: LoadedSession): string {
  const imported = importedOf(loaded.meta) ?? {};
  const path = [imported.recorded_workspace, imported.cwd].find((p) =>
    typeof p === "string" && p !== ""
  ) as string | undefined;
  return JSON.stringify(safeText(path ?? loaded.workspace));
}

/**
 * The first resume of an imported session works in the directory the user
 * names (`wanted`), else the current one (`here`); recorded, so later
 * resumes stay there.
 */
async function placeImported(
  loaded: LoadedSession,
  dir: string,
  named: boolean,
): Promise<Placement> {
  const to = await Deno.realPath(await resolveWorkspace(dir));
  const why = named
    ? `named with --workspace; recorded in ${recordedIn(loaded)})`
    : `recorded in ${recordedIn(loaded)}); --workspace chooses another`;
  return {
    from: loaded.workspace,
    to,
    imported: {
      note: `[penguin] resuming the imported session in ${safeText(to)} (${why}`,
    },
  };
}

/**
 * Where a resumed session works: its recorded workspace, or `wanted` when
 * that one is gone (returned as a move). A `wanted` directory that differs
 * from a recorded workspace that still exists is refused. The first resume
 * of an imported session works in `wanted`, else `here` (when given).
 */
async function placeWorkspace(
  loaded: LoadedSession,
  wanted: string | undefined,
  here: string | undefined,
): Promise<Placement | undefined> {
  // An imported session's first resume works where the user says: --workspace, else the current
  // directory. One imported before the import chose a workspace (no `imported_from.workspace_from`)
  // names its workspace in the file it came from: until it has been placed, the user names it (a
  // file recording "/home/me" would otherwise make the home directory writable to the model). A
  // penguin trace's own workspace_moved records came from the file too, so such a session is
  // placed on every resume.
  const imported = importedOf(loaded.meta);
  if (firstImportedResume(loaded) && (wanted ?? here) !== undefined) {
    return await placeImported(loaded, (wanted ?? here)!, wanted !== undefined);
  }
  const unplaced = imported !== undefined && imported.workspace_from === undefined &&
    (typeof imported.harness !== "string" || loaded.replay.workspace === undefined);
  if (unplaced) {
    const origin = typeof imported.harness === "string"
      ? `imported from ${imported.harness}`
      : "imported from a penguin trace";
    if (wanted === undefined) {
      throw new PenguinError(
        "usage",
        `Cannot resume session ${loaded.sessionId} without --workspace: it was ${origin}, ` +
          `and its workspace "${loaded.workspace}" comes from the imported file. ` +
          `Name the directory to continue in with --workspace <dir> (that one too, if you mean it)`,
      );
    }
    const to = await Deno.realPath(await resolveWorkspace(wanted));
    return { from: loaded.workspace, to };
  }
  if (loaded.workspaceMissing && wanted === undefined) {
    // Allowed to load only for a first imported resume in `here`; anything else needs --workspace.
    throw missingWorkspace(loaded.sessionId, loaded.workspace);
  }
  if (wanted === undefined) return undefined;
  const to = await Deno.realPath(await resolveWorkspace(wanted));
  if (loaded.workspaceMissing) return { from: loaded.workspace, to };
  if (await realOrSelf(loaded.workspace) === to) return undefined;
  throw new PenguinError(
    "usage",
    `Cannot resume session ${loaded.sessionId} in "${to}": it works in "${loaded.workspace}", ` +
      `which still exists, and its conversation refers to files there. Resume without --workspace ` +
      `(--workspace is only for a session whose workspace is gone)`,
  );
}

/**
 * Resume a recorded session of the agent `base`: see the module doc for the
 * steps. Throws a PenguinError, having written nothing, when the session
 * cannot be resumed (missing, unreadable meta, workspace gone, model pair no
 * longer configured, another agent's session, locked by a live process).
 */
export async function resumeRecorded(
  base: AgentBase,
  open: OpenRecorded,
  opts: ResumeOptions,
): Promise<Session> {
  const {
    target,
    configure,
    workspace: wanted,
    currentDirectory: here,
    provider,
    modelId,
    ...rest
  } = opts;
  const facts = factsFilter();
  // Locked before anything is read; the lock goes to the writer, or is released on a refusal.
  const loaded = await loadSessionForResume({
    root: base.ref.root,
    projectId: base.ref.projectId,
    agentId: base.ref.agentId,
    target,
    observe: facts.push,
    lock: true,
    // The workspace an import placed a session in may be gone by its first resume (checked below).
    allowMissingWorkspace: wanted !== undefined || here !== undefined,
  });
  try {
    await checkOwner(base, loaded);
    // The pair of the flags (an explicit switch), else the last one the trace records.
    const explicit = provider !== undefined && modelId !== undefined;
    const fallback = explicit ? undefined : importedFallback(base, loaded);
    const pair = explicit ? { provider, model_id: modelId } : fallback ?? { ...loaded.pair };
    checkPair(base, loaded, pair);
    if (fallback) {
      (rest.warn ?? defaultWarn)(
        `[penguin] session ${loaded.sessionId} was imported and recorded on ${
          formatPair(loaded.pair)
        }, which is not configured here: it continues on the default model ${
          formatPair(fallback)
        } (recorded as model_switched).`,
      );
    }
    const moved = await placeWorkspace(loaded, wanted, here);
    if (moved?.imported) (rest.warn ?? defaultWarn)(moved.imported.note);
    const meta: SessionMeta = { ...loaded.meta, ...pair, workspace: moved?.to ?? loaded.workspace };
    // A file the session rotates to says it was placed (it holds no workspace_moved record).
    if (moved?.imported || placedBefore(loaded)) {
      meta.imported_from = { ...importedOf(loaded.meta), placed: true };
    }
    const extra = configure ? await configure(meta) : {};
    const { replay } = loaded;
    if (loaded.notice) (rest.warn ?? defaultWarn)(loaded.notice);
    const rec: RecordedSession = {
      meta,
      ...(moved ? { movedFrom: moved.from } : {}),
      ...(moved?.imported ? { placedImport: true } : {}),
      ...(pair.provider !== loaded.meta.provider || pair.model_id !== loaded.meta.model_id
        ? { switchedFrom: { provider: loaded.meta.provider, model_id: loaded.meta.model_id } }
        : {}),
      ...(pair.provider !== loaded.pair.provider || pair.model_id !== loaded.pair.model_id
        ? { switchFrom: { ...loaded.pair } }
        : {}),
      state: engineStateOf(replay),
      trace: { dateDir: loaded.file.dateDir, index: loaded.file.index },
      renderMessages: replay.renderMessages,
      contextClosed: replay.contextClosed,
      ...(replay.danglingCompaction ? { danglingCompaction: replay.danglingCompaction } : {}),
      latestFacts: { path: loaded.file.path, messages: facts.kept },
      ...(loaded.lock ? { lock: loaded.lock } : {}),
    };
    return await open(rec, { ...rest, ...extra });
  } catch (err) {
    // Released twice is harmless: a writer that took it over has already let it go.
    if (loaded.lock) await releaseSessionLock(loaded.lock);
    throw err;
  }
}
