/**
 * `event_msg` payloads: request bracketing, usage, approvals, aborts,
 * compaction, subagent pointers, tool lists, MCP connects and goal ends.
 *
 * @module
 */
import type { StopReason } from "./base.ts";

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
  /**
   * Milliseconds from request_begin to the first streamed message (text,
   * thinking or tool call fragment); absent when none came. A penguin
   * addition.
   */
  first_token_ms?: number;
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
  /** Why a call was not allowed (penguin extension; absent on `allow`). */
  reason?: string;
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

/** Why a goal ended `aborted`: its round cap, an interruption, a failed round, a round at max turns. */
export type GoalAbortReason = "round_cap" | "interrupted" | "round_failed" | "max_turns";

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
  /** Why an `aborted` goal ended (absent in traces written before it was recorded). */
  reason?: GoalAbortReason;
  /** The round cap, with reason `round_cap`. */
  max_rounds?: number;
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/**
 * A resumed session continues in another workspace because the recorded one
 * is gone, or the first resume of an imported session placed it (penguin's
 * own event type; the reference has none for this). From this record on,
 * commands run in `to`; a later resume starts there.
 */
export interface WorkspaceMovedEvent {
  /** Payload discriminator. */
  type: "workspace_moved";
  /** The workspace recorded so far (no longer exists). */
  from: string;
  /** The workspace the session continues in (absolute, real path). */
  to: string;
  /**
   * Additive: `"imported"` when the first resume of an imported session
   * placed it (`from` may still exist, and may equal `to`).
   */
  reason?: "imported";
  /** Unknown fields are preserved. */
  [extra: string]: unknown;
}

/**
 * A resumed session continues on another model pair, chosen explicitly
 * (`--provider`/`--model-id`; penguin's own event type: the reference
 * switches models by starting a new session). From this record on, requests
 * go to `provider`/`model_id` and their tokens are theirs; a later resume
 * continues on this pair.
 */
export interface ModelSwitchedEvent {
  /** Payload discriminator. */
  type: "model_switched";
  /** The provider the session continues on. */
  provider: string;
  /** The model id the session continues on. */
  model_id: string;
  /** The provider used so far. */
  previous_provider: string;
  /** The model id used so far. */
  previous_model_id: string;
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
  | GoalFinishedEvent
  | WorkspaceMovedEvent
  | ModelSwitchedEvent;
