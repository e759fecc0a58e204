/**
 * The retry ladder: which outcomes are retried, how long to wait, and
 * an abortable sleep. Pure; the agent loop drives it and records
 * `attempt` / `retry_in_ms`.
 *
 * @module
 */
import { onAbort } from "../protocol/abort.ts";
import type { ModelOutcome } from "./outcome.ts";

/** Retries allowed after the first attempt (at most 6 attempts per turn). */
export const MAX_RETRIES = 5;

/** Upper bound on a server-requested `Retry-After` wait we honour. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** Delay before retry `n` (1-based): `min(2000 · 2^(n−1), 30000)` → 2 s, 4 s, 8 s, 16 s, 30 s. */
export function retryDelayMs(n: number): number {
  return Math.min(2000 * 2 ** (Math.max(1, n) - 1), 30_000);
}

/**
 * Whether a request that ended with `status` is of a retried kind: `failed`
 * (unless the failure is permanent, which only the outcome knows), `timeout`
 * and `malformed`.
 */
export function isRetryableStatus(status: string): boolean {
  return status === "failed" || status === "timeout" || status === "malformed";
}

/**
 * Whether to retry after `attempt` (1-based) ended with `outcome`, and after
 * how long. `failed` (unless permanent), `timeout` and `malformed` are
 * retried up to {@linkcode MAX_RETRIES} times; `completed`, `aborted`,
 * `auth` and permanent failures never. A server `Retry-After` replaces the
 * ladder value, capped at {@linkcode MAX_RETRY_AFTER_MS}.
 */
export function shouldRetry(
  outcome: ModelOutcome,
  attempt: number,
): { retry: false } | { retry: true; delay_ms: number } {
  const retryable = isRetryableStatus(outcome.status) &&
    !(outcome.status === "failed" && outcome.permanent === true);
  if (!retryable || attempt > MAX_RETRIES) return { retry: false };
  const delay_ms = outcome.retry_after_ms !== undefined
    ? Math.min(outcome.retry_after_ms, MAX_RETRY_AFTER_MS)
    : retryDelayMs(attempt);
  return { retry: true, delay_ms };
}

/**
 * Sleep `ms`, waking early when `signal` aborts. Resolves `true` when the
 * full time elapsed, `false` when woken by the signal. Never rejects.
 */
export function interruptibleSleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (full: boolean) => {
      clearTimeout(timer);
      off();
      resolve(full);
    };
    const timer = setTimeout(() => done(true), Math.max(0, ms));
    const off = onAbort(signal, () => done(false));
  });
}
