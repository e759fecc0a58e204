/**
 * Answers to penguin's approval question on a terminal (a tmux pane): an
 * answer it does not take and the question asked again, and a denial with
 * its note to the model.
 *
 * @module
 */
import type { Pane } from "../support/tmux.ts";

/** The line penguin prints after an answer it does not take, then the question again. */
const ASKED_AGAIN =
  /\[Y\/a\/n\] nope\nPlease answer y \(yes, or Enter\), a \(yes, for the rest of this session\) or n \(no\); Esc or Ctrl-C stops the task\.\n\? Approve this tool call\? \[Y\/a\/n\] $/m;

/** Answer "nope", wait for the question to be asked again, then answer y. */
export async function nopeThenYes(pane: Pane): Promise<void> {
  await pane.type("nope");
  await pane.keys("Enter");
  await pane.waitFor(ASKED_AGAIN, "the question asked again");
  await pane.type("y");
  await pane.keys("Enter");
}

/** Answer n, wait for the note question, then give `note` (Enter alone for none). */
export async function denyWithNote(pane: Pane, note = ""): Promise<void> {
  await pane.type("n");
  await pane.keys("Enter");
  await pane.waitFor(/Note to the model \(Enter for none\): $/m, "the note question");
  if (note !== "") await pane.type(note);
  await pane.keys("Enter");
}
