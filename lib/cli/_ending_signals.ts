/**
 * The signals that end penguin by default and that it listens to instead,
 * to end a task or a chat the way SIGTERM does: SIGTERM, SIGHUP (the
 * terminal or the ssh connection closed), SIGQUIT (Ctrl-\), SIGALRM,
 * SIGXCPU (a CPU-time limit, `ulimit -t`, before its hard kill), SIGXFSZ,
 * SIGVTALRM, SIGUSR2, SIGPWR, SIGSYS, SIGABRT, SIGTRAP, SIGSTKFLT and SIGIO
 * (SIGPOLL). Unheard, each would end penguin at once, before the end of the
 * session: its last look for armed git repositories a command left in the
 * workspace, and its stand-ins removed.
 *
 * Not listened to, each for its reason ({@linkcode NOT_LISTENED}): SIGINT is
 * each caller's own (an interrupt, not an end); SIGKILL and SIGSTOP cannot be
 * heard; Deno refuses SIGILL, SIGFPE and SIGSEGV, and a real SIGBUS (a
 * memory fault) would fault again after a listener returned; SIGUSR1 starts
 * Deno's inspector; SIGPIPE is ignored; V8's profiler uses SIGPROF; the
 * real-time signals (SIGRTMIN…SIGRTMAX) cannot be listened to in Deno. A
 * signal the platform does not let a program listen to is skipped. A session
 * ended by one of those leaves its record for the next penguin on the same
 * root, whose walks check what it left (docs/security.md).
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
  "SIGABRT",
  "SIGTRAP",
  "SIGSTKFLT",
  "SIGIO",
];

/** The signals that end a program by default that penguin does not listen to, and why. */
export const NOT_LISTENED: Readonly<Record<string, string>> = {
  SIGINT: "an interrupt, each caller's own",
  SIGKILL: "cannot be heard",
  SIGILL: "Deno refuses it",
  SIGFPE: "Deno refuses it",
  SIGSEGV: "Deno refuses it",
  SIGBUS: "a real memory fault would fault again after a listener returned",
  SIGUSR1: "starts Deno's inspector",
  SIGPIPE: "ignored",
  SIGPROF: "V8's profiler uses it",
  SIGPOLL: "the same signal as SIGIO on Linux",
};
