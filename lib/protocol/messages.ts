/**
 * Model message payloads: the seven complete messages (recorded in traces)
 * and the four streaming partials (never recorded).
 *
 * @module
 */
import type { Fidelity, Role, Sender, StopReason } from "./base.ts";

/** A complete text message, from the user or the assistant. */
export interface TextMessage {
  /** Payload discriminator. */
  type: "text";
  /** Who wrote it. */
  role: Role;
  /** The text. */
  text: string;
  /** Set on user-role texts the harness, a parent agent or a server wrote. */
  sender?: Sender;
  /** Opaque provider payload. */
  fidelity?: Fidelity;
  /** How the segment ended. */
  stop_reason: StopReason;
  /** On a harness text that reports the end of background work: which task, as data. */
  penguin_notice?: BackgroundNoticeFacts;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/**
 * Which background task a harness notice reports (penguin's additive
 * `penguin_notice` field of a `text`; PenguinHarness neither writes nor
 * reads it, and traces without it are read from the notice's wording).
 */
export interface BackgroundNoticeFacts {
  /** `command` (a background exec_command) or `subagent`. */
  kind: "command" | "subagent";
  /** `proc-<8hex>` or `subagent-<8>`. */
  id: string;
  /** How the task ended. */
  status: "completed" | "failed";
}

/** A complete thinking (reasoning) block from the assistant. */
export interface ThinkingMessage {
  /** Payload discriminator. */
  type: "thinking";
  /** Always the assistant. */
  role: "assistant";
  /** Reasoning text; may be empty when only `fidelity` carries it. */
  thinking: string;
  /** Opaque provider payload. */
  fidelity?: Fidelity;
  /** How the segment ended. */
  stop_reason: StopReason;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** Inline binary thinking data (base64). */
export interface InlineThinkingMessage {
  /** Payload discriminator. */
  type: "inline_thinking";
  /** Always the assistant. */
  role: "assistant";
  /** Base64 data. */
  data: string;
  /** MIME type of `data`. */
  mime_type: string;
  /** Opaque provider payload. */
  fidelity?: Fidelity;
  /** How the segment ended. */
  stop_reason: StopReason;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** A complete tool call; `arguments` is a JSON string. */
export interface ToolCallMessage {
  /** Payload discriminator. */
  type: "tool_call";
  /** Always the assistant. */
  role: "assistant";
  /** Tool name. */
  name: string;
  /** JSON-encoded arguments object. */
  arguments: string;
  /** Session-unique call id (`#n` suffix on collision). */
  tool_call_id: string;
  /** Opaque provider payload. */
  fidelity?: Fidelity;
  /** How the segment ended. */
  stop_reason: StopReason;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/**
 * What a command tool's output says about the process it started or
 * touched, as data (penguin's additive `penguin_process` field of a
 * `tool_call_output`; PenguinHarness neither writes nor reads it).
 */
export interface ToolProcessFacts {
  /** The command session id (`proc-<8hex>`). */
  id: string;
  /**
   * `running`: it outlived the call (input_command and kill_command reach it);
   * `exited`: it ended by itself; `killed`: penguin stopped it (an abort, the
   * end of a window it could not outlive, kill_command).
   */
  state: "running" | "exited" | "killed";
  /** Its exit code (128+N after signal N); null while it runs. */
  exit_code: number | null;
}

/**
 * What a run_subagent output says about the child it started, as data
 * (penguin's additive `penguin_subagent` field of a `tool_call_output`;
 * PenguinHarness neither writes nor reads it).
 */
export interface ToolSubagentFacts {
  /** The child's `subagent-<8>` id (the one input_subagent and kill_subagent take). */
  id: string;
  /** The child's session id. */
  session_id: string;
  /** `background` when started with run_in_background, else `foreground`. */
  kind: "foreground" | "background";
  /**
   * After the call: `running` or `idle` while it stays registered under `id`;
   * `ended` when the call answered for it (or stopped it) and it is gone.
   */
  state: "running" | "idle" | "ended";
  /** The tool call that spawned it (the `session_meta.parent.tool_call_id` of its trace). */
  parent_tool_call_id: string;
}

/** The output of one tool call, fed back to the model. */
export interface ToolCallOutputMessage {
  /** Payload discriminator. */
  type: "tool_call_output";
  /** Always the user side. */
  role: "user";
  /** Output text. */
  output: string;
  /** Images as data URLs, only when non-empty. */
  images?: string[];
  /** The call this answers. */
  tool_call_id: string;
  /** How the tool ended. */
  stop_reason: StopReason;
  /** The command process of the call (exec_command, input_command, kill_command). */
  penguin_process?: ToolProcessFacts;
  /** The child a run_subagent call started. */
  penguin_subagent?: ToolSubagentFacts;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** An image given by URL (http(s) or data URL). */
export interface ImageUrlMessage {
  /** Payload discriminator. */
  type: "image_url";
  /** Always the user side. */
  role: "user";
  /** An http(s) URL or a data URL. */
  image_url: string;
  /** How the segment ended. */
  stop_reason: StopReason;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** Inline binary data (base64) from either side. */
export interface InlineDataMessage {
  /** Payload discriminator. */
  type: "inline_data";
  /** Who sent it. */
  role: Role;
  /** Base64 data. */
  data: string;
  /** MIME type of `data`. */
  mime_type: string;
  /** Opaque provider payload. */
  fidelity?: Fidelity;
  /** How the segment ended. */
  stop_reason: StopReason;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** The seven complete model message payloads. */
export type CompleteMessage =
  | TextMessage
  | ThinkingMessage
  | InlineThinkingMessage
  | ToolCallMessage
  | ToolCallOutputMessage
  | ImageUrlMessage
  | InlineDataMessage;

// Streaming partials (never recorded)

/** Phase of a streaming fragment: `start → delta* → stop`. */
export type PartialEventType = "start" | "delta" | "stop";

/** A streaming text fragment. */
export interface PartialText {
  /** Payload discriminator. */
  type: "partial_text";
  /** Always the assistant. */
  role: "assistant";
  /** Fragment phase. */
  event_type: PartialEventType;
  /** The increment (empty on start and stop). */
  text: string;
  /** How the segment ended (meaningful on stop). */
  stop_reason: StopReason;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** A streaming thinking fragment. */
export interface PartialThinking {
  /** Payload discriminator. */
  type: "partial_thinking";
  /** Always the assistant. */
  role: "assistant";
  /** Fragment phase. */
  event_type: PartialEventType;
  /** The increment. */
  thinking: string;
  /** How the segment ended (meaningful on stop). */
  stop_reason: StopReason;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** A streaming tool-call fragment. */
export interface PartialToolCall {
  /** Payload discriminator. */
  type: "partial_tool_call";
  /** Always the assistant. */
  role: "assistant";
  /** Fragment phase. */
  event_type: PartialEventType;
  /** Tool name on start, empty afterwards. */
  name: string;
  /** Argument text increment. */
  arguments: string;
  /** The call id. */
  tool_call_id: string;
  /** How the segment ended (meaningful on stop). */
  stop_reason: StopReason;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** A streaming tool-output fragment. */
export interface PartialToolCallOutput {
  /** Payload discriminator. */
  type: "partial_tool_call_output";
  /** Always the user side. */
  role: "user";
  /** Fragment phase. */
  event_type: PartialEventType;
  /** Output increment. */
  output: string;
  /** Images, all in one delta. */
  images?: string[];
  /** The call id. */
  tool_call_id: string;
  /** How the tool ended (meaningful on stop). */
  stop_reason: StopReason;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** The four streaming partial payloads. */
export type PartialMessage =
  | PartialText
  | PartialThinking
  | PartialToolCall
  | PartialToolCallOutput;

/** Any `model_msg` payload: complete or partial. */
export type ModelPayload = CompleteMessage | PartialMessage;
