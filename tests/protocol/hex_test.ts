import assert from "node:assert/strict";
import { hexOf } from "../../lib/protocol/hex.ts";

Deno.test("hexOf writes two lowercase digits a byte, for a view of part of a buffer as for a whole buffer", () => {
  const bytes = new Uint8Array([0x00, 0x0f, 0xa0, 0xff, 0x42]);
  assert.equal(hexOf(bytes), "000fa0ff42");
  assert.equal(hexOf(bytes.buffer), "000fa0ff42");
  assert.equal(hexOf(bytes.subarray(1, 3)), "0fa0");
  assert.equal(hexOf(new Uint8Array(0)), "");
});
