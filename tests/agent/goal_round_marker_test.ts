// The goal-round marker: the block agent/goal.ts writes is read back by the one parser every reader uses.
import assert from "node:assert/strict";
import { goalRoundOf, splitGoalRound } from "../../lib/protocol/goal_round_marker.ts";
import { goalRoundText } from "../../lib/agent/goal.ts";
import { downgradeGoalRound } from "../../lib/agent/markers.ts";
import { goalRound } from "../../lib/cli/render/history.ts";

Deno.test("a written goal round reads back as its round and body, in every reader", () => {
  const text = goalRoundText({
    round: 3,
    objective: "Make the tests pass.",
    path: "/tmp/s/GOAL.yaml",
    used: 1200,
    body: "Make the tests pass.",
    roundsLeft: 2,
  });
  assert.equal(goalRoundOf(text), 3);
  assert.equal(goalRound(text), 3);
  assert.deepEqual(splitGoalRound(text), { round: 3, body: "Make the tests pass." });
  assert.equal(
    downgradeGoalRound(text),
    "[goal round 3 of an ended goal run — protocol omitted; do not act on it]\nMake the tests pass.",
  );
});

Deno.test("text that is not a goal round is left alone", () => {
  for (const text of ["hello", "[goal]\nno round\n[/goal]\n\nx", " [goal]\nround: 1\n[/goal]\n"]) {
    assert.equal(goalRoundOf(text), null, text);
    assert.equal(splitGoalRound(text), null, text);
    assert.equal(downgradeGoalRound(text), text);
  }
  // A head without its closing line still names the round (a cut-off record), but has no body.
  assert.equal(goalRoundOf("[goal]\nround: 7\nrules…"), 7);
  assert.equal(splitGoalRound("[goal]\nround: 7\nrules…"), null);
});
