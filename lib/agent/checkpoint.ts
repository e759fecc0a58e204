/**
 * The checkpoint after every completed turn of the engine: the seam where
 * compaction (lib/agent/compaction.ts) decides whether the task goes on as
 * usual, ends, aborts, or continues from another input.
 *
 * @module
 */
import type { CompleteMessage, OmniMessage } from "../protocol/types.ts";
import type { TurnResult } from "./turn.ts";

/** What the checkpoint after a turn decides. */
export type CheckpointVerdict =
  /**
   * Go on normally. `stash` (already written) leads the next input when the
   * task goes on, else it becomes the carry-over.
   */
  | { action: "continue"; stash?: CompleteMessage[] }
  /** End the task now (e.g. the context was discarded at a task boundary). */
  | { action: "end" }
  /** Abort the task with this reason, leaving `carryOver` (default: case A of the turn when it had outputs). */
  | { action: "abort"; reason: string; carryOver?: CompleteMessage[] }
  /** Continue with this input instead of the turn's outputs (steering is still appended). */
  | { action: "replace"; input: CompleteMessage[] };

/** What the checkpoint knows besides the turn. */
export interface CheckpointInfo {
  /** Steering is queued for the next input. */
  steeringQueued: boolean;
}

/** The checkpoint run after every completed turn (compaction's seam). */
export type AfterTurn = (
  turn: TurnResult,
  signal: AbortSignal | undefined,
  info: CheckpointInfo,
) => AsyncGenerator<OmniMessage, CheckpointVerdict>;
