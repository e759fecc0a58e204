/**
 * Running penguin from checkouts of this repository, as the benchmarks that compare checkouts
 * do: the `penguin` task's argv of each, the model they are given, and the quiet child process
 * each run is.
 *
 * @module
 */

/** The checkouts to compare: this repository first, then `others` (each ending in `/`). */
export function checkoutsOf(repo: string, others: string[]): string[] {
  return [repo, ...others.map((p) => (p.endsWith("/") ? p : `${p}/`))];
}

/** The argv of the `penguin` task of `checkout` (its flags, config and entry by absolute path). */
export function taskArgv(checkout: string): string[] {
  const task = JSON.parse(Deno.readTextFileSync(`${checkout}deno.json`)).tasks.penguin as string;
  const words = task.split(/\s+/);
  return [...words.slice(1, -1), "--config", `${checkout}deno.json`, `${checkout}main.ts`];
}

/** penguin's arguments adding the scripted model at `baseUrl` to `root`, as its default. */
export function addModelArgv(root: string, baseUrl: string): string[] {
  return [
    ...["--root", root, "config", "model", "add", "--provider", "custom", "--model-id", "m"],
    ...["--base-url", baseUrl, "--api-key", "dummy", "--client-type", "openai-chat"],
    ...["--context-window", "1000000", "--set-default"],
  ];
}

/** `command args` in `cwd` with only `env`, no input, its output dropped and stderr piped. */
export function quietCommand(
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Deno.Command {
  return new Deno.Command(command, {
    args,
    env,
    clearEnv: true,
    cwd,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  });
}
