/**
 * `sleep(ms, signal?)`: a timer as a promise, which an abort ends early.
 *
 * @module
 */

/**
 * Resolve after `ms` milliseconds (negative counts as 0), or at once when
 * `signal` aborts; the timer is cleared either way, so an aborted sleep keeps
 * nothing alive. It never rejects.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener("abort", done);
  });
}
