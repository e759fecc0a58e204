/**
 * The `[goal]` block that opens each goal-round input
 * (`[goal]\nround: N\n…\n[/goal]\n\n<body>`, written by agent/goal.ts),
 * parsed in this one place for every reader: the goal loop, carry-over,
 * session summaries and the history renderer.
 *
 * @module
 */

/** The head every goal-round input starts with; group 1 is the round number. */
const HEAD = /^\[goal\]\nround: (\d+)\n/;
/** The whole block, with the blank line after it; group 1 is the round number. */
const BLOCK = /^\[goal\]\nround: (\d+)\n[\s\S]*?\n\[\/goal\][ \t]*(?:\n|$)\n?/;

/** The round number of a goal-round input text, or null for any other text. */
export function goalRoundOf(text: string): number | null {
  const m = HEAD.exec(text);
  return m ? Number(m[1]) : null;
}

/** A goal-round input split into its round number and its body (the text after the block), or null. */
export function splitGoalRound(text: string): { round: number; body: string } | null {
  const m = BLOCK.exec(text);
  return m ? { round: Number(m[1]), body: text.slice(m[0].length) } : null;
}
