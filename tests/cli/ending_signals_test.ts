// Every signal whose default action ends a Linux program (signal(7): "Term" and "Core") is
// either one penguin listens to, ending the session as SIGTERM does, or named with its reason
// for not being one (lib/cli/_ending_signals.ts). Attack round 16 (bounded G6–G8): SIGSTKFLT,
// SIGTRAP and SIGABRT were neither, and ended penguin before its session's end.
import assert from "node:assert/strict";
import { ENDING_SIGNALS, NOT_LISTENED } from "../../lib/cli/_ending_signals.ts";

/** signal(7), x86/ARM numbering: default action Term or Core (the real-time ones apart). */
const ENDS_BY_DEFAULT = [
  "SIGHUP",
  "SIGINT",
  "SIGQUIT",
  "SIGILL",
  "SIGTRAP",
  "SIGABRT",
  "SIGBUS",
  "SIGFPE",
  "SIGKILL",
  "SIGUSR1",
  "SIGSEGV",
  "SIGUSR2",
  "SIGPIPE",
  "SIGALRM",
  "SIGTERM",
  "SIGSTKFLT",
  "SIGXCPU",
  "SIGXFSZ",
  "SIGVTALRM",
  "SIGPROF",
  "SIGIO",
  "SIGPOLL",
  "SIGPWR",
  "SIGSYS",
]; // deno-fmt-ignore

Deno.test("every signal that ends a program by default is listened to or named with a reason", () => {
  const covered = [...ENDING_SIGNALS, ...Object.keys(NOT_LISTENED)];
  assert.deepEqual(
    ENDS_BY_DEFAULT.filter((s) => !covered.includes(s)),
    [],
    "neither listened to nor named in NOT_LISTENED",
  );
  assert.deepEqual(ENDING_SIGNALS.filter((s) => s in NOT_LISTENED), [], "both listened and not");
  assert.deepEqual(new Set(ENDING_SIGNALS).size, ENDING_SIGNALS.length);
});

Deno.test({
  name: "every ending signal can be listened to on Linux",
  ignore: Deno.build.os !== "linux",
  fn: () => {
    for (const sig of ENDING_SIGNALS) {
      const f = () => {};
      Deno.addSignalListener(sig, f);
      Deno.removeSignalListener(sig, f);
    }
  },
});
