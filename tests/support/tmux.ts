// A detached tmux server of its own: a real pseudo-terminal for the CLI, read
// back with capture-pane and waited on by screen content (never by time).

/** Where tmux is expected (Debian's package). */
export const TMUX = "/usr/bin/tmux";

/** True when tmux is installed. */
export const hasTmux = (() => {
  try {
    return Deno.statSync(TMUX).isFile;
  } catch {
    return false;
  }
})();

/** One pane running a command. */
export interface Pane {
  /** The screen and scrollback as text (`-e`: with the SGR codes tmux keeps). */
  screen(opts?: { escapes?: boolean }): Promise<string>;
  /** Poll the screen until `pattern` matches (the timeout is only a failsafe). */
  waitFor(pattern: RegExp, what: string, timeoutMs?: number): Promise<string>;
  /** Kill the tmux server. */
  close(): Promise<void>;
}

/** Start `command` in a fresh tmux server, in a `columns`×`rows` pane. */
export async function startPane(command: string, columns = 100, rows = 40): Promise<Pane> {
  const socket = `penguin-test-${crypto.randomUUID().slice(0, 8)}`;
  const tmux = async (...args: string[]) => {
    const out = await new Deno.Command(TMUX, { args: ["-L", socket, ...args], stdout: "piped" })
      .output();
    return new TextDecoder().decode(out.stdout);
  };
  await tmux("new-session", "-d", "-s", "t", "-x", `${columns}`, "-y", `${rows}`, command);
  const screen = (opts: { escapes?: boolean } = {}) =>
    tmux("capture-pane", "-p", "-J", ...(opts.escapes ? ["-e"] : []), "-S", "-", "-t", "t");
  return {
    screen,
    async waitFor(pattern, what, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      let last = "";
      while (Date.now() < deadline) {
        last = await screen();
        if (pattern.test(last)) return last;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`timed out waiting for ${what}; the screen shows:\n${last}`);
    },
    close: async () => void await tmux("kill-server"),
  };
}

/** `s` quoted for a POSIX shell. */
export const shellQuote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;
