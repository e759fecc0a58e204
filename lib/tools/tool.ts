/**
 * The tool contract: what a tool declares ({@linkcode ToolDefinition}), what
 * it is given when it runs ({@linkcode ToolContext}) and what it yields
 * ({@linkcode ToolEvent}).
 *
 * A tool is a plain object with a definition and a `run` function returning
 * an async iterable of events. Tools never build protocol messages and never
 * frame their output: `executeTool` (environment.ts) emits the start, applies
 * truncation, appends the close-out notes, decides the final status and
 * builds the complete `tool_call_output`.
 *
 * The event stream, in short:
 * - `delta`: output text, streamed in order; the concatenation is the tool's
 *   content (a non-streaming tool yields one delta).
 * - `images`: data URLs attached to the output (accumulated; delivered only
 *   when the call ends `completed`).
 * - `forward`: an origin-tagged message from a child session, passed through
 *   untouched (not part of this tool's output).
 * - `result`: the tool's own verdict, at most once, last: `status` (default
 *   `completed`) and an optional `note` appended outside the truncation window
 *   (e.g. `[exit code: 2]`). A tool that explains a failure yields the
 *   explanation as a delta and then `{type: "result", status: "failed"}`.
 *
 * A tool may also throw: the message becomes `[tool error] <message>` and the
 * call ends `failed`. It must honour `ctx.signal` (user abort or timeout).
 *
 * @module
 */
import type { OmniMessage, StopReason, ToolProcessFacts, ToolSpec } from "../protocol/types.ts";
import type { GitAccess } from "../sandbox/git_guard.ts";
import type { SandboxPolicy } from "../sandbox/policy.ts";
import type { ProcessRegistry } from "./processes.ts";
import type { Secret } from "./secret_mask.ts";

/** `r` tools only read; `rw` tools may change the world. Drives the read-only approval mode. */
export type ToolPermission = "r" | "rw";

/** Which session models a tool is offered to (absent: every model). */
export type ToolModelFilter = "vision" | "text-only";

/** A JSON Schema object describing a tool's arguments. */
export interface JsonSchemaObject {
  /** Always `object` at the top level. */
  type: "object";
  /** The parameters, in the order the model sees them. */
  properties: Record<string, Record<string, unknown>>;
  /** Names of the required parameters. */
  required?: string[];
  /** Other schema keywords (e.g. `additionalProperties`). */
  [keyword: string]: unknown;
}

/** What a tool declares: its name, model-facing schema and execution limits (§6.1). */
export interface ToolDefinition {
  /** Tool name as the model calls it. */
  name: string;
  /** Description offered to the model. */
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: JsonSchemaObject;
  /** `r` or `rw`. */
  permission: ToolPermission;
  /** Wall-clock limit in ms; `<= 0` disables it. */
  timeoutMs: number;
  /** Output cap in characters (head kept); `<= 0` disables it. */
  maxOutputLength: number;
  /** When false, a `description` parameter is removed from the schema offered to the model. */
  callDescription: boolean;
  /** Offer only to vision or only to text-only session models. */
  forModel?: ToolModelFilter;
}

/** What a running tool is given. Paths are real (symlink-free) absolute paths. */
export interface ToolContext {
  /** Real path of the session's workspace. */
  workspace: string;
  /** Real path of the session scratchpad (`<agent>/scratchpad/<sid>`); may not exist yet. */
  scratchpad?: string;
  /** The running session. */
  sessionId: string;
  /** The call being executed. */
  toolCallId: string;
  /** Aborted on user abort or timeout; tools must stop promptly when it fires. */
  signal: AbortSignal;
  /**
   * The session's command registry (exec_command, input_command,
   * kill_command). Without it a command cannot outlive its call: it is
   * killed at the end of its window, and input_command/kill_command fail.
   */
  processes?: ProcessRegistry;
  /**
   * Sandbox policy for the commands the model runs. Default:
   * `createPolicy({workspace, scratchpad})` — workspace-write, no network,
   * home secrets hidden.
   */
  sandbox?: SandboxPolicy;
  /**
   * Git access of the file tools when `sandbox` is not at hand (inside a
   * confined worker); `sandbox.git` wins. Absent: the git directory is read-only.
   */
  git?: GitAccess;
  /** Vault values for child processes, layered over `sandbox.env.vault`. */
  vault?: Record<string, string>;
  /**
   * Other values to mask in every output (the configured API keys). Vault
   * values are always masked; see `secret_mask.ts` for the marker format.
   */
  secrets?: readonly Secret[];
}

/** One item a tool yields while it runs. */
export type ToolEvent =
  /** Output text, in order. */
  | { type: "delta"; text: string }
  /** Images (data URLs) attached to the output; kept only when the call completes. */
  | { type: "images"; images: string[] }
  /** An origin-tagged child-session message, passed through untouched. */
  | { type: "forward"; message: OmniMessage }
  /**
   * The tool's own verdict (last): status (default `completed`), a note kept
   * outside truncation, and the command process it concerns (recorded as the
   * output's `penguin_process`).
   */
  | { type: "result"; status?: StopReason; note?: string; process?: ToolProcessFacts };

/** A runnable tool. */
export interface Tool {
  /** Name, schema and limits. */
  readonly definition: ToolDefinition;
  /** Run with parsed arguments (a JSON object); yields {@linkcode ToolEvent}s. */
  run(args: Record<string, unknown>, ctx: ToolContext): AsyncIterable<ToolEvent>;
}

/** Builds a tool from a (possibly config-overridden) definition. */
export type ToolFactory = (definition: ToolDefinition) => Tool;

/** Default `timeoutMs` of a tool definition that sets none (§6.1). */
export const DEFAULT_TIMEOUT_MS = 120_000;

/** Default `maxOutputLength` of a tool definition that sets none (§6.1). */
export const DEFAULT_MAX_OUTPUT_LENGTH = 16_000;

/** Built-in defaults of §6.3 for the tools that exist: permission and limits. */
export const BUILTIN_TOOL_LIMITS: Readonly<
  Record<
    string,
    Readonly<
      Pick<ToolDefinition, "permission" | "timeoutMs" | "maxOutputLength" | "callDescription">
    >
  >
> = Object.freeze({
  read_file: {
    permission: "r",
    timeoutMs: 30_000,
    maxOutputLength: 64_000,
    callDescription: false,
  },
  write_file: {
    permission: "rw",
    timeoutMs: 30_000,
    maxOutputLength: 16_000,
    callDescription: false,
  },
  edit_file: {
    permission: "rw",
    timeoutMs: 30_000,
    maxOutputLength: 16_000,
    callDescription: false,
  },
  exec_command: {
    permission: "rw",
    timeoutMs: 120_000,
    maxOutputLength: 16_000,
    callDescription: true,
  },
  input_command: {
    permission: "rw",
    timeoutMs: 130_000,
    maxOutputLength: 16_000,
    callDescription: true,
  },
  kill_command: {
    permission: "rw",
    timeoutMs: 30_000,
    maxOutputLength: 16_000,
    callDescription: true,
  },
  read_image: {
    permission: "r",
    timeoutMs: 60_000,
    maxOutputLength: 16_000,
    callDescription: false,
  },
});

/**
 * The `{name, description, parameters}` offered to the model. With
 * `callDescription: false` a `description` parameter and its `required` entry
 * are removed (on a copy; the definition is not changed).
 */
export function toolSpec(definition: ToolDefinition): ToolSpec {
  let parameters = definition.parameters;
  if (!definition.callDescription && "description" in parameters.properties) {
    const { description: _dropped, ...properties } = parameters.properties;
    parameters = { ...parameters, properties };
    if (parameters.required) {
      parameters.required = parameters.required.filter((n) => n !== "description");
    }
  }
  return { name: definition.name, description: definition.description, parameters };
}
