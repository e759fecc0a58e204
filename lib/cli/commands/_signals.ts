/**
 * SIGINT and SIGTERM as the commands that run tasks (`run`, `schedules
 * run`) listen to them: where the platform lets them be listened to.
 *
 * @module
 */

/** Call `handler` on SIGINT and SIGTERM (where they can be listened to); returns the removal. */
export function addSignals(handler: () => void): () => void {
  const added: Deno.Signal[] = [];
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    try {
      Deno.addSignalListener(sig, handler);
      added.push(sig);
    } catch {
      // SIGTERM cannot be listened to on Windows
    }
  }
  return () => added.forEach((sig) => Deno.removeSignalListener(sig, handler));
}
