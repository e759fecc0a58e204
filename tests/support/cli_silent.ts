/**
 * `penguin` started as a child process with no stdin and its output thrown
 * away, for tests that follow it through the scripted model server and then
 * kill it or wait for it.
 *
 * @module
 */
import { penguinArgv, penguinEnv } from "./cli.ts";

/** Start `penguin <args>` in `cwd` with the test environment, its stdio all `null`. */
export function spawnSilentCli(args: string[], cwd: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv(), ...args],
    cwd,
    env: penguinEnv(),
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}
