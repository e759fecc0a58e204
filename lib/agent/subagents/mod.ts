/**
 * Subagents and background work: the subagent tools,
 * the children registry of a session, and its restore from the traces after
 * a restart.
 *
 * @module
 */
export {
  MAX_REGISTERED_SUBAGENTS,
  MAX_SUBAGENT_DEPTH,
  NO_TEXT_ANSWER_NOTE,
  SUBAGENT_DEFAULT_YIELD_MS,
  SUBAGENT_MESSAGE_BUFFER,
  SUBAGENT_POLL_YIELD_MS,
  SUBAGENT_TEXT_BUFFER,
  SUBAGENT_THINKING_LEVELS,
  subagentAbortedNote,
  subagentBackgroundNote,
  subagentIdleNote,
  subagentRunningNote,
  subagentToolError,
} from "./definitions.ts";
export {
  type ChildRegistry,
  type ChildRegistryOptions,
  type ChildSpawner,
  type ChildSpawnRequest,
  createChildRegistry,
  type RunBinding,
  type SubagentInfo,
} from "./registry.ts";
export type { Child, ChildState, FollowEnd, TaskEnd } from "./_child.ts";
export {
  createRunSubagentTool,
  RUN_SUBAGENT_DEFINITION,
  runSubagentTool,
  withOrigin,
} from "./run_subagent.ts";
export {
  createInputSubagentTool,
  INPUT_SUBAGENT_DEFINITION,
  inputSubagentTool,
  RESUME_TASK_TEXT,
} from "./input_subagent.ts";
export {
  createKillSubagentTool,
  KILL_SUBAGENT_DEFINITION,
  killSubagentTool,
} from "./kill_subagent.ts";
export {
  SUBAGENT_TOOL_DEFINITIONS,
  SUBAGENT_TOOL_NAMES,
  SUBAGENT_TOOLS,
  subagentToolFactories,
} from "./tools.ts";
export type { SubagentToolContext } from "./registry.ts";
export { type ChildSessionOptions, createSpawner, type SpawnerDeps } from "./spawner.ts";
export { type BackgroundTask, backgroundTasks } from "./family.ts";
export {
  type ChildFacts,
  interruptedDetail,
  LOST_COMMAND_DETAIL,
  planRestore,
  restoreChildren,
  type RestoredChild,
  type RestorePlan,
  type RestoreSource,
} from "./restore.ts";
export {
  type CallFact,
  type ChildProgress,
  childProgress,
  type NoticeFact,
  noticeOf,
  type ParentFacts,
  parentFacts,
} from "./_facts.ts";
/** Parse the fields of a `[background_task_done]` block (for traces without `penguin_notice`). */
export { legacyNoticeFacts as parseNoticeBlock } from "../../trace/legacy_text_facts.ts";
