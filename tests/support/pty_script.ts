/**
 * Run penguin on a real pseudo-terminal: util-linux `script` starts it and
 * records every byte penguin wrote to the terminal in a log file.
 *
 * @module
 */
import { join } from "node:path";
import { adoptTestRoot, penguinArgv, penguinEnv, REPO } from "./cli.ts";
import { hostHas } from "./host_tools.ts";

const SCRIPT = "/usr/bin/script";

/** Whether util-linux `script` is installed (tests that need it are skipped otherwise). */
export const hasScript = hostHas(SCRIPT);

/** `s` quoted for /bin/sh. */
export const shellQuote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/** What {@linkcode runUnderScript} may add to a run. */
export interface ScriptOptions {
  /** Appended to the shell command, e.g. a stdout redirection. */
  shellTail?: string;
  /** Typed on the terminal (its input is closed after it); none by default. */
  input?: string;
  /** Mark a data root the test filled as the user's first (see runCli); default true. */
  adopt?: boolean;
}

/**
 * Run `penguin <args>` under `script` with its log at `<dir>/<logName>`: the
 * exit code and the log without its first line, which names the command.
 */
export async function runUnderScript(
  dir: string,
  logName: string,
  args: string[],
  opts: ScriptOptions = {},
): Promise<{ code: number; log: string }> {
  const log = join(dir, logName);
  if (opts.adopt ?? true) await adoptTestRoot(args, penguinEnv());
  const command = [Deno.execPath(), ...penguinArgv(), ...args].map(shellQuote).join(" ") +
    (opts.shellTail ?? "");
  const child = new Deno.Command(SCRIPT, {
    args: ["-q", "-e", "-c", command, log],
    cwd: REPO,
    env: penguinEnv({ SHELL: "/bin/sh" }),
    stdin: opts.input === undefined ? "null" : "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  if (opts.input !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.input));
    await w.close();
  }
  const { code } = await child.status;
  const text = await Deno.readTextFile(log);
  return { code, log: text.slice(text.indexOf("\n") + 1) };
}
