/**
 * The signals that end the commands that run tasks (`run`, `batch`,
 * `schedules run`) cleanly: SIGINT and every signal of
 * `../_ending_signals.ts` (SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGXCPU…),
 * where the platform lets them be listened to. Unheard, they would end
 * penguin at once, before the end of a session: its last look for armed
 * git repositories a command left in the workspace, and its stand-ins
 * removed.
 *
 * @module
 */
import { ENDING_SIGNALS } from "../_ending_signals.ts";

/** What {@linkcode addSignals} listens to besides SIGINT and SIGTERM. */
export interface SignalOptions {
  /** SIGHUP too (default true); `schedules run` keeps SIGHUP for reloading. */
  hangup?: boolean;
}

/** Call `handler` on SIGINT and the ending signals (see {@linkcode SignalOptions}); returns the removal. */
export function addSignals(handler: () => void, opts: SignalOptions = {}): () => void {
  const added: Deno.Signal[] = [];
  const signals: Deno.Signal[] = [
    "SIGINT",
    ...ENDING_SIGNALS.filter((sig) => sig !== "SIGHUP" || (opts.hangup ?? true)),
  ];
  for (const sig of signals) {
    try {
      Deno.addSignalListener(sig, handler);
      added.push(sig);
    } catch {
      // not on this platform (Windows: only SIGINT and SIGBREAK)
    }
  }
  return () => added.forEach((sig) => Deno.removeSignalListener(sig, handler));
}
