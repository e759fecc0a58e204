/**
 * The tool contract: what a tool declares ({@linkcode ToolDefinition}), what
 * it is given when it runs ({@linkcode ToolCallContext}) and what it yields
 * ({@linkcode ToolEvent}).
 *
 * A tool is a plain object with a definition and a `run` function returning
 * an async iterable of events; `defineTool()` (define.ts) builds one from a
 * single declaration. Tools never build protocol messages and never
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
import type {
  OmniMessage,
  StopReason,
  ToolProcessFacts,
  ToolSpec,
  ToolSubagentFacts,
} from "../protocol/types.ts";
import type { ToolPreviewFn } from "../display/tool_preview.ts";
import type { GitAccess } from "../sandbox/git_guard.ts";
import type { ExecTarget } from "../sandbox/git_config_guard.ts";
import type { SandboxPolicy } from "../sandbox/policy.ts";
import type { ProtectedFileId } from "../sandbox/protected_ids.ts";
import type { StartupFacts } from "./_startup_refusal.ts";

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

/** What a tool declares: its name, model-facing schema and execution limits. */
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
  /**
   * Output cap in characters (head kept); `<= 0` lifts it. The output held
   * never passes `HELD_OUTPUT_LIMIT` (8 Mi characters, lib/tools/environment.ts)
   * either way.
   */
  maxOutputLength: number;
  /** When false, a `description` parameter is removed from the schema offered to the model. */
  callDescription: boolean;
  /** Offer only to vision or only to text-only session models. */
  forModel?: ToolModelFilter;
}

/**
 * What every tool call is given. Each tool declares the context it needs on
 * top of this (e.g. {@linkcode FileToolContext}, or `CommandToolContext` in
 * `command_context.ts`); the session passes the union, `ToolContext`
 * (`context.ts`).
 */
export interface ToolCallContext {
  /** The running session. */
  sessionId: string;
  /** The call being executed. */
  toolCallId: string;
  /** Aborted on user abort or timeout; tools must stop promptly when it fires. */
  signal: AbortSignal;
  /**
   * The model response the call belongs to, the same for all its calls: a
   * tool host bounds the images they return together before reading them
   * (`FileToolContext.claimImage`).
   */
  responseId?: string;
}

/** What the file tools are given. Paths are real (symlink-free) absolute paths. */
export interface FileToolContext extends ToolCallContext {
  /** Real path of the session's workspace. */
  workspace: string;
  /** Real path of the session scratchpad (`<agent>/scratchpad/<sid>`); may not exist yet. */
  scratchpad?: string | undefined;
  /**
   * Directories the file tools may read and never change (the agent's
   * installed skills); missing ones are skipped.
   */
  readOnlyRoots?: string[];
  /**
   * The command sandbox: its `mode` (a read-only sandbox refuses writes),
   * its git access (`sandbox.git`) and its `network` (off: penguin fetches no
   * URL for the model either).
   */
  sandbox?: Pick<SandboxPolicy, "mode" | "git" | "revealWritable"> & { network?: boolean };
  /**
   * More real directories the file tools may read and write when `sandbox`
   * is not at hand (inside a confined worker): the sandbox's
   * `revealWritable` (the agent's memory and shared_env directories). `sandbox.revealWritable` wins.
   */
  revealWritable?: readonly string[];
  /**
   * Git access of the file tools when `sandbox` is not at hand (inside a
   * confined worker); `sandbox.git` wins. Absent: the git directory is read-only.
   */
  git?: GitAccess;
  /**
   * What git's configuration makes read-only (`lib/sandbox/git_config_guard.ts`),
   * resolved by the host for a confined worker, which cannot read the user's
   * global or system git configuration; added to what the worker finds itself.
   */
  gitTargets?: ExecTarget[];
  /**
   * Other penguin processes' run directories (`PENGUIN_RUN_DIR`), which the
   * file tools refuse; found by the host for a confined worker, which
   * cannot read their list. Absent: looked up where the tool runs.
   */
  runDirs?: string[];
  /**
   * The files penguin protects outside the roots that have other names (hard
   * links), by device and inode (`lib/sandbox/protected_ids.ts`): resolved by
   * the host for a confined worker, which cannot read the home. Absent:
   * looked up where the tool runs.
   */
  protectedFiles?: ProtectedFileId[];
  /**
   * What the home's startup files source or name, and where each leads
   * (`lib/tools/_startup_refusal.ts`): found by the host for a confined
   * worker, which cannot read the home. Absent: looked up where the tool runs.
   */
  startupFacts?: StartupFacts;
  /**
   * Hold `bytes` of file memory for the rest of the call (replacing what the
   * call held), waiting while other calls of the tool host hold the rest
   * (`lib/tools/worker/_memory_budget.ts`); `false` when the call was aborted
   * first. Absent outside a worker pool: nothing to wait for.
   */
  holdMemory?: (bytes: number) => Promise<boolean>;
  /**
   * Claim `bytes` of image data from what the calls of the call's model
   * response (`responseId`) may return together
   * (`RESPONSE_IMAGES_MAX_BYTES`, lib/protocol/image_data.ts) and what the
   * process's conversations may hold (`PROCESS_IMAGES_MAX_BYTES`): the bound
   * it would pass when it would, and the image is not read. `processOnly`:
   * image data held meanwhile that never reaches the conversation (a
   * describe request in flight), held against the process's bound alone.
   * Absent: `executeTool` bounds the images as they come.
   */
  claimImage?: (bytes: number, processOnly?: boolean) => Promise<ImageClaim>;
}

/**
 * The answer to an image claim: granted, or the bound it would pass: what the images of the
 * call's response may be together, or what the process's conversations may hold together.
 */
export type ImageClaim = true | "response" | "process";

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
   * outside truncation, the command process it concerns (recorded as the
   * output's `penguin_process`) and the subagent it started (`penguin_subagent`).
   */
  | {
    type: "result";
    status?: StopReason;
    note?: string;
    process?: ToolProcessFacts;
    subagent?: ToolSubagentFacts;
  };

/** A runnable tool, run with a context of type `C`. */
export interface Tool<C extends ToolCallContext = ToolCallContext> {
  /** Name, schema and limits. */
  readonly definition: ToolDefinition;
  /** Run with parsed arguments (a JSON object); yields {@linkcode ToolEvent}s. */
  run(args: Record<string, unknown>, ctx: C): AsyncIterable<ToolEvent>;
  /** The permission of one call with these arguments (absent: `definition.permission`). */
  permissionFor?(args: Record<string, unknown>): ToolPermission;
  /**
   * Why these arguments would fail validation (the explanation the call's
   * output would carry), or null when they fit. Checked before a call is
   * put to a person: an invalid call is never asked about.
   */
  checkArgs?(args: Record<string, unknown>): string | null;
  /**
   * How renderers show a call (e.g. `exec_command <- $ ls -la`,
   * `read_file …/src/main.ts`), from arguments that may still be streaming;
   * absent: the generic `<name> <arguments on one line>`.
   */
  preview?: ToolPreviewFn;
}

/** Builds a tool from a (possibly config-overridden) definition. */
export type ToolFactory<C extends ToolCallContext = ToolCallContext> = (
  definition: ToolDefinition,
) => Tool<C>;

/** Default `timeoutMs` of a tool definition that sets none. */
export const DEFAULT_TIMEOUT_MS = 120_000;

/** Default `maxOutputLength` of a tool definition that sets none. */
export const DEFAULT_MAX_OUTPUT_LENGTH = 16_000;

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
