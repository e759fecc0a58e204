/**
 * Facts read from the wording of trace text, for traces that lack penguin's
 * typed fields (PenguinHarness's, and penguin's own from before they were
 * written): the subagent a run_subagent output registered, the background
 * process an exec_command note left running, and the task a
 * `[background_task_done]` notice reports.
 *
 * Readers use the typed fields first (`penguin_subagent`,
 * `penguin_process`, `penguin_notice`) and come here only when a record has
 * none; this is the one module that parses such text, so the wording it
 * depends on is listed in one place.
 *
 * @module
 */

/** `[subagent running … with subagent_id subagent-…]` in a run_subagent output. */
const SUBAGENT_ID = /subagent_id (subagent-[A-Za-z0-9]+)/;
/** The note an exec_command output ends with when its process outlived the call. */
const PROCESS_ID = /\[process running (?:in the background )?with process_id (proc-[0-9a-f]{8})/;
/** A whole `[background_task_done]` block; group 1 is its field lines. */
const NOTICE_BLOCK = /\[background_task_done\]\n([\s\S]*?)\n\[\/background_task_done\]/;

/** The subagent id a run_subagent output says stays registered, if it names one. */
export function legacySpawnedSubagentId(output: string): string | undefined {
  return output.match(SUBAGENT_ID)?.[1];
}

/** Whether a run_subagent output is the tool's own error (no child was started). */
export function legacySpawnFailed(output: string): boolean {
  return output.startsWith("[run_subagent error");
}

/** The process an exec_command output's note says still runs, if any. */
export function legacyRunningProcessId(output: string): string | undefined {
  return output.match(PROCESS_ID)?.[1];
}

/** Whether an input_command output's note says process `id` still runs. */
export function legacyStillRunning(id: string, output: string): boolean {
  return output.includes(`[process still running with process_id ${id}]`);
}

/** The kind and id of the task a `[background_task_done]` notice text reports, or null. */
export function legacyNoticeFacts(text: string): { kind: string; id: string } | null {
  const m = NOTICE_BLOCK.exec(text);
  if (!m) return null;
  const kind = /^kind: (\S+)$/m.exec(m[1]!)?.[1];
  const id = /^id: (\S+)$/m.exec(m[1]!)?.[1];
  return kind && id ? { kind, id } : null;
}
