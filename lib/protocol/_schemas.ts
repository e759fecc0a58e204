// Zod schemas of every OmniMessage shape. Private: callers use validate.ts,
// which reports problems in words and never rewrites the value it checks.
import { z } from "zod";
import { STOP_REASONS } from "./types.ts";

const stopReason = z.enum(STOP_REASONS as [string, ...string[]]);
const fidelity = z.record(z.string(), z.unknown());
const role = z.enum(["user", "assistant"]);
const partialEvent = z.enum(["start", "delta", "stop"]);
const phaseStatus = z.enum(["completed", "failed", "aborted"]);
const compactionReason = z.enum(["context", "turns", "manual"]);
const compactionMode = z.enum(["summarize", "discard"]);
const count = z.number().int().nonnegative();

const backgroundNoticeFacts = z.looseObject({
  kind: z.enum(["command", "subagent"]),
  id: z.string(),
  status: z.enum(["completed", "failed"]),
});
const text = z.looseObject({
  type: z.literal("text"),
  role,
  text: z.string(),
  sender: z.enum(["parent_agent", "harness", "server"]).optional(),
  fidelity: fidelity.optional(),
  stop_reason: stopReason,
  penguin_notice: backgroundNoticeFacts.optional(),
});
const thinking = z.looseObject({
  type: z.literal("thinking"),
  role: z.literal("assistant"),
  thinking: z.string(),
  fidelity: fidelity.optional(),
  stop_reason: stopReason,
});
const inlineThinking = z.looseObject({
  type: z.literal("inline_thinking"),
  role: z.literal("assistant"),
  data: z.string(),
  mime_type: z.string(),
  fidelity: fidelity.optional(),
  stop_reason: stopReason,
});
const toolCall = z.looseObject({
  type: z.literal("tool_call"),
  role: z.literal("assistant"),
  name: z.string(),
  arguments: z.string(),
  tool_call_id: z.string(),
  fidelity: fidelity.optional(),
  stop_reason: stopReason,
});
const toolProcessFacts = z.looseObject({
  id: z.string(),
  state: z.enum(["running", "exited", "killed"]),
  exit_code: z.number().int().nullable(),
});
const toolSubagentFacts = z.looseObject({
  id: z.string(),
  session_id: z.string(),
  kind: z.enum(["foreground", "background"]),
  state: z.enum(["running", "idle", "ended"]),
  parent_tool_call_id: z.string(),
});
const toolCallOutput = z.looseObject({
  type: z.literal("tool_call_output"),
  role: z.literal("user"),
  output: z.string(),
  images: z.array(z.string()).optional(),
  tool_call_id: z.string(),
  stop_reason: stopReason,
  penguin_process: toolProcessFacts.optional(),
  penguin_subagent: toolSubagentFacts.optional(),
});
const imageUrl = z.looseObject({
  type: z.literal("image_url"),
  role: z.literal("user"),
  image_url: z.string(),
  stop_reason: stopReason,
});
const inlineData = z.looseObject({
  type: z.literal("inline_data"),
  role,
  data: z.string(),
  mime_type: z.string(),
  fidelity: fidelity.optional(),
  stop_reason: stopReason,
});

const partialText = z.looseObject({
  type: z.literal("partial_text"),
  role: z.literal("assistant"),
  event_type: partialEvent,
  text: z.string(),
  stop_reason: stopReason,
});
const partialThinking = z.looseObject({
  type: z.literal("partial_thinking"),
  role: z.literal("assistant"),
  event_type: partialEvent,
  thinking: z.string(),
  stop_reason: stopReason,
});
const partialToolCall = z.looseObject({
  type: z.literal("partial_tool_call"),
  role: z.literal("assistant"),
  event_type: partialEvent,
  name: z.string(),
  arguments: z.string(),
  tool_call_id: z.string(),
  stop_reason: stopReason,
});
const partialToolCallOutput = z.looseObject({
  type: z.literal("partial_tool_call_output"),
  role: z.literal("user"),
  event_type: partialEvent,
  output: z.string(),
  images: z.array(z.string()).optional(),
  tool_call_id: z.string(),
  stop_reason: stopReason,
});

/** Complete model messages, keyed by payload type. */
export const completeSchemas = {
  text,
  thinking,
  inline_thinking: inlineThinking,
  tool_call: toolCall,
  tool_call_output: toolCallOutput,
  image_url: imageUrl,
  inline_data: inlineData,
} as const;

/** Partial model messages, keyed by payload type. */
export const partialSchemas = {
  partial_text: partialText,
  partial_thinking: partialThinking,
  partial_tool_call: partialToolCall,
  partial_tool_call_output: partialToolCallOutput,
} as const;

const tokenCounts = z.looseObject({
  cache_read: count,
  cache_write: count,
  output: count,
  total: count,
});

/** Event payloads, keyed by event type. */
export const eventSchemas = {
  request_begin: z.looseObject({ type: z.literal("request_begin") }),
  request_end: z.looseObject({
    type: z.literal("request_end"),
    status: stopReason,
    error_message: z.string().optional(),
    attempt: z.number().int().positive().optional(),
    retry_in_ms: count.optional(),
    first_token_ms: count.optional(),
  }),
  token_usage: z.looseObject({
    type: z.literal("token_usage"),
    session: tokenCounts,
    request: tokenCounts,
  }),
  approval_decision: z.looseObject({
    type: z.literal("approval_decision"),
    decision: z.enum(["allow", "deny", "forbidden"]),
    tool_call_id: z.string(),
  }),
  abort: z.looseObject({
    type: z.literal("abort"),
    reason: z.string().nullable().optional(),
  }),
  compaction_begin: z.looseObject({
    type: z.literal("compaction_begin"),
    reason: compactionReason,
    mode: compactionMode,
    context: count,
    turns: count,
  }),
  compaction_end: z.looseObject({
    type: z.literal("compaction_end"),
    reason: compactionReason,
    mode: compactionMode,
    status: phaseStatus,
    attempt: z.number().int().positive().optional(),
    error_message: z.string().optional(),
  }),
  subagent: z.looseObject({
    type: z.literal("subagent"),
    session_id: z.string().min(1),
  }),
  tool_list_ready: z.looseObject({
    type: z.literal("tool_list_ready"),
    tools: z.array(z.looseObject({
      name: z.string(),
      description: z.string(),
      parameters: z.unknown().optional(),
    })),
  }),
  mcp_connect_begin: z.looseObject({
    type: z.literal("mcp_connect_begin"),
    servers: z.array(z.string()),
  }),
  mcp_connect_end: z.looseObject({
    type: z.literal("mcp_connect_end"),
    status: phaseStatus,
    results: z.array(z.looseObject({
      server: z.string(),
      transport: z.enum(["stdio", "http", "sse"]),
      status: phaseStatus,
      duration_ms: z.number().nonnegative(),
      tools: z.array(z.string()).optional(),
      error: z.string().optional(),
    })),
  }),
  workspace_moved: z.looseObject({
    type: z.literal("workspace_moved"),
    from: z.string().min(1),
    to: z.string().min(1),
  }),
  model_switched: z.looseObject({
    type: z.literal("model_switched"),
    provider: z.string().min(1),
    model_id: z.string().min(1),
    previous_provider: z.string().min(1),
    previous_model_id: z.string().min(1),
  }),
  goal_finished: z.looseObject({
    type: z.literal("goal_finished"),
    outcome: z.enum(["complete", "blocked", "budget_limited", "aborted"]),
    rounds: count,
    tokens_used: z.number().nonnegative(),
    reason: z.enum(["round_cap", "interrupted", "round_failed", "max_turns"]).optional(),
    max_rounds: count.optional(),
  }),
} as const;

/** The `session_meta` payload. */
export const sessionMetaSchema = z.looseObject({
  session_id: z.string().min(1),
  provider: z.string().min(1),
  model_id: z.string().min(1),
  model_context_window: z.union([z.number().nonnegative(), z.literal("unknown")]),
  system_prompt: z.string(),
  agent_state: z.string(),
  workspace: z.string(),
  source: z.enum(["subagent", "schedule"]).optional(),
  lineage: z.looseObject({
    parent_session_id: z.string().min(1),
    trace_index: z.number().int().positive(),
    line: z.number().int().nonnegative(),
    kind: z.enum(["fork", "clone"]),
  }).optional(),
});

/** The envelope around every payload. */
export const envelopeSchema = z.looseObject({
  timestamp: z.iso.datetime({ offset: true }),
  type: z.enum(["session_meta", "model_msg", "event_msg"]),
  payload: z.looseObject({}),
  origin: z.array(z.string().min(1)).min(1).optional(),
});

export type Schema = z.ZodType;
