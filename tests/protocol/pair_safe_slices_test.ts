// Slicing a long text for writing, encoding or masking (`lib/protocol/pair_safe_slices.ts`): the
// slices join to the text, and none begins or ends between a surrogate pair's halves, so each
// encodes as its part of the whole text does.
import assert from "node:assert/strict";
import { pairSafeEnd, pairSafeSlices } from "../../lib/protocol/pair_safe_slices.ts";
import { textSlices } from "../../lib/inspect/_pieces.ts";

/** A text of `n` units mixing ASCII, BMP letters and astral pairs, from a fixed seed. */
function mixed(n: number, seed: number): string {
  let s = "";
  let x = seed;
  while (s.length < n) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const pick = x % 4;
    s += pick === 0 ? "a" : pick === 1 ? "ä" : pick === 2 ? "🐧" : "😀";
  }
  return s;
}

const enc = new TextEncoder();

/** Whether `s` starts with a low half or ends with a high half. */
const cutsPair = (s: string) => /^[\udc00-\udfff]/.test(s) || /[\ud800-\udbff]$/.test(s);

function assertSlices(text: string, slices: string[], max: number): void {
  assert.equal(slices.join(""), text);
  for (const s of slices) {
    assert.ok(!cutsPair(s), `a slice cuts a pair: ${JSON.stringify(s)}`);
    assert.ok(s.length <= Math.max(max, 2), `slice of ${s.length} > ${max}`);
  }
  const joined = new Uint8Array(slices.reduce((n, s) => n + enc.encode(s).length, 0));
  let at = 0;
  for (const s of slices) {
    const b = enc.encode(s);
    joined.set(b, at);
    at += b.length;
  }
  assert.deepEqual(joined, enc.encode(text));
}

Deno.test("fixed-size slices join to the text and never cut a surrogate pair", () => {
  for (const max of [1, 2, 3, 7, 64, 1000]) {
    for (const seed of [1, 2, 3]) {
      const text = mixed(3000, seed);
      assertSlices(text, [...pairSafeSlices(text, max)], max);
    }
  }
});

Deno.test("a text no longer than the slice size is its only slice", () => {
  const text = "🐧".repeat(10);
  const slices = [...pairSafeSlices(text, 20)];
  assert.equal(slices.length, 1);
  assert.equal(slices[0], text);
  assert.deepEqual([...pairSafeSlices("", 4)], [""]);
});

Deno.test("a cut after a high half moves back a unit, or on past the pair at a slice's start", () => {
  const text = "ab🐧cd"; // the pair at units 2 and 3
  assert.equal(pairSafeEnd(text, 0, 3), 2);
  assert.equal(pairSafeEnd(text, 0, 2), 2);
  assert.equal(pairSafeEnd(text, 2, 3), 4);
  assert.equal(pairSafeEnd(text, 0, 99), text.length);
});

Deno.test("an export's equal slices join to the text and never cut a surrogate pair", () => {
  for (const max of [2, 5, 100]) {
    const text = mixed(1234, max);
    assertSlices(text, [...textSlices(text, max)], max + 1);
  }
});
