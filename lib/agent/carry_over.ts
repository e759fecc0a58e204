/**
 * What a turn leaves for the next request when it does not commit cleanly.
 * Nothing built here is ever written to the trace:
 * it is sent to the model only.
 *
 * - Retry input: the original input unchanged plus one `[turn_retried]` user
 *   text transcribing every failed attempt's products (tools never re-run).
 * - Carry-over on abort, case A (the request completed, e.g. aborted during
 *   tool execution): this turn's outputs in call order, plus a placeholder
 *   `[interrupted: tool aborted by user]` output for each committed call
 *   without one.
 * - Case B (the request did not complete): the structured tool outputs of the
 *   attempt input (they answer the previous committed turn) plus one
 *   `[turn_aborted]` user text transcribing the text inputs and what the
 *   attempt produced. A nested aborted/retried block is unwrapped so the
 *   structure stays one level deep. Non-text inputs (images) are lost here.
 *
 * @module
 */
import { toolCallOutput, userText } from "../protocol/builders.ts";
import type { CompleteMessage, ToolCallMessage, ToolCallOutputMessage } from "../protocol/types.ts";
import type { ModelOutcome } from "../models/outcome.ts";
import {
  downgradeGoalRound,
  INTERRUPTED_BY_USER,
  transcribeTurn,
  transcribeUserInput,
  turnAbortedBlock,
  turnRetriedBlock,
  unwrapSyntheticBlock,
} from "./markers.ts";

/** What one request attempt produced. */
export interface TurnProducts {
  /** Tool outputs, one per answered call, in the original call order. */
  toolOutputs: ToolCallOutputMessage[];
  /** The real (completed) tool calls, in order. */
  toolCalls: ToolCallMessage[];
  /** Complete thinking and text segments, in order. */
  segments: CompleteMessage[];
  /** How the request ended. */
  outcome: ModelOutcome;
}

/** The input of a retry: `input` plus a `[turn_retried]` transcript of `failed` (when it has content). */
export function withRetriedTurns(
  input: readonly CompleteMessage[],
  failed: readonly TurnProducts[],
): CompleteMessage[] {
  const lines = failed.flatMap((t) => transcribeTurn(t.segments, t.toolCalls, t.toolOutputs));
  if (lines.length === 0) return [...input];
  return [...input, userText(turnRetriedBlock(lines))];
}

/** Case A or case B carry-over of an aborted (or auth-failed) turn. */
export function buildCarryOver(
  attemptInput: readonly CompleteMessage[],
  turn: TurnProducts,
): CompleteMessage[] {
  if (turn.outcome.status === "completed") {
    const answered = new Set(turn.toolOutputs.map((o) => o.tool_call_id));
    const placeholders = turn.toolCalls
      .filter((c) => !answered.has(c.tool_call_id))
      .map((c) => toolCallOutput(c.tool_call_id, INTERRUPTED_BY_USER, "aborted"));
    return [...turn.toolOutputs, ...placeholders];
  }
  const structured = attemptInput.filter((m) => m.type === "tool_call_output");
  const lines: string[] = [];
  for (const m of attemptInput) {
    if (m.type !== "text") continue;
    const inner = unwrapSyntheticBlock(m.text);
    if (inner === null) lines.push(transcribeUserInput(downgradeGoalRound(m.text)));
    else if (inner !== "") lines.push(inner);
  }
  lines.push(...transcribeTurn(turn.segments, turn.toolCalls, turn.toolOutputs));
  return [...structured, userText(turnAbortedBlock(lines))];
}
