// The retry waits of the turn loop (§5.5): an abortable backoff that a host
// can also end early ("retry now"), and the abort reasons when the retries of
// a turn run out.
import type { ModelOutcome } from "../models/outcome.ts";
import { failureCause, readFailure } from "../models/failure.ts";

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
          signal?.removeEventListener("abort", onAbort);
          wake = null;
          resolve(go);
        };
        const onAbort = () => settle(false);
        const timer = setTimeout(() => settle(true), Math.max(0, ms));
        signal?.addEventListener("abort", onAbort, { once: true });
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
 * The abort reason when the retries of a turn are exhausted (§5.3): the
 * reference's prefix, then the cause of the last attempt (class, host and
 * the provider's message), e.g. `reconnect failed after 5 retries:
 * connection refused by 127.0.0.1:4000`.
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
