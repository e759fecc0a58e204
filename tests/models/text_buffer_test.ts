/**
 * What a TextBuffer (lib/models/_text_buffer.ts) keeps while its text grows
 * by small pieces, as a model streams it: about one byte a character, not
 * every piece. Pieces kept until 64 Ki characters had come (4096 of a
 * 16-character stream) outlived V8's young generation and piled up in the
 * old one: four subagents streaming 7.9 MB each in 16-character events took
 * penguin to 285-369 MB. Measured on the live heap after full collections.
 *
 * @module
 */
import assert from "node:assert/strict";
import { TextBuffer } from "../../lib/models/_text_buffer.ts";
import { garbageCollector } from "../../lib/state/_gc.ts";

/** A 16-character string of its own, flat, as JSON.parse makes a delta's text. */
function piece(n: number): string {
  const codes = Array.from({ length: 16 }, (_, i) => 97 + ((n >> i) & 15));
  return String.fromCharCode(...codes);
}

Deno.test("64 texts of 60 000 characters in 16-character pieces keep under 1.5 bytes a character", () => {
  const gc = garbageCollector();
  const texts = 64;
  const pieces = 3750;
  gc();
  const before = Deno.memoryUsage().heapUsed;
  const buffers: TextBuffer[] = [];
  for (let t = 0; t < texts; t++) {
    const b = new TextBuffer();
    for (let i = 0; i < pieces; i++) b.append(piece(t * pieces + i));
    buffers.push(b);
  }
  gc();
  const kept = Deno.memoryUsage().heapUsed - before;
  const chars = texts * pieces * 16;
  assert.equal(buffers.reduce((n, b) => n + b.length, 0), chars);
  assert.ok(kept < 1.5 * chars, `${(kept / chars).toFixed(2)} bytes a character`);
  assert.equal(buffers[1]!.text().slice(0, 32), piece(pieces) + piece(pieces + 1));
  assert.equal(buffers[1]!.text().length, pieces * 16);
});
