/**
 * The OmniMessage envelope and the `session_meta` payload at the head of
 * every trace file.
 *
 * @module
 */
import type { EventPayload } from "./events.ts";
import type { ModelPayload } from "./messages.ts";

/** Where a fork or clone was cut from (a penguin addition; additive field). */
export interface Lineage {
  /** The session this one was cut from. */
  parent_session_id: string;
  /** The index (`_NNN`) of the parent's trace file. */
  trace_index: number;
  /** 1-based line in that file after which the history was cut. */
  line: number;
  /** `fork` or `clone`. */
  kind: "fork" | "clone";
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** The head of every trace file: the session's fixed configuration. */
export interface SessionMeta {
  /** `session-YYYY-MM-DD-HH-mm-ss-<8hex>`. */
  session_id: string;
  /** Provider group of the model pair. */
  provider: string;
  /** Model id of the model pair. */
  model_id: string;
  /** Context window in tokens, or `"unknown"`. */
  model_context_window: number | "unknown";
  /** The fully assembled system prompt. */
  system_prompt: string;
  /** Absolute path of the Agent State directory. */
  agent_state: string;
  /** Absolute path of the Workspace. */
  workspace: string;
  /** Absent for user-created sessions. */
  source?: "subagent" | "schedule";
  /** Unknown fields (e.g. lineage, parent pointers) are preserved. */
  [extra: string]: unknown;
}

/** The three envelope kinds. */
export type EnvelopeType = "session_meta" | "model_msg" | "event_msg";

/** Fields shared by every envelope. */
export interface EnvelopeBase {
  /** ISO-8601 UTC creation time. */
  timestamp: string;
  /** Child session ids, outer to inner; absent for the main session. */
  origin?: string[];
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** A `session_meta` envelope. */
export interface SessionMetaEnvelope extends EnvelopeBase {
  /** Envelope kind. */
  type: "session_meta";
  /** The meta payload. */
  payload: SessionMeta;
}

/** A `model_msg` envelope (complete or partial). */
export interface ModelMsgEnvelope<P extends ModelPayload = ModelPayload> extends EnvelopeBase {
  /** Envelope kind. */
  type: "model_msg";
  /** The message payload. */
  payload: P;
}

/** An `event_msg` envelope. */
export interface EventMsgEnvelope<P extends EventPayload = EventPayload> extends EnvelopeBase {
  /** Envelope kind. */
  type: "event_msg";
  /** The event payload. */
  payload: P;
}

/** One OmniMessage: a stream event or a trace record. */
export type OmniMessage = SessionMetaEnvelope | ModelMsgEnvelope | EventMsgEnvelope;
