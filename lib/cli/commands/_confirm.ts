// Asking before a command that destroys or replaces something: on a terminal
// the user answers y/N; without one the command needs --yes, so a script never
// waits on a question nobody sees.
import { PenguinError } from "../../protocol/errors.ts";
import type { CommandContext } from "../command.ts";
import { readStdinLine } from "../line_reader.ts";

/**
 * Ask `question` (` [y/N] ` is added) and return whether the answer is y or
 * yes. Without a terminal on stdin it asks nothing: a usage error
 * `<refusal> without confirmation (stdin is not a terminal); pass --yes`.
 */
export async function confirmed(
  ctx: CommandContext,
  question: string,
  refusal: string,
): Promise<boolean> {
  if (!Deno.stdin.isTerminal()) {
    throw new PenguinError(
      "usage",
      `${refusal} without confirmation (stdin is not a terminal); pass --yes`,
    );
  }
  ctx.io.out(`${question}? [y/N] `);
  const answer = (await readStdinLine()).trim().toLowerCase();
  return answer === "y" || answer === "yes";
}
