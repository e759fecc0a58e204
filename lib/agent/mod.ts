/**
 * The agent loop: agents and live sessions, system prompt assembly, the turn
 * engine with retries, carry-over and steering, and tool-call approval.
 *
 * @module
 */
export {
  type Agent,
  type AgentOptions,
  createAgent,
  type RecordedSession,
  type RecordedSessionOptions,
  type SessionOptions,
} from "./agent.ts";
export {
  openSession,
  type RunOptions,
  type Session,
  type SessionParts,
  type SessionUsage,
} from "./session.ts";
export {
  type AfterTurn,
  type CheckpointInfo,
  type CheckpointVerdict,
  createEngine,
  emptyEngineState,
  type Engine,
  type EngineDeps,
  type EngineRequest,
  type EngineRunOptions,
  type EngineSettings,
  type EngineState,
  exhaustionReason,
} from "./engine.ts";
export { type RunOutcome, type RunOutcomeKind, trackOutcome } from "./outcome.ts";
export {
  continueGoal,
  DEFAULT_MAX_ROUNDS,
  type GoalLimits,
  type GoalPlan,
  type GoalProgress,
  goalProgressOf,
  type GoalResult,
  goalRoundOf,
  goalTokenDelta,
  runGoal,
  startGoal,
} from "./goal.ts";
export { engineStateOf, type OpenRecorded, type ResumeOptions, resumeRecorded } from "./resume.ts";
export {
  type Compactability,
  COMPACTION_TOOL_ERROR,
  type CompactionConfig,
  type CompactionResult,
  type CompactionSettings,
  compactionSettings,
  compactionTrigger,
  type Compactor,
  type CompactorDeps,
  CONTEXT_HEADROOM,
  createCompactor,
  DEFAULT_CONTEXT_WINDOW,
} from "./compaction.ts";
export { runTurn, type ToolExecutor, type TurnContext, type TurnResult } from "./turn.ts";
export { buildCarryOver, type TurnProducts, withRetriedTurns } from "./carry_over.ts";
export {
  APPROVAL_MODES,
  type ApprovalAnswer,
  type ApprovalMode,
  type ApprovalVerdict,
  type ApproveFn,
  approverForMode,
  type ApproverOptions,
  type AskFn,
  decide,
  DENIAL_REASONS,
  parseApprovalMode,
  verdictOf,
  withCommandPolicy,
} from "./approval.ts";
export {
  assembleSystemPrompt,
  osVersion,
  platformName,
  type PromptSections,
  type PromptVars,
  shellName,
} from "./prompt.ts";
export {
  EMPTY_MEMORY_INDEX,
  memoryIndexText,
  prepareMemory,
  renderPromptSections,
  type SectionInputs,
  workspaceMemoryKey,
} from "./prompt_sections.ts";
export {
  type BuiltinSourceOptions,
  builtinToolSource,
  openToolset,
  resolveToolDefinitions,
  type Toolset,
} from "./toolset.ts";
export { builtinToolPreviews } from "./tool_previews.ts";
export {
  driveTask,
  type GoalStart,
  runTask,
  type RunTaskIO,
  type RunTaskOptions,
  type RunTaskOutcome,
} from "./run_task.ts";
export {
  type OpenTaskOptions,
  openTaskSession,
  taskRunOptions,
  type TaskSessionOptions,
  type TaskTelemetry,
} from "./task_session.ts";
export {
  applyPolicyFile,
  confinement,
  effectivePolicy as effectiveWorkspacePolicy,
  type PolicyContext,
  type PolicyOptions,
} from "./workspace_policy.ts";
export * from "./markers.ts";
export * as subagents from "./subagents/mod.ts";
export type { BackgroundTask } from "./subagents/family.ts";
