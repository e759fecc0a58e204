/**
 * The subagent tool definitions (reference §6.3, §6.6): run_subagent,
 * input_subagent and kill_subagent, with their limits and the notes their
 * outputs end with.
 *
 * @module
 */
import type { ToolDefinition } from "../../tools/mod.ts";

/** Default yield window of run_subagent and of an input_subagent that starts work (ms). */
export const SUBAGENT_DEFAULT_YIELD_MS = 300_000;

/** Default window of an empty input_subagent poll (ms). */
export const SUBAGENT_POLL_YIELD_MS = 10_000;

/** Subagents a session keeps registered at most (§6.6); only idle ones are evicted. */
export const MAX_REGISTERED_SUBAGENTS = 8;

/** How deep subagents nest: a subagent cannot start subagents (§10.5). */
export const MAX_SUBAGENT_DEPTH = 1;

/** Messages a child buffers while nobody follows it and no host listens (§6.6). */
export const SUBAGENT_MESSAGE_BUFFER = 4096;

/** Characters of undelivered answer text a child keeps (§6.6: 1 MiB; oldest dropped). */
export const SUBAGENT_TEXT_BUFFER = 1024 * 1024;

/** Thinking levels a subagent may be given. */
export const SUBAGENT_THINKING_LEVELS = ["low", "medium", "high", "xhigh", "max"] as const;

const DESCRIPTION = {
  type: "string",
  description:
    "One short sentence, in the user's language, saying what this call does and why; shown to the user while it runs. Give it first.",
};

const SUBAGENT_ID = {
  type: "string",
  description: "The subagent_id that run_subagent returned (subagent-…).",
};

/** The default run_subagent definition. */
export const RUN_SUBAGENT_DEFINITION: ToolDefinition = {
  name: "run_subagent",
  description:
    "Hand a self-contained task to a subagent: a fresh session with the same workspace, tools " +
    "and sandbox (it cannot start subagents itself). It sees nothing of this conversation, so " +
    "the prompt must carry every fact it needs and say what answer to return. Its final text " +
    "answer comes back as this tool's output. A subagent still working after yield_time_ms " +
    "keeps running under a subagent_id; with run_in_background it starts under one at once and " +
    "its result arrives as an automatic message when it finishes.",
  parameters: {
    type: "object",
    properties: {
      description: DESCRIPTION,
      prompt: {
        type: "string",
        description:
          "The whole task for the subagent: context, constraints, and the exact answer expected back.",
      },
      agent_id: {
        type: "string",
        description:
          "Run the subagent as another agent of this project (its own instructions, memory and vault). Default: this agent.",
      },
      model_id: {
        type: "string",
        description:
          "Model for the subagent, as the upstream model id; only together with provider. Omit both to use this session's model.",
      },
      provider: {
        type: "string",
        description: "The provider group of model_id; required whenever model_id is given.",
      },
      thinking_level: {
        type: "string",
        enum: [...SUBAGENT_THINKING_LEVELS],
        description:
          "Reasoning effort of the subagent. Default: this session's level. Lower it for mechanical work, raise it for hard analysis.",
      },
      yield_time_ms: {
        type: "number",
        description:
          `How long to wait for the subagent before returning, in ms (default ${SUBAGENT_DEFAULT_YIELD_MS}; ` +
          "at least 250; capped 1 s below the tool timeout). If it is still working then, you get " +
          "its output so far and a subagent_id, and it keeps working.",
      },
      run_in_background: {
        type: "boolean",
        description:
          "Return a subagent_id at once instead of waiting. Its result arrives as an automatic " +
          "message when it finishes, so there is no need to poll. Default false.",
      },
    },
    required: ["description", "prompt"],
  },
  permission: "rw",
  timeoutMs: 600_000,
  maxOutputLength: 16_000,
  callDescription: true,
};

/** The default input_subagent definition. */
export const INPUT_SUBAGENT_DEFINITION: ToolDefinition = {
  name: "input_subagent",
  description: "Talk to a subagent that run_subagent left running or idle (identified by its " +
    "subagent_id): poll it for new output and its status, or, once it is idle, give it a " +
    "follow-up task in the same session. A subagent interrupted by a restart is resumed from its " +
    "trace by this tool.",
  parameters: {
    type: "object",
    properties: {
      description: DESCRIPTION,
      subagent_id: SUBAGENT_ID,
      prompt: {
        type: "string",
        description:
          "A follow-up task, delivered as a new message in the subagent's session; only accepted " +
          "while it is idle. Empty or absent: send nothing, just poll.",
      },
      yield_time_ms: {
        type: "number",
        description:
          `How long to wait for output or completion before returning, in ms: default ${SUBAGENT_DEFAULT_YIELD_MS} ` +
          `when work starts, ${SUBAGENT_POLL_YIELD_MS} for an empty poll. At least 250; capped 1 s below the tool timeout.`,
      },
    },
    required: ["description", "subagent_id"],
  },
  permission: "rw",
  timeoutMs: 600_000,
  maxOutputLength: 16_000,
  callDescription: true,
};

/** The default kill_subagent definition. */
export const KILL_SUBAGENT_DEFINITION: ToolDefinition = {
  name: "kill_subagent",
  description:
    "Stop a subagent (identified by its subagent_id): its running task is aborted, tool calls " +
    "waiting for approval are denied, and it is removed. Returns the output you have not seen yet.",
  parameters: {
    type: "object",
    properties: { description: DESCRIPTION, subagent_id: SUBAGENT_ID },
    required: ["description", "subagent_id"],
  },
  permission: "rw",
  timeoutMs: 30_000,
  maxOutputLength: 16_000,
  callDescription: true,
};

/** The subagent definitions, in the order offered to the model (after kill_command, §6.3). */
export const SUBAGENT_TOOL_DEFINITIONS: readonly ToolDefinition[] = Object.freeze([
  RUN_SUBAGENT_DEFINITION,
  INPUT_SUBAGENT_DEFINITION,
  KILL_SUBAGENT_DEFINITION,
]);

/** The names of the subagent tools. */
export const SUBAGENT_TOOL_NAMES: readonly string[] = Object.freeze(
  SUBAGENT_TOOL_DEFINITIONS.map((d) => d.name),
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
