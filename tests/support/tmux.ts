// A detached tmux server of its own: a real pseudo-terminal for the CLI, read
// back with capture-pane and waited on by screen content (never by time);
// keys, text, raw bytes and bracketed pastes go in with send-keys/paste-buffer.
import { adoptTestRoot, penguinArgv, penguinEnv, REPO, testKeyDir } from "./cli.ts";
import { hostHas } from "./host_tools.ts";

/** Where tmux is expected (Debian's package). */
export const TMUX = "/usr/bin/tmux";

/** True when tmux is installed. */
export const hasTmux = hostHas(TMUX);

/** One pane running a command. */
export interface Pane {
  /** The screen and scrollback as text (`-e`: with the SGR codes tmux keeps). */
  screen(opts?: { escapes?: boolean }): Promise<string>;
  /** Poll the screen until `pattern` matches (the timeout is only a failsafe). */
  waitFor(pattern: RegExp, what: string, timeoutMs?: number): Promise<string>;
  /** tmux key names (`Enter`, `C-c`, `Escape`, `M-Enter`, `Up`…). */
  keys(...keys: string[]): Promise<void>;
  /** Literal text, as typed. */
  type(text: string): Promise<void>;
  /** Raw bytes written to the pane's input as one chunk. */
  bytes(text: string): Promise<void>;
  /** A bracketed paste of `text`. */
  paste(text: string): Promise<void>;
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
      // Trailing blank rows dropped: a log's excerpt of the failure then ends with the screen.
      const shown = last.replace(/\s+$/, "");
      throw new Error(
        `timed out waiting for ${what}; the screen shows:\n${shown}\n(end of screen)`,
      );
    },
    keys: async (...keys) => void await tmux("send-keys", "-t", "t", ...keys),
    type: async (text) => void await tmux("send-keys", "-t", "t", "-l", text),
    bytes: async (text) => {
      const hex = [...new TextEncoder().encode(text)].map((b) => b.toString(16).padStart(2, "0"));
      await tmux("send-keys", "-t", "t", "-H", ...hex);
    },
    // -p: bracketed, since chat asks the terminal for bracketed paste.
    paste: async (text) => {
      await tmux("set-buffer", "-b", "penguin", text);
      await tmux("paste-buffer", "-p", "-d", "-b", "penguin", "-t", "t");
    },
    close: async () => void await tmux("kill-server"),
  };
}

/** `s` quoted for a POSIX shell. */
export const shellQuote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Write a shell script next to `dir` that runs `penguin <args>` (with
 * `env`, from the repository (or `cwd`), optionally fed by `stdinCommand |`), then
 * prints `[exited <code>]` and stays open. Returns the pane command and the
 * script path (to remove).
 */
export async function penguinScript(
  dir: string,
  args: string[],
  env: Record<string, string>,
  opts: { stdinCommand?: string; cwd?: string } = {},
): Promise<{ command: string; path: string }> {
  // A root the test filled is the user's (see runCli).
  await adoptTestRoot(args, { ...penguinEnv(), ...env }, opts.cwd);
  const path = `${dir}/../penguin-pane-${crypto.randomUUID().slice(0, 8)}.sh`;
  // The key that marks the test's data roots as penguin's (see testKeyDir), whatever HOME.
  const exports = Object.entries({ PENGUIN_KEY_DIR: testKeyDir(), ...env })
    .map(([k, v]) => `${k}=${shellQuote(v)}`).join(" ");
  const argv = [Deno.execPath(), ...penguinArgv(), ...args].map(shellQuote).join(" ");
  const pipe = opts.stdinCommand ? `${opts.stdinCommand} | ` : "";
  await Deno.writeTextFile(
    path,
    // The suite's own NO_COLOR (CI sets it) must not decide: each test says what it wants.
    `unset NO_COLOR FORCE_COLOR\n${exports ? `export ${exports}\n` : ""}cd ${
      shellQuote(opts.cwd ?? REPO)
    }\n${pipe}${argv}\n` +
      `echo "[exited $?]"\nsleep 600\n`,
  );
  return { command: `bash ${shellQuote(path)}`, path };
}

/**
 * Run `penguin <args>` in a pane (from a script written next to `dir`,
 * NO_COLOR), wait for its yes/no `question`, type `answer` and Enter, and
 * wait for `outcome` on the screen.
 */
export async function answerQuestion(
  dir: string,
  args: string[],
  question: RegExp,
  answer: string,
  outcome: RegExp,
): Promise<void> {
  const script = await penguinScript(dir, args, { NO_COLOR: "1" });
  const pane = await startPane(script.command);
  try {
    await pane.waitFor(question, "the question");
    await pane.type(answer);
    await pane.keys("Enter");
    await pane.waitFor(outcome, `the outcome of "${answer}"`);
  } finally {
    await pane.close();
    await Deno.remove(script.path);
  }
}
