/**
 * The signals that end the commands that run tasks (`run`, `batch`,
 * `schedules run`) cleanly: SIGINT and SIGTERM, and SIGHUP (the terminal or
 * the ssh connection closed) and SIGQUIT (Ctrl-\), where the platform lets
 * them be listened to. Unheard, SIGHUP and SIGQUIT would end penguin at
 * once, before the end of a session: its last look for armed git
 * repositories a command left in the workspace, and its stand-ins removed.
 *
 * @module
 */

/** What {@linkcode addSignals} listens to besides SIGINT and SIGTERM. */
export interface SignalOptions {
  /** SIGHUP too (default true); `schedules run` keeps SIGHUP for reloading. */
  hangup?: boolean;
}

/** Call `handler` on SIGINT, SIGTERM, SIGQUIT and SIGHUP (see {@linkcode SignalOptions}); returns the removal. */
export function addSignals(handler: () => void, opts: SignalOptions = {}): () => void {
  const added: Deno.Signal[] = [];
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGQUIT"];
  if (opts.hangup ?? true) signals.push("SIGHUP");
  for (const sig of signals) {
    try {
      Deno.addSignalListener(sig, handler);
      added.push(sig);
    } catch {
      // SIGTERM, SIGQUIT and SIGHUP cannot be listened to on Windows
    }
  }
  return () => added.forEach((sig) => Deno.removeSignalListener(sig, handler));
}
