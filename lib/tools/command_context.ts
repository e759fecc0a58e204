/**
 * What the command tools (exec_command, input_command, kill_command) are
 * given: the file tools' context plus the session's command registry, its
 * sandbox policy and the secrets to keep out of the output.
 *
 * @module
 */
import type { SandboxPolicy } from "../sandbox/policy.ts";
import type { ProcessRegistry } from "./processes.ts";
import type { Secret } from "./secret_mask.ts";
import type { FileToolContext } from "./tool.ts";

/** The context of a command tool call. */
export interface CommandToolContext extends Omit<FileToolContext, "sandbox"> {
  /**
   * The session's command registry. Without it a command cannot outlive its
   * call: it is killed at the end of its window, and input_command and
   * kill_command fail.
   */
  processes?: ProcessRegistry;
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
