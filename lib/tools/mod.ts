/**
 * The tool layer: the tool contract, the central execution framing
 * (`executeTool`), workspace path confinement, the built-in file tools and
 * the command policy evaluator.
 *
 * @module
 */
import { createEditFileTool, EDIT_FILE_DEFINITION } from "./edit_file.ts";
import { createReadFileTool, READ_FILE_DEFINITION } from "./read_file.ts";
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
  type ToolExecutionItem,
} from "./environment.ts";
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

/** The built-in factory table: only these names can be instantiated from config (§6.1). */
export const BUILTIN_TOOL_FACTORIES: Readonly<Record<string, ToolFactory>> = Object.freeze({
  read_file: createReadFileTool,
  write_file: createWriteFileTool,
  edit_file: createEditFileTool,
});

/** The default built-in definitions, in the order offered to the model. */
export const DEFAULT_TOOL_DEFINITIONS: readonly ToolDefinition[] = Object.freeze([
  READ_FILE_DEFINITION,
  EDIT_FILE_DEFINITION,
  WRITE_FILE_DEFINITION,
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
