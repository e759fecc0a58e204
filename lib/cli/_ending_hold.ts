/**
 * The hold over a session's end: from the moment a command starts ending its
 * session (`run`, `chat`) until `main()` has printed what that end left for
 * the user, SIGINT and every signal of `_ending_signals.ts` are listened to
 * and do nothing but say, once, that penguin is finishing. The end (background
 * commands stopped, the stand-ins removed, the last walk for git repositories
 * a command armed, the report) is bounded, and a second Ctrl-C or SIGTERM
 * there would otherwise kill penguin with the signal's default action before
 * the last walk, leaving armed what a background command made meanwhile.
 *
 * The command installs the hold before it removes its own listeners, so no
 * signal falls between them; `lib/cli/mod.ts` releases it.
 *
 * @module
 */
import { ENDING_SIGNALS } from "./_ending_signals.ts";

/** What a signal during the end prints, once. */
export const FINISHING_LINE =
  "[penguin] finishing the session's end (its last look for armed git repositories); " +
  "a signal does not cut it short\n";

let held: { off: (() => void)[] } | undefined;

/**
 * Hold SIGINT and the ending signals until {@linkcode releaseEndingHold}:
 * the first one heard prints {@linkcode FINISHING_LINE} through `say`.
 * Holding twice keeps the first hold.
 */
export function holdEnding(say: (line: string) => void): void {
  if (held !== undefined) return;
  let told = false;
  const onSignal = () => {
    if (told) return;
    told = true;
    try {
      say(FINISHING_LINE);
    } catch {
      // stderr gone: the end goes on all the same
    }
  };
  const off: (() => void)[] = [];
  for (const sig of ["SIGINT", ...ENDING_SIGNALS] as Deno.Signal[]) {
    try {
      Deno.addSignalListener(sig, onSignal);
      off.push(() => Deno.removeSignalListener(sig, onSignal));
    } catch {
      // not on this platform
    }
  }
  held = { off };
}

/** Let the signals act again (their default action once nothing else listens). */
export function releaseEndingHold(): void {
  const h = held;
  held = undefined;
  for (const off of h?.off ?? []) off();
}
