/**
 * The yield window of the tools that return while their work goes on
 * (exec_command, input_command and the subagent tools): how long one call
 * waits for output before it returns.
 *
 * @module
 */

/** The shortest yield window (ms). */
export const MIN_YIELD_MS = 250;

/**
 * The yield window of a call: `max(requested ?? fallback, 250)`, capped at
 * `timeoutMs − 1000` so the call returns before its own timeout (no cap
 * when the timeout is disabled).
 */
export function clampYield(
  requested: number | undefined,
  fallback: number,
  timeoutMs: number,
): number {
  const wanted = Math.max(requested ?? fallback, MIN_YIELD_MS);
  return timeoutMs > 0 ? Math.max(0, Math.min(wanted, timeoutMs - 1000)) : wanted;
}
