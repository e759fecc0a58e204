// Call numbers: one per call id, in the order calls first appear; a scope remembers at most
// MAX_NUMBERED_IDS ids (attack round 24 bounded R9: a view of 600,000 calls kept every id).
import assert from "node:assert/strict";
import { createCallNumbers, MAX_NUMBERED_IDS } from "../../lib/display/call_numbers.ts";

Deno.test("a call keeps its number; a scope forgets its oldest id past MAX_NUMBERED_IDS", () => {
  const numbers = createCallNumbers();
  assert.equal(numbers.of("a"), 1);
  assert.equal(numbers.of("b"), 2);
  assert.equal(numbers.of("a"), 1);
  assert.equal(numbers.of("x", ["child"]), 1, "a child session numbers its own calls");
  for (let i = 0; i < MAX_NUMBERED_IDS; i++) numbers.of(`c${i}`);
  assert.equal(numbers.of(`c${MAX_NUMBERED_IDS - 1}`), MAX_NUMBERED_IDS + 2, "a recent id is kept");
  assert.equal(numbers.of("a"), MAX_NUMBERED_IDS + 3, "the oldest was forgotten: numbered anew");
  assert.equal(numbers.of("x", ["child"]), 1);
});
