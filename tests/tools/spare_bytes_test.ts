// The spare arrays an output buffer encodes its next output into (`_spare_bytes.ts`): an array
// given back is reused, its bytes right, and a set keeps a bounded number of bytes.
import assert from "node:assert/strict";
import { MAX_SPARE_BYTES, SPARE_MIN_BYTES, spareBytes } from "../../lib/tools/_spare_bytes.ts";

const decoder = new TextDecoder();

Deno.test("an array given back holds the next text encoded, shorter or not ASCII", () => {
  const spare = spareBytes();
  const first = spare.encode("a".repeat(64 * 1024));
  spare.give(first);
  assert.equal(spare.heldBytes, 64 * 1024);
  // Shorter, and with characters of 2 and 3 bytes: encoded into the array given back.
  const text = "é€x".repeat(9000);
  const second = spare.encode(text);
  assert.equal(second.buffer, first.buffer, "the array given back is reused");
  assert.equal(decoder.decode(second), text);
  assert.equal(spare.heldBytes, 0);
});

Deno.test("a text too long for every kept array gets a new one, and the arrays stay kept", () => {
  const spare = spareBytes();
  spare.give(new Uint8Array(SPARE_MIN_BYTES));
  const text = "€".repeat(SPARE_MIN_BYTES); // 3 bytes each: past the array though as many chars
  const bytes = spare.encode(text);
  assert.equal(decoder.decode(bytes), text);
  assert.equal(spare.heldBytes, SPARE_MIN_BYTES);
});

Deno.test("a set keeps at most MAX_SPARE_BYTES of arrays, however many are given back", () => {
  const spare = spareBytes();
  for (let i = 0; i < 200; i++) spare.give(new Uint8Array(64 * 1024));
  assert.ok(spare.heldBytes <= MAX_SPARE_BYTES, `${spare.heldBytes} bytes kept`);
  assert.ok(spare.heldBytes >= MAX_SPARE_BYTES - 64 * 1024, "kept up to the bound");
  spare.give(new Uint8Array(SPARE_MIN_BYTES - 1));
  assert.ok(spare.heldBytes <= MAX_SPARE_BYTES);
});
