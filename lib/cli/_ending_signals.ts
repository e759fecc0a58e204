/**
 * The signals that end penguin by default and that it listens to instead,
 * to end a task or a chat the way SIGTERM does: SIGTERM, SIGHUP (the
 * terminal or the ssh connection closed), SIGQUIT (Ctrl-\), SIGALRM,
 * SIGXCPU (a CPU-time limit, `ulimit -t`, before its hard kill), SIGXFSZ,
 * SIGVTALRM, SIGUSR2, SIGPWR and SIGSYS (not SIGPROF: V8's profiler uses
 * it). Unheard, each would end
 * penguin at once, before the end of the session: its last look for armed
 * git repositories a command left in the workspace, and its stand-ins
 * removed. SIGINT is each caller's own (an interrupt, not an end);
 * SIGKILL and SIGSTOP cannot be heard, and a signal the platform does not
 * let a program listen to is skipped.
 *
 * @module
 */

/** See the module doc. */
export const ENDING_SIGNALS: readonly Deno.Signal[] = [
  "SIGTERM",
  "SIGHUP",
  "SIGQUIT",
  "SIGALRM",
  "SIGXCPU",
  "SIGXFSZ",
  "SIGVTALRM",
  "SIGUSR2",
  "SIGPWR",
  "SIGSYS",
];
