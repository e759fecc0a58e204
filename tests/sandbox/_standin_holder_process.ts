/**
 * Starting `_standin_holder.ts` the way the stand-in tests do: as a penguin process under
 * penguin's own permission set, waiting on its first printed line (the held placeholders) instead
 * of on a clock.
 *
 * @module
 */
import { join } from "node:path";
import { penguinArgv, REPO } from "../support/cli.ts";
import { readUntil } from "../support/child_lines.ts";

/** The holder helper's path: run with `penguinArgv()` minus its entry point. */
export const STANDIN_HOLDER = join(REPO, "tests/sandbox/_standin_holder.ts");

/** The argv that runs the holder helper with `args` under penguin's permission set. */
export function standinHolderArgv(args: string[]): string[] {
  return [...penguinArgv().slice(0, -1), STANDIN_HOLDER, ...args];
}

/** A started holder: the child, its stdout reader, and what it printed up to its first line. */
export interface StartedHolder {
  child: Deno.ChildProcess;
  lines: ReadableStreamDefaultReader<string>;
  out: string;
}

/** Spawn the holder helper with `args` and wait for its first line of output. */
export async function startStandinHolder(
  args: string[],
  opts: { env?: Record<string, string>; stderr?: "piped" | "inherit" } = {},
): Promise<StartedHolder> {
  const child = new Deno.Command(Deno.execPath(), {
    args: standinHolderArgv(args),
    ...(opts.env ? { env: opts.env } : {}),
    stdin: "piped",
    stdout: "piped",
    stderr: opts.stderr ?? "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  return { child, lines, out: await readUntil(lines) };
}
