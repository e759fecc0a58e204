/**
 * Commands start with the default action for every signal penguin or a
 * command's own `trap` relies on, whatever penguin itself inherited.
 *
 * A signal that is ignored (not caught) survives `exec`, and POSIX shells
 * cannot undo it: "signals ignored upon entry to the shell cannot be trapped
 * or reset". A shell script that starts penguin in the background (`penguin
 * run … &` without job control) ignores SIGINT and SIGQUIT, `nohup` ignores
 * SIGHUP: every command the model ran inherited that, so penguin's own
 * interrupt did not reach it and its `trap … INT` never ran. A signal with a
 * handler is reset to its default action by `exec`, so penguin gives each
 * such signal a listener that does nothing: penguin goes on ignoring it in
 * effect (the listener drops it), and its children start clean.
 *
 * Linux only (the ignored set comes from `/proc`, see `_proc_facts.ts`);
 * elsewhere nothing changes.
 *
 * @module
 */
import { procFacts } from "./_proc_facts.ts";

/** The signals a command starts with the default action for, with their Linux numbers. */
const RESET: ReadonlyArray<readonly [Deno.Signal, number]> = [
  ["SIGHUP", 1],
  ["SIGINT", 2],
  ["SIGQUIT", 3],
  ["SIGUSR1", 10],
  ["SIGUSR2", 12],
  ["SIGALRM", 14],
  ["SIGTERM", 15],
];

let done: Promise<void> | undefined;

/**
 * Give every signal of {@linkcode RESET} this process ignores a listener
 * that drops it, so children start with its default action. Once per
 * process; never rejects.
 */
export function defaultSignalsForChildren(): Promise<void> {
  done ??= procFacts().then(({ ignored }) => {
    for (const [sig, n] of RESET) {
      if (!ignored?.has(n)) continue;
      try {
        Deno.addSignalListener(sig, () => {});
      } catch {
        // A signal Deno will not listen to here: children inherit what penguin has.
      }
    }
  });
  return done;
}
