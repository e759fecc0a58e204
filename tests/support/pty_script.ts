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

/**
 * Run `penguin <args>` under `script` with its log at `<dir>/<logName>`
 * (`shellTail` is appended to the shell command, e.g. a stdout redirection):
 * the exit code and the log without its first line, which names the command.
 */
export async function runUnderScript(
  dir: string,
  logName: string,
  args: string[],
  shellTail = "",
): Promise<{ code: number; log: string }> {
  const log = join(dir, logName);
  await adoptTestRoot(args, penguinEnv()); // a root the test filled is the user's (see runCli)
  const command = [Deno.execPath(), ...penguinArgv(), ...args].map(shellQuote).join(" ") +
    shellTail;
  const r = await new Deno.Command(SCRIPT, {
    args: ["-q", "-e", "-c", command, log],
    cwd: REPO,
    env: penguinEnv({ SHELL: "/bin/sh" }),
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  const text = await Deno.readTextFile(log);
  return { code: r.code, log: text.slice(text.indexOf("\n") + 1) };
}
