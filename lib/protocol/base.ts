/**
 * The value sets every OmniMessage payload draws on: stop reasons, the
 * opaque fidelity object, senders and roles.
 *
 * @module
 */

/** How a message segment, a request or a tool call ended. Six values. */
export type StopReason =
  | "completed"
  | "failed"
  | "aborted"
  | "timeout"
  | "malformed"
  | "auth";

/** Every {@linkcode StopReason}, in protocol order. */
export const STOP_REASONS: readonly StopReason[] = [
  "completed",
  "failed",
  "aborted",
  "timeout",
  "malformed",
  "auth",
];

/**
 * Opaque provider payload (thinking signatures, encrypted reasoning, phase
 * labels, reasoning field names). Stored and replayed verbatim; never edited.
 */
export type Fidelity = Record<string, unknown>;

/** Who sent a user-role text when it was not the human user. */
export type Sender = "parent_agent" | "harness" | "server";

/** The role of a model message. */
export type Role = "user" | "assistant";
