/**
 * What the subagent tools share: their limits,
 * parameters and the notes their outputs end with. Each tool is declared in
 * its own file; `tools.ts` lists them.
 *
 * @module
 */
import { z } from "zod";

/** Default yield window of run_subagent and of an input_subagent that starts work (ms). */
export const SUBAGENT_DEFAULT_YIELD_MS = 300_000;

/** Default window of an empty input_subagent poll (ms). */
export const SUBAGENT_POLL_YIELD_MS = 10_000;

/** Subagents a session keeps registered at most; only idle ones are evicted. */
export const MAX_REGISTERED_SUBAGENTS = 8;

/** How deep subagents nest: a subagent cannot start subagents. */
export const MAX_SUBAGENT_DEPTH = 1;

/** Messages a child buffers while nobody follows it and no host listens. */
export const SUBAGENT_MESSAGE_BUFFER = 4096;

/** Characters of undelivered answer text a child keeps (1 MiB; the oldest is dropped). */
export const SUBAGENT_TEXT_BUFFER = 1024 * 1024;

/** Thinking levels a subagent may be given. */
export const SUBAGENT_THINKING_LEVELS = ["low", "medium", "high", "xhigh", "max"] as const;

/**
 * The `description` parameter of the subagent tools (offered first; they set
 * `callDescription`, which lists it as required).
 */
export const descriptionArg: z.ZodOptional<z.ZodString> = z.string().describe(
  "One short sentence, in the user's language, saying what this call does and why; shown to the user while it runs. Give it first.",
).optional();

/** The `subagent_id` parameter of input_subagent and kill_subagent. */
export const subagentIdArg: z.ZodString = z.string().describe(
  "The subagent_id that run_subagent returned (subagent-…).",
);

/** The note of a subagent registered at the end of its window. */
export function subagentRunningNote(id: string, pendingApprovals = 0): string {
  const note =
    `[subagent running with subagent_id ${id}; use input_subagent to poll for its output, kill_subagent to stop it]`;
  return pendingApprovals > 0
    ? `${note}\n[subagent is waiting for approval of ${pendingApprovals} tool call(s); poll to review]`
    : note;
}

/** The note of a subagent started with `run_in_background`. */
export function subagentBackgroundNote(id: string): string {
  return `[subagent running in the background with subagent_id ${id}; its result will arrive as a message when it finishes, so there is no need to poll — input_subagent sends a follow-up once it is idle, kill_subagent stops it]`;
}

/** The note of a subagent that is idle after a poll. */
export function subagentIdleNote(id: string): string {
  return `[subagent idle with subagent_id ${id}; send a follow-up prompt to continue]`;
}

/** The note of a subagent whose task ended with an abort. */
export function subagentAbortedNote(reason: string): string {
  return `[subagent aborted: ${reason}]`;
}

/** The note of a subagent that finished without producing text. */
export const NO_TEXT_ANSWER_NOTE = "[subagent finished without a text answer]";

/** A validation or spawn failure of a subagent tool, as its output. */
export function subagentToolError(tool: string, message: string): string {
  return `[${tool} error: ${message}]`;
}
