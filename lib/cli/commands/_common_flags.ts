/**
 * Flags many commands take, declared once: the model pair and the project
 * and agent a command works in. A command whose help words one differently
 * spreads it with its own `help`.
 *
 * @module
 */
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../state/ids.ts";
import type { Flag } from "../args.ts";

/** `--provider <group>`. */
export const PROVIDER: Flag = {
  name: "provider",
  type: "string",
  value: "<group>",
  help: "model provider group (always together with --model-id)",
};
/** `--model-id <id>`. */
export const MODEL_ID: Flag = {
  name: "model-id",
  type: "string",
  value: "<id>",
  help: "model id (always together with --provider;\nneither: the project's default model)",
};
/** `--project-id <id>`. */
export const PROJECT_ID: Flag = {
  name: "project-id",
  type: "string",
  value: "<id>",
  help: `project (default: ${DEFAULT_PROJECT_ID})`,
};
/** `--agent-id <id>`. */
export const AGENT_ID: Flag = {
  name: "agent-id",
  type: "string",
  value: "<id>",
  help: `agent (default: ${DEFAULT_AGENT_ID})`,
};
/** `--agent-id` and `--project-id`: the agent a command works on. */
export const AGENT_TARGET: readonly Flag<unknown>[] = [AGENT_ID, PROJECT_ID];

/** `--json`: machine-readable output; each command words what it prints. */
export const JSON_OUTPUT: Flag<boolean> = {
  name: "json",
  type: "boolean",
  help: "print JSON",
};
