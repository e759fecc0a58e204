/**
 * OmniMessage protocol types: the envelope every stream event and every trace
 * record shares, and each payload it can carry.
 *
 * The protocol is PenguinHarness-compatible: field names and value sets are
 * exactly those of its traces, so a trace moves between the two unchanged.
 * Every object type is open: unknown extra fields are preserved by readers.
 *
 * @module
 */

/** How a message segment, a request or a tool call ended. Six values. */
export type StopReason =
  | "completed"
  | "failed"
  | "aborted"
  | "timeout"
  | "malformed"
  | "auth";

/** Every {@linkcode StopReason}, in protocol order. */
export const STOP_REASONS: readonly StopReason[] = [
  "completed",
  "failed",
  "aborted",
  "timeout",
  "malformed",
  "auth",
];

/**
 * Opaque provider payload (thinking signatures, encrypted reasoning, phase
 * labels, reasoning field names). Stored and replayed verbatim; never edited.
 */
export type Fidelity = Record<string, unknown>;

/** Who sent a user-role text when it was not the human user. */
export type Sender = "parent_agent" | "harness" | "server";

/** The role of a model message. */
export type Role = "user" | "assistant";

// ---------------------------------------------------------------------------
// Complete model messages (recorded in traces)
// ---------------------------------------------------------------------------

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
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
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

// ---------------------------------------------------------------------------
// Streaming partials (never recorded)
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

/** Token counts of one request or of a whole session. */
export interface TokenCounts {
  /** Input tokens served from the provider cache. */
  cache_read: number;
  /** Uncached input tokens. */
  cache_write: number;
  /** Output tokens, reasoning included. */
  output: number;
  /** Sum of the three. */
  total: number;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** Opens one LLM request. */
export interface RequestBeginEvent {
  /** Payload discriminator. */
  type: "request_begin";
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** Closes one LLM request; `completed` commits the round. */
export interface RequestEndEvent {
  /** Payload discriminator. */
  type: "request_end";
  /** Outcome of the request. */
  status: StopReason;
  /** Error detail, only on non-completed requests. */
  error_message?: string;
  /** 1-based attempt ordinal, stamped on failures and on success after a retry. */
  attempt?: number;
  /** Wait before the next attempt, only when the engine will retry. */
  retry_in_ms?: number;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** Token usage of a completed request, and the session running total. */
export interface TokenUsageEvent {
  /** Payload discriminator. */
  type: "token_usage";
  /** Cumulative over the session. */
  session: TokenCounts;
  /** This request. */
  request: TokenCounts;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** An approval verdict. */
export type ApprovalDecision = "allow" | "deny" | "forbidden";

/** The verdict on one tool call, recorded right after the call. */
export interface ApprovalDecisionEvent {
  /** Payload discriminator. */
  type: "approval_decision";
  /** The verdict. */
  decision: ApprovalDecision;
  /** The call judged. */
  tool_call_id: string;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** A task was aborted. */
export interface AbortEvent {
  /** Payload discriminator. */
  type: "abort";
  /** Why. */
  reason?: string | null;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** What triggered a compaction. */
export type CompactionReason = "context" | "turns" | "manual";
/** How a compaction treats the old context. */
export type CompactionMode = "summarize" | "discard";
/** How a compaction or an MCP connect ended. */
export type PhaseStatus = "completed" | "failed" | "aborted";

/** A compaction started. */
export interface CompactionBeginEvent {
  /** Payload discriminator. */
  type: "compaction_begin";
  /** Trigger. */
  reason: CompactionReason;
  /** Mode. */
  mode: CompactionMode;
  /** Context size (last request total) when it started. */
  context: number;
  /** Session turns when it started. */
  turns: number;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** A compaction ended. */
export interface CompactionEndEvent {
  /** Payload discriminator. */
  type: "compaction_end";
  /** Trigger. */
  reason: CompactionReason;
  /** Mode. */
  mode: CompactionMode;
  /** Outcome. */
  status: PhaseStatus;
  /** Attempts made. */
  attempt?: number;
  /** Error detail on failure. */
  error_message?: string;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** Points at a direct child session whose messages live in its own trace. */
export interface SubagentEvent {
  /** Payload discriminator. */
  type: "subagent";
  /** The child session id. */
  session_id: string;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** One tool as offered to the model. */
export interface ToolSpec {
  /** Tool name. */
  name: string;
  /** Description given to the model. */
  description: string;
  /** JSON Schema of the arguments. */
  parameters?: unknown;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** The tool list offered to the model for this context. */
export interface ToolListReadyEvent {
  /** Payload discriminator. */
  type: "tool_list_ready";
  /** The tools. */
  tools: ToolSpec[];
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** MCP servers are being connected. */
export interface McpConnectBeginEvent {
  /** Payload discriminator. */
  type: "mcp_connect_begin";
  /** Server names. */
  servers: string[];
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** Result of connecting one MCP server. */
export interface McpConnectResult {
  /** Server name. */
  server: string;
  /** Transport used. */
  transport: "stdio" | "http" | "sse";
  /** Outcome. */
  status: PhaseStatus;
  /** Time taken. */
  duration_ms: number;
  /** Tools the server offered. */
  tools?: string[];
  /** Error detail. */
  error?: string;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** MCP servers finished connecting. */
export interface McpConnectEndEvent {
  /** Payload discriminator. */
  type: "mcp_connect_end";
  /** Overall outcome. */
  status: PhaseStatus;
  /** Per server (empty when aborted). */
  results: McpConnectResult[];
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** How a goal run ended. */
export type GoalOutcome = "complete" | "blocked" | "budget_limited" | "aborted";

/** A goal run finished. */
export interface GoalFinishedEvent {
  /** Payload discriminator. */
  type: "goal_finished";
  /** Outcome. */
  outcome: GoalOutcome;
  /** Rounds run. */
  rounds: number;
  /** Tokens used. */
  tokens_used: number;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** Every `event_msg` payload. */
export type EventPayload =
  | RequestBeginEvent
  | RequestEndEvent
  | TokenUsageEvent
  | ApprovalDecisionEvent
  | AbortEvent
  | CompactionBeginEvent
  | CompactionEndEvent
  | SubagentEvent
  | ToolListReadyEvent
  | McpConnectBeginEvent
  | McpConnectEndEvent
  | GoalFinishedEvent;

// ---------------------------------------------------------------------------
// Session meta and envelope
// ---------------------------------------------------------------------------

/** Where a fork or clone was cut from (a penguin addition; additive field). */
export interface Lineage {
  /** The session this one was cut from. */
  parent_session_id: string;
  /** The index (`_NNN`) of the parent's trace file. */
  trace_index: number;
  /** 1-based line in that file after which the history was cut. */
  line: number;
  /** `fork` or `clone`. */
  kind: "fork" | "clone";
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** The head of every trace file: the session's fixed configuration. */
export interface SessionMeta {
  /** `session-YYYY-MM-DD-HH-mm-ss-<8hex>`. */
  session_id: string;
  /** Provider group of the model pair. */
  provider: string;
  /** Model id of the model pair. */
  model_id: string;
  /** Context window in tokens, or `"unknown"`. */
  model_context_window: number | "unknown";
  /** The fully assembled system prompt. */
  system_prompt: string;
  /** Absolute path of the Agent State directory. */
  agent_state: string;
  /** Absolute path of the Workspace. */
  workspace: string;
  /** Absent for user-created sessions. */
  source?: "subagent" | "schedule";
  /** Unknown fields (e.g. lineage, parent pointers) are preserved. */
  [extra: string]: unknown;
}

/** The three envelope kinds. */
export type EnvelopeType = "session_meta" | "model_msg" | "event_msg";

/** Fields shared by every envelope. */
export interface EnvelopeBase {
  /** ISO-8601 UTC creation time. */
  timestamp: string;
  /** Child session ids, outer to inner; absent for the main session. */
  origin?: string[];
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/** A `session_meta` envelope. */
export interface SessionMetaEnvelope extends EnvelopeBase {
  /** Envelope kind. */
  type: "session_meta";
  /** The meta payload. */
  payload: SessionMeta;
}

/** A `model_msg` envelope (complete or partial). */
export interface ModelMsgEnvelope<P extends ModelPayload = ModelPayload> extends EnvelopeBase {
  /** Envelope kind. */
  type: "model_msg";
  /** The message payload. */
  payload: P;
}

/** An `event_msg` envelope. */
export interface EventMsgEnvelope<P extends EventPayload = EventPayload> extends EnvelopeBase {
  /** Envelope kind. */
  type: "event_msg";
  /** The event payload. */
  payload: P;
}

/** One OmniMessage: a stream event or a trace record. */
export type OmniMessage = SessionMetaEnvelope | ModelMsgEnvelope | EventMsgEnvelope;
