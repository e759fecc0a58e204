/**
 * The one way penguin reacts to an abort signal: run a function once when it
 * fires (at once when it already has) and get the unsubscribe. Signals that
 * follow other signals are built with `AbortSignal.any()`, not by hand.
 *
 * @module
 */

/** Run `fn` once when `signal` aborts, at once when it already has; returns the unsubscribe. */
export function onAbort(signal: AbortSignal | undefined, fn: () => void): () => void {
  if (!signal) return () => {};
  if (signal.aborted) {
    fn();
    return () => {};
  }
  signal.addEventListener("abort", fn, { once: true });
  return () => signal.removeEventListener("abort", fn);
}
