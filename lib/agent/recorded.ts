/**
 * A session recorded in a trace, as a replay rebuilds it: what resume hands
 * to the agent to reopen the session.
 *
 * @module
 */
import type { OmniMessage, SessionMeta } from "../protocol/types.ts";
import type { SessionLock } from "../trace/lock.ts";
import type { DanglingCompaction } from "../session/mod.ts";
import type { EngineState } from "./engine.ts";

/**
 * A session recorded in a trace, as a replay rebuilds it: the seam for
 * resume. The meta's system prompt is reused verbatim; its model pair must
 * still be configured and its workspace must still exist.
 */
export interface RecordedSession {
  /** The recorded `session_meta` payload. */
  meta: SessionMeta;
  /** Replayed history, carry-over and counters (default: empty). */
  state?: EngineState;
  /** The trace file the writer continues: its date directory and index. */
  trace: { dateDir: string; index: number };
  /** Whether that file already starts with the meta (default true). */
  metaWritten?: boolean;
  /** The recorded messages to offer hosts as `session.resumedHistory`. */
  renderMessages?: readonly OmniMessage[];
  /** The file ends with a completed compaction: the next record goes to the next file. */
  contextClosed?: boolean;
  /** A compaction left open by a dead process: closed as failed once the writer is open. */
  danglingCompaction?: DanglingCompaction;
  /** The latest file's records that the restore of background work needs, when already read. */
  latestFacts?: { path: string; messages: readonly OmniMessage[] };
  /** The session lock, taken before the trace was read; the writer takes it over. */
  lock?: SessionLock;
  /**
   * The session continues in `meta.workspace` because the workspace it
   * recorded (`from`) is gone: the first run records a `workspace_moved`
   * event and tells the model.
   */
  movedFrom?: string;
  /**
   * The move is the first resume of an imported session placing it (the
   * recorded workspace may still exist, and may be `meta.workspace` itself):
   * the event says so, and the model is told only when the directory changes.
   */
  placedImport?: boolean;
  /**
   * The session continues on `meta.provider`/`meta.model_id`, an explicit
   * switch away from this recorded pair: the `tool_list_ready` of each
   * resumed run names the pair it uses (additive `model` field).
   */
  switchedFrom?: { provider: string; model_id: string };
  /**
   * The pair the session ran on until now (the last `model_switched`
   * event's, else the meta's), when it continues on another: the first run
   * records a `model_switched` event from it.
   */
  switchFrom?: { provider: string; model_id: string };
}
