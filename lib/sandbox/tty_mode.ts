/**
 * Raw mode for the controlling terminal, `/dev/tty`, when it is not
 * penguin's stdin (input piped in): Deno sets only its own stdin raw, so
 * the terminal's `stty` does it. Like the pager, `stty` is the user's own
 * program and runs outside the sandbox, with only PATH and the locale.
 *
 * The settings before are saved with `stty -g` and put back by
 * {@linkcode TtyMode.leave}.
 *
 * @module
 */

/** Raw mode of `/dev/tty`, entered and left. */
export interface TtyMode {
  /** Save the settings and set raw mode; false (nothing changed) when it could not. */
  enter(): boolean;
  /** Put the saved settings back (nothing when none are saved). */
  leave(): void;
}

/**
 * What raw means here: what `Deno.stdin.setRaw` sets on stdin (no line
 * editing, no echo, Ctrl-C and Ctrl-V as bytes, no flow control, CR kept),
 * each read returning as soon as one byte is there.
 */
const RAW = ["-icanon", "-echo", "-isig", "-iexten", "-ixon", "-icrnl", "min", "1", "time", "0"];

/** Variables `stty` may see. */
const STTY_ENV = ["PATH", "LANG", "LC_ALL", "LC_CTYPE"];

/** Run `stty args…` on `/dev/tty`: its output, or null when it failed. */
function stty(args: string[]): string | null {
  const env: Record<string, string> = {};
  for (const name of STTY_ENV) {
    const v = Deno.env.get(name);
    if (v !== undefined) env[name] = v;
  }
  try {
    // stty acts on its stdin, and a subprocess's stdin cannot be a path: sh redirects it.
    const out = new Deno.Command("sh", {
      args: ["-c", 'stty "$@" < /dev/tty', "sh", ...args],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      clearEnv: true,
      env,
    }).outputSync();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
  } catch {
    return null;
  }
}

/** `/dev/tty`'s raw mode, set with `stty`. */
export function ttyMode(): TtyMode {
  let saved: string | null = null;
  return {
    enter() {
      const before = stty(["-g"]);
      if (before === null || before === "") return false;
      if (stty(RAW) === null) {
        stty([before]);
        return false;
      }
      saved = before;
      return true;
    },
    leave() {
      if (saved === null) return;
      stty([saved]);
      saved = null;
    },
  };
}
