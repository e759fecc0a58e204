/**
 * What the command tools are given: input_command and kill_command only
 * the session's command registry; exec_command also the file tools' context,
 * the sandbox policy and the secrets to keep out of the output.
 *
 * @module
 */
import type { SandboxPolicy } from "../sandbox/policy.ts";
import type { ProcessRegistry } from "./processes.ts";
import type { Secret } from "./secret_mask.ts";
import type { FileToolContext, ToolCallContext } from "./tool.ts";

/** What input_command and kill_command are given: the call and the command registry. */
export interface ProcessToolContext extends ToolCallContext {
  /**
   * The session's command registry. Without it a command cannot outlive its
   * call: it is killed at the end of its window, and input_command and
   * kill_command fail.
   */
  processes?: ProcessRegistry;
}

/** What exec_command is given (the union of the command tools' contexts). */
export interface CommandToolContext extends Omit<FileToolContext, "sandbox">, ProcessToolContext {
  /**
   * Sandbox policy for the commands the model runs. Default:
   * `createPolicy({workspace, scratchpad})`: workspace-write, no network,
   * home secrets hidden.
   */
  sandbox?: SandboxPolicy;
  /** Vault values for child processes, layered over `sandbox.env.vault`. */
  vault?: Record<string, string>;
  /**
   * Other values to mask in every output (the configured API keys). Vault
   * values are always masked; see `secret_mask.ts` for the marker format.
   */
  secrets?: readonly Secret[];
}
