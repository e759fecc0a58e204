/**
 * The tool layer: the tool contract, the central execution framing
 * (`executeTool`), workspace path confinement, the built-in file, command
 * and image tools, the per-session process registry with its background
 * notices, and the command policy evaluator.
 *
 * @module
 */
export * from "./tool.ts";
export type { ToolContext } from "./context.ts";
export type { CommandToolContext, ProcessToolContext } from "./command_context.ts";
export {
  ANY_ARGS,
  argsJsonSchema,
  type DefinedTool,
  defineTool,
  type ToolDeclaration,
} from "./define.ts";
/** Pieces for a tool's `preview` (how renderers show its calls). */
export {
  filePreview,
  inputPreview,
  type PreviewInput,
  type PreviewPart,
  readField,
  shortPath,
  toolCallPreview,
  type ToolPreviewFn,
  type ToolPreviews,
} from "../display/tool_preview.ts";
export {
  type OpenedToolSource,
  TOOL_NAME_PATTERN,
  type ToolSource,
  toolSource,
  type ToolSourceContext,
} from "./source.ts";
export {
  ABORTED_NOTE,
  describeArgumentsProblem,
  type ExecuteOptions,
  executeTool,
  type ExecutionContext,
  type ForwardedMessage,
  NO_OUTPUT,
  partialToolOutput,
  secretsOf,
  type ToolExecutionItem,
} from "./environment.ts";
export {
  createSecretMasker,
  maskSecrets,
  MIN_SECRET_LENGTH,
  type Secret,
  type SecretKind,
  secretMarker,
  type SecretMasker,
  vaultSecrets,
} from "./secret_mask.ts";
export {
  isInside,
  type PathResolution,
  type PathRoots,
  realPathOf,
  type ResolvedPath,
  resolveWorkspacePath,
  SECRET_BASENAMES,
} from "./workspace_path.ts";
export {
  type CommandPolicy,
  type CommandPolicyRule,
  commandVariants,
  denialOutput,
  DENIED_BY_POLICY,
  DENIED_BY_USER,
  effectivePolicy,
  matchCommand,
  type PolicyVerdict,
  policyVerdict,
} from "./command_policy.ts";
export { createReadFileTool, READ_FILE_DEFINITION, readFileTool } from "./read_file.ts";
export { createWriteFileTool, WRITE_FILE_DEFINITION, writeFileTool } from "./write_file.ts";
export { createEditFileTool, EDIT_FILE_DEFINITION, editFileTool } from "./edit_file.ts";
export {
  backgroundNote,
  createExecCommandTool,
  EXEC_COMMAND_DEFINITION,
  EXEC_DEFAULT_YIELD_MS,
  execCommandTool,
  runningNote,
} from "./exec_command.ts";
export {
  createInputCommandTool,
  CTRL_C,
  INPUT_COMMAND_DEFINITION,
  INPUT_POLL_YIELD_MS,
  INPUT_WRITE_YIELD_MS,
  inputCommandTool,
  stillRunningNote,
} from "./input_command.ts";
export {
  createKillCommandTool,
  describeKill,
  KILL_COMMAND_DEFINITION,
  killCommandTool,
} from "./kill_command.ts";
export { createReadImageTool, READ_IMAGE_DEFINITION, readImageTool } from "./read_image.ts";
export {
  createDescribeImageTool,
  DEFAULT_DESCRIBE_PROMPT,
  DESCRIBE_IDLE_TIMEOUT_MS,
  DESCRIBE_IMAGE_DEFINITION,
  DESCRIBE_MAX_TOKENS,
  type DescribeFailure,
  type DescribeImageDeps,
  describeImageTool,
  modelDescriber,
  type VisionDescriber,
} from "./describe_image.ts";
export {
  formatBytes,
  imageDataUrl,
  type ImageLoad,
  type ImageMime,
  type LoadedImage,
  loadImage,
  MAX_IMAGE_BYTES,
  sniffImage,
} from "./_image_source.ts";
export { clampYield, MIN_YIELD_MS } from "./yield_window.ts";
export {
  type CommandSession,
  describeExit,
  exitVerdict,
  type FollowEnd,
  KILL_GRACE_MS,
  newProcessId,
  POST_EXIT_DRAIN_MS,
  startCommand,
  type StartCommandOptions,
} from "./command_session.ts";
export {
  createProcessRegistry,
  DEFAULT_IDLE_TTL_MS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SWEEP_INTERVAL_MS,
  type ProcessRegistry,
  type ProcessRegistryOptions,
} from "./processes.ts";
export {
  AUTOMATIC_NOTICE_SENTENCE,
  type BackgroundNotice,
  type BackgroundTaskKind,
  formatBackgroundNotice,
  NOTICE_TAIL_CHARS,
  type NoticeInput,
  noticeMessage,
  noticeTail,
  taskLabel,
} from "./background_notice.ts";
export { DEFAULT_BUFFER_LIMIT, droppedMarker } from "./_output_buffer.ts";

export { BUILTIN_TOOLS } from "./builtin.ts";

export {
  BUILTIN_TOOL_FACTORIES,
  BUILTIN_TOOL_LIMITS,
  builtinTools,
  DEFAULT_TOOL_DEFINITIONS,
} from "./builtin_table.ts";
