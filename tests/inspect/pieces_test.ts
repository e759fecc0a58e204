// A document in pieces (lib/inspect/_pieces.ts): a long text is written in slices that never cut
// a surrogate pair, each slice mapped on its own, and what is written (and its encoding) is the
// document joined whole; no slice of a long text is short enough for a writer to keep.
import assert from "node:assert/strict";
import {
  joinPieces,
  MIN_SLICE_CHARS,
  type Piece,
  SLICE_CHARS,
  textSlices,
  writePieces,
} from "../../lib/inspect/_pieces.ts";
import { esc } from "../../lib/inspect/_chart.ts";

const PAIR = "😀"; // two UTF-16 units

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

Deno.test("textSlices gives a short text as it is, a long one in even slices that never cut a pair", () => {
  assert.deepEqual([...textSlices("abc", 8)], ["abc"]);
  assert.deepEqual([...textSlices("", 8)], [""]);
  for (const text of [PAIR.repeat(50), "x" + PAIR.repeat(50), "abcdefghij".repeat(7) + PAIR]) {
    for (const max of [4, 5, 7, 16]) {
      const slices = [...textSlices(text, max)];
      assert.equal(slices.join(""), text, `${max}: the slices make the text`);
      assert.equal(slices.length, Math.ceil(text.length / max), `${max}: as few slices as fit`);
      for (const s of slices.slice(0, -1)) {
        assert.ok(!isHigh(s.charCodeAt(s.length - 1)), `${max}: a slice ends inside a pair`);
      }
      for (const s of slices) {
        assert.ok(s.length <= max + 1 && s.length > max / 2 - 1, `${max}: a slice of ${s.length}`);
      }
    }
  }
});

Deno.test("every slice of a text cut with the default size is at least MIN_SLICE_CHARS long", () => {
  for (const length of [SLICE_CHARS + 1, 2 * SLICE_CHARS + 3, 5 * SLICE_CHARS - 1]) {
    const slices = [...textSlices("y".repeat(length - 1) + "z")];
    assert.ok(slices.length > 1);
    for (const s of slices) assert.ok(s.length >= MIN_SLICE_CHARS, `a slice of ${s.length}`);
  }
});

Deno.test("writePieces writes what joinPieces joins, a long text in slices, and it encodes the same", async () => {
  const unit = `a&b<c>"d'e\n${PAIR}é\u{10FFFF}x`;
  // Three slices, the first cut inside a pair if cut at its even length.
  const long = PAIR.repeat(SLICE_CHARS) + "x" + unit.repeat(SLICE_CHARS / unit.length) + "\ud800";
  const quote = (s: string) => s.replaceAll("\n", "\n> ");
  const pieces: Piece[] = [
    "<p>",
    { text: long, map: esc },
    "</p>",
    "> ",
    { text: long, map: quote },
    long,
    "",
  ];
  const writes: string[] = [];
  await writePieces(pieces, (text) => Promise.resolve(void writes.push(text)));
  const whole = joinPieces(pieces);
  assert.equal(writes.join(""), whole);
  assert.ok(writes.every((w) => w.length <= 6 * SLICE_CHARS + 1), "no write holds a text whole");
  assert.ok(!writes.includes(""), "no empty write");
  const enc = new TextEncoder();
  const parts = writes.map((w) => enc.encode(w));
  const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    joined.set(p, at);
    at += p.length;
  }
  assert.deepEqual(joined, enc.encode(whole), "each write encodes as its part of the whole");
});
