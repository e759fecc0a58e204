// The unread output all the command sessions of a process hold together (lib/tools/_output_buffer.ts
// PROCESS_UNREAD_BYTES): many background commands printing CJK text that nobody reads stay within
// it; the largest buffers drop their oldest output first, each keeps a share, the marker says so.
// A file of its own: the bound is the process's.
import assert from "node:assert/strict";
import {
  createOutputBuffer,
  droppedMarker,
  MIN_UNREAD_BYTES,
  PROCESS_UNREAD_BYTES,
  processUnreadBytes,
} from "../../lib/tools/_output_buffer.ts";

const utf8 = (s: string) => new TextEncoder().encode(s).length;

Deno.test("40 buffers of unread CJK output hold no more than the process bound together", () => {
  const buffers = Array.from({ length: 40 }, () => createOutputBuffer());
  const piece = "中".repeat(16 * 1024); // 48 KiB of UTF-8
  // Each buffer is sent 1 Mi chars (3 MiB): 120 MiB in all without the bound.
  const sent = buffers.map(() => 0);
  for (let round = 0; round < 64; round++) {
    for (const [i, b] of buffers.entries()) {
      const text = round === 63 ? piece.slice(0, -8) + `END-${i}` : piece;
      b.append(text);
      sent[i]! += text.length;
      assert.ok(processUnreadBytes() <= PROCESS_UNREAD_BYTES, `round ${round}, buffer ${i}`);
    }
  }
  for (const [i, b] of buffers.entries()) {
    const text = b.take();
    const marker = /^\[\.\.\. (\d+) chars of earlier output dropped \.\.\.\]\n/.exec(text);
    assert.ok(marker, `buffer ${i} says what it dropped`);
    const kept = text.slice(marker[0].length);
    assert.ok(kept.endsWith(`END-${i}`), `buffer ${i} keeps its newest output`);
    assert.match(kept, /^中+END-\d+$/, `buffer ${i} is cut on a character`);
    assert.ok(utf8(kept) >= MIN_UNREAD_BYTES, `buffer ${i} keeps at least its share`);
    assert.equal(Number(marker[1]) + kept.length, sent[i], `buffer ${i} counts right`);
    assert.equal(b.size, 0);
  }
  assert.notEqual(droppedMarker(1), "");
});

Deno.test("one buffer alone keeps its own limit, and what is taken leaves the process's total", () => {
  const before = processUnreadBytes();
  const b = createOutputBuffer();
  const text = "企".repeat(1024 * 1024); // its limit in chars: 3 MiB, under the process bound
  b.append(text);
  assert.equal(b.dropped, 0);
  assert.ok(processUnreadBytes() >= before + utf8(text));
  assert.equal(b.take(), text);
  assert.ok(processUnreadBytes() <= before + 1024 * 1024, "only spare arrays are left");
});
