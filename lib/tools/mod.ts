/**
 * The tool layer: the tool contract, the central execution framing
 * (`executeTool`), workspace path confinement, the built-in file, command
 * and image tools, the per-session process registry with its background
 * notices, and the command policy evaluator.
 *
 * @module
 */
import { createEditFileTool, EDIT_FILE_DEFINITION } from "./edit_file.ts";
import { createExecCommandTool, EXEC_COMMAND_DEFINITION } from "./exec_command.ts";
import { createInputCommandTool, INPUT_COMMAND_DEFINITION } from "./input_command.ts";
import { createKillCommandTool, KILL_COMMAND_DEFINITION } from "./kill_command.ts";
import { createReadFileTool, READ_FILE_DEFINITION } from "./read_file.ts";
import { createReadImageTool, READ_IMAGE_DEFINITION } from "./read_image.ts";
import type { Tool, ToolDefinition, ToolFactory } from "./tool.ts";
import { createWriteFileTool, WRITE_FILE_DEFINITION } from "./write_file.ts";

export * from "./tool.ts";
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
export { createReadFileTool, READ_FILE_DEFINITION } from "./read_file.ts";
export { createWriteFileTool, WRITE_FILE_DEFINITION } from "./write_file.ts";
export { createEditFileTool, EDIT_FILE_DEFINITION } from "./edit_file.ts";
export {
  backgroundNote,
  createExecCommandTool,
  EXEC_COMMAND_DEFINITION,
  EXEC_DEFAULT_YIELD_MS,
  runningNote,
} from "./exec_command.ts";
export {
  createInputCommandTool,
  CTRL_C,
  INPUT_COMMAND_DEFINITION,
  INPUT_POLL_YIELD_MS,
  INPUT_WRITE_YIELD_MS,
  stillRunningNote,
} from "./input_command.ts";
export { createKillCommandTool, describeKill, KILL_COMMAND_DEFINITION } from "./kill_command.ts";
export { createReadImageTool, READ_IMAGE_DEFINITION } from "./read_image.ts";
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
export { clampYield, MIN_YIELD_MS } from "./_command_args.ts";
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
  noticeTail,
  taskLabel,
} from "./background_notice.ts";
export { DEFAULT_BUFFER_LIMIT, droppedMarker } from "./_output_buffer.ts";

/** The built-in factory table: only these names can be instantiated from config (§6.1). */
export const BUILTIN_TOOL_FACTORIES: Readonly<Record<string, ToolFactory>> = Object.freeze({
  read_file: createReadFileTool,
  write_file: createWriteFileTool,
  edit_file: createEditFileTool,
  exec_command: createExecCommandTool,
  input_command: createInputCommandTool,
  kill_command: createKillCommandTool,
  read_image: createReadImageTool,
});

/** The default built-in definitions, in the order offered to the model. */
export const DEFAULT_TOOL_DEFINITIONS: readonly ToolDefinition[] = Object.freeze([
  READ_FILE_DEFINITION,
  EDIT_FILE_DEFINITION,
  WRITE_FILE_DEFINITION,
  EXEC_COMMAND_DEFINITION,
  INPUT_COMMAND_DEFINITION,
  KILL_COMMAND_DEFINITION,
  READ_IMAGE_DEFINITION,
]);

/**
 * Instantiate the tools of `definitions` (default: the built-in list), keyed
 * by name. Names without a factory are dropped silently, as in the reference.
 */
export function builtinTools(
  definitions: readonly ToolDefinition[] = DEFAULT_TOOL_DEFINITIONS,
): Map<string, Tool> {
  const tools = new Map<string, Tool>();
  for (const def of definitions) {
    const factory = BUILTIN_TOOL_FACTORIES[def.name];
    if (factory && !tools.has(def.name)) tools.set(def.name, factory(def));
  }
  return tools;
}
