// The retries of the turn loop: the loop that retries one turn, an
// abortable backoff that a host can also end early ("retry now"), and the
// abort reasons when the retries of a turn run out.
import type { CompleteMessage, OmniMessage } from "../protocol/types.ts";
import type { ModelOutcome } from "../models/outcome.ts";
import { failureCause, readFailure } from "../models/failure.ts";
import { onAbort } from "../protocol/abort.ts";
import { buildCarryOver, withRetriedTurns } from "./carry_over.ts";
import type { RunOutcome } from "./outcome.ts";
import type { TurnResult } from "./turn.ts";

/** The one retry wait of a session at a time. */
export interface RetryWaits {
  /** Wait `ms`; resolves true when the wait ended (or was skipped), false when `signal` aborted it. */
  wait(ms: number, signal?: AbortSignal): Promise<boolean>;
  /** End the current wait now; false when none is in progress. */
  skip(): boolean;
}

/** A new wait slot. */
export function createRetryWaits(): RetryWaits {
  let wake: (() => void) | null = null;
  return {
    wait(ms, signal) {
      if (signal?.aborted) return Promise.resolve(false);
      return new Promise((resolve) => {
        let settled = false;
        const settle = (go: boolean) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          off();
          wake = null;
          resolve(go);
        };
        const timer = setTimeout(() => settle(true), Math.max(0, ms));
        const off = onAbort(signal, () => settle(false));
        wake = () => settle(true);
      });
    },
    skip() {
      const w = wake;
      if (!w) return false;
      w();
      return true;
    },
  };
}

/**
 * The abort reason when the retries of a turn are exhausted: what failed
 * (`malformed response`, `reconnect` after a timeout, else `llm request`)
 * and the retry count, then the cause of the last attempt (for a malformed
 * response or a timeout: class, host and the provider's message), e.g.
 * `reconnect failed after 5 retries: connection refused by 127.0.0.1:4000`.
 */
export function exhaustionReason(outcome: ModelOutcome, retries: number): string {
  const cause = outcome.error_message === undefined || outcome.error_message === ""
    ? ""
    : `: ${failureCause(readFailure(outcome.status, outcome.error_message))}`;
  if (outcome.status === "malformed") {
    return `malformed response failed after ${retries} retries${cause}`;
  }
  if (outcome.status === "timeout") return `reconnect failed after ${retries} retries${cause}`;
  return `llm request failed after ${retries} retries: ${outcome.error_message ?? outcome.status}`;
}

/** How one turn, retries included, ended. */
export type TurnAttempts =
  /** A request completed: `turn` is its result and `input` the input it was sent (already committed). */
  | { ok: true; turn: TurnResult; input: CompleteMessage[] }
  /** The turn stopped: the task ends with this outcome and leaves `carryOver` for the next run. */
  | {
    ok: false;
    kind: Extract<RunOutcome["kind"], "aborted" | "failed">;
    reason: string;
    carryOver: CompleteMessage[];
  };

/** What the retry loop of a turn is given. */
export interface TurnAttemptsDeps {
  /** Run one attempt with `input` (`reconnects` retries already made). */
  attempt(input: CompleteMessage[], reconnects: number): AsyncGenerator<OmniMessage, TurnResult>;
  /** Add a completed request's input and output to the committed context. */
  commit(input: readonly CompleteMessage[], output: readonly CompleteMessage[]): void;
  /** The wait before retrying `outcome` after `reconnects` retries, or undefined when it is not retried. */
  plannedRetry(outcome: ModelOutcome, reconnects: number): number | undefined;
  /** Wait before a retry; false when `signal` aborted the wait. */
  wait(ms: number, signal: AbortSignal | undefined): Promise<boolean>;
  /** Retries allowed (named in the exhaustion reason). */
  maxRetries: number;
}

/**
 * One turn of the loop with its retries: a failed attempt is retried
 * with the original input plus a `[turn_retried]` transcript of every failed
 * attempt (tools never re-run), until a request completes, the failure is
 * final (auth, a permanent error, retries exhausted) or the task is aborted.
 */
export async function* turnWithRetries(
  input: CompleteMessage[],
  deps: TurnAttemptsDeps,
  signal: AbortSignal | undefined,
): AsyncGenerator<OmniMessage, TurnAttempts> {
  const failed: TurnResult[] = [];
  let attemptInput = input;
  for (let reconnects = 0;; reconnects++) {
    const turn = yield* deps.attempt(attemptInput, reconnects);
    const { status } = turn.outcome;
    if (status === "completed") deps.commit(attemptInput, turn.completes);
    const stop = (kind: "aborted" | "failed", reason: string, carryOver: CompleteMessage[]) =>
      ({ ok: false, kind, reason, carryOver }) as const;
    if (signal?.aborted || status === "aborted") {
      return stop("aborted", "aborted by user", buildCarryOver(attemptInput, turn));
    }
    if (status === "auth" || (status === "failed" && turn.outcome.permanent)) {
      const reason = `llm request error: ${turn.outcome.error_message ?? status}`;
      return stop("failed", reason, buildCarryOver(attemptInput, turn));
    }
    if (status === "completed") return { ok: true, turn, input: attemptInput };
    failed.push(turn);
    attemptInput = withRetriedTurns(input, failed);
    const planned = deps.plannedRetry(turn.outcome, reconnects);
    if (planned === undefined) {
      return stop("failed", exhaustionReason(turn.outcome, deps.maxRetries), attemptInput);
    }
    if (!(await deps.wait(planned, signal))) {
      return stop("aborted", "aborted during reconnect backoff", attemptInput);
    }
  }
}
