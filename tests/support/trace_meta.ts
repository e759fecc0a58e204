/**
 * A minimal `session_meta` record for traces a test writes by hand (a custom
 * model, a workspace of `/tmp`), at `timestamp`.
 *
 * @module
 */

/** The session_meta record of session `id`. */
export function sessionMetaRecord(
  id: string,
  timestamp = "2026-12-01T10:00:00.000Z",
): Record<string, unknown> {
  return {
    timestamp,
    type: "session_meta",
    payload: {
      session_id: id,
      provider: "custom",
      model_id: "m",
      model_context_window: "unknown",
      system_prompt: "s",
      agent_state: "/x",
      workspace: "/tmp",
    },
  };
}
