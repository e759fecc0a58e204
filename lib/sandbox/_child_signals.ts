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
 * Linux only; elsewhere nothing changes. Deno does not let penguin read its
 * own `/proc/<pid>/status` under its permission set, so the ignored set is
 * read once per process by a short bash, which inherits exactly what penguin
 * ignores (Deno's spawn resets only SIGPIPE, which is not in the set).
 *
 * @module
 */

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

/** The line a shell prints: its own SigIgn (inherited from penguin). */
const READ_SIGIGN =
  'while read -r k v; do [ "$k" = SigIgn: ] && echo "SigIgn: $v"; done </proc/self/status';

/** The signals a process with `/proc/<pid>/status` text `status` ignores, or undefined. */
export function ignoredSignals(status: string): Set<number> | undefined {
  const hex = /^SigIgn:\s*([0-9a-fA-F]+)$/m.exec(status)?.[1];
  if (hex === undefined) return undefined;
  const mask = BigInt(`0x${hex}`);
  const out = new Set<number>();
  for (let n = 1; n <= 64; n++) if ((mask >> BigInt(n - 1)) & 1n) out.add(n);
  return out;
}

/**
 * Give every signal of {@linkcode RESET} this process ignores a listener
 * that drops it, so children start with its default action. Once per
 * process (`bash` is the shell that reads the ignored set); never rejects.
 */
export function defaultSignalsForChildren(bash: string): Promise<void> {
  done ??= (async () => {
    if (Deno.build.os !== "linux") return;
    let ignored: Set<number> | undefined;
    try {
      const out = await new Deno.Command(bash, {
        args: ["--noprofile", "--norc", "-c", READ_SIGIGN],
        clearEnv: true,
        env: { PATH: "/usr/bin:/bin" },
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).output();
      ignored = ignoredSignals(new TextDecoder().decode(out.stdout));
    } catch {
      return;
    }
    for (const [sig, n] of RESET) {
      if (!ignored?.has(n)) continue;
      try {
        Deno.addSignalListener(sig, () => {});
      } catch {
        // A signal Deno will not listen to here: children inherit what penguin has.
      }
    }
  })();
  return done;
}
