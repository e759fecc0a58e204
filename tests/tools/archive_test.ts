// The truncation archive writer: exact up to its limit, then a UTF-8-safe head, the gap
// marker and the tail; bounded memory whatever the output size.
import assert from "node:assert/strict";
import { ARCHIVE_GAP_MARKER, ARCHIVE_LIMIT_BYTES, startArchive } from "../../lib/tools/_archive.ts";
import { createOutputBuffer, TAKE_MAX_BYTES } from "../../lib/tools/_output_buffer.ts";
import { withDirs } from "./_support.ts";

const encoder = new TextEncoder();

/** The longest prefix of `text` of at most `max` UTF-8 bytes, on a code point. */
function headOfBytes(text: string, max: number): string {
  let out = "";
  let bytes = 0;
  for (const ch of text) {
    const n = encoder.encode(ch).length;
    if (bytes + n > max) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/** The longest suffix of `text` of at most `max` UTF-8 bytes, on a code point. */
function tailOfBytes(text: string, max: number): string {
  const chars = [...text];
  let out = "";
  let bytes = 0;
  for (let i = chars.length - 1; i >= 0; i--) {
    const n = encoder.encode(chars[i]!).length;
    if (bytes + n > max) break;
    out = chars[i]! + out;
    bytes += n;
  }
  return out;
}

Deno.test("an archive past its limit is head + gap marker + tail, cut on code points, for any chunking", async () => {
  await withDirs(async (d) => {
    const text = "start:" + "aé企🐧".repeat(3000) + ":end"; // 1-, 2-, 3- and 4-byte code points
    const limit = 4096;
    const gap = encoder.encode(ARCHIVE_GAP_MARKER).length;
    const headBudget = Math.floor((limit - gap) / 2);
    const expected = headOfBytes(text, headBudget) + ARCHIVE_GAP_MARKER +
      tailOfBytes(text, limit - gap - headBudget);
    for (const step of [1, 3, 7, 100, 5000, text.length]) {
      const w = startArchive(d.scratch, "tool", `call_${step}`, limit);
      for (let i = 0; i < text.length; i += step) await w.append(text.slice(i, i + step));
      assert.ok(w.heldBytes <= limit / 2);
      const r = await w.finish();
      assert.ok(r.ok && r.truncated, `step ${step}`);
      const data = await Deno.readFile(r.path);
      assert.ok(data.length <= limit);
      assert.equal(
        new TextDecoder("utf-8", { fatal: true }).decode(data),
        expected,
        `step ${step}`,
      );
    }
  });
});

Deno.test("an archive within its limit is the exact text, even with surrogate pairs split across appends", async () => {
  await withDirs(async (d) => {
    const text = "🐧".repeat(50) + "x";
    const w = startArchive(d.scratch, "tool", "call_exact", 4096);
    for (let i = 0; i < text.length; i++) await w.append(text[i]!); // halves of each pair apart
    const r = await w.finish();
    assert.ok(r.ok && !r.truncated);
    assert.equal(await Deno.readTextFile(r.path), text);
  });
});

Deno.test("the unread buffer keeps multi-byte text and split surrogate pairs exact, and cuts non-ASCII text on chars", () => {
  const b = createOutputBuffer(100);
  b.append("a\uD83D");
  assert.equal(b.size, 2);
  b.append("\uDE00é企");
  assert.equal(b.size, 5);
  assert.equal(b.take(), "a😀é企");
  const small = createOutputBuffer(4);
  small.append("企鹅企鹅");
  small.append("éé");
  assert.equal(small.size, 4);
  assert.equal(small.take(), "[... 2 chars of earlier output dropped ...]\n企鹅éé");
  const pieces = createOutputBuffer(10);
  pieces.append("one ");
  pieces.append("two");
  assert.deepEqual(pieces.takeChunks(), ["one ", "two"]);
});

Deno.test("a link planted as the archive directory is not written through", async () => {
  await withDirs(async (d) => {
    await Deno.mkdir(d.scratch, { recursive: true });
    await Deno.symlink(d.outside, `${d.scratch}/truncated-tool-output`);
    const w = startArchive(d.scratch, "exec_command", "call_planted", 4096);
    await w.append("model-controlled text\n");
    const r = await w.finish();
    assert.deepEqual(r, { ok: false, code: "ArchiveRefused" });
    assert.deepEqual(
      await Array.fromAsync(Deno.readDir(d.outside)),
      [],
      "nothing was created where the link points",
    );
  });
});

Deno.test("an archive of 40 MB streamed in 64 KiB pieces holds two blocks of memory, its tail kept in the file", async () => {
  await withDirs(async (d) => {
    const piece = "0123456789abcdef".repeat(4096); // 64 KiB
    const pieces = 640; // 40 MiB, five times the default limit
    const w = startArchive(d.scratch, "exec_command", "call_long");
    let held = 0;
    for (let i = 0; i < pieces; i++) {
      await w.append(i === pieces - 1 ? piece.slice(0, -4) + "end\n" : piece);
      held = Math.max(held, w.heldBytes);
    }
    // A tail ring in memory was half the archive limit: 4 MiB a call (attack round 24 R6).
    assert.ok(held <= 128 * 1024, `held ${held} bytes`);
    const r = await w.finish();
    assert.ok(r.ok && r.truncated);
    const data = await Deno.readFile(r.path);
    const gap = encoder.encode(ARCHIVE_GAP_MARKER).length;
    assert.equal(data.length, ARCHIVE_LIMIT_BYTES);
    const text = new TextDecoder().decode(data);
    const head = Math.floor((ARCHIVE_LIMIT_BYTES - gap) / 2);
    const tail = ARCHIVE_LIMIT_BYTES - gap - head;
    const enough = piece.repeat(Math.ceil(head / piece.length) + 1); // more than head or tail
    assert.equal(text.slice(0, head), enough.slice(0, head));
    assert.equal(text.slice(head, head + gap), ARCHIVE_GAP_MARKER);
    const end = (enough.slice(0, -4) + "end\n").slice(-tail);
    assert.ok(text.slice(head + gap) === end, "the tail is the output's end");
  });
});

Deno.test("the unread buffer gives its text back in pieces of at most TAKE_MAX_BYTES, cut on code points", () => {
  const b = createOutputBuffer(1024 * 1024);
  const text = "aé企🐧".repeat(20_000); // 200,000 bytes in one piece
  b.append(text);
  b.append("tail");
  const pieces: string[] = [];
  for (let p = b.takeNext(); p !== undefined; p = b.takeNext()) pieces.push(p);
  assert.equal(pieces.join(""), text + "tail");
  assert.equal(b.size, 0);
  for (const p of pieces) {
    assert.ok(encoder.encode(p).length <= TAKE_MAX_BYTES);
    assert.ok(!/[\uD800-\uDBFF]$/.test(p), "no piece ends in half a pair");
  }
  // Dropped text is reported first, once.
  const small = createOutputBuffer(4);
  small.append("abcdef");
  assert.equal(small.takeNext(), "[... 2 chars of earlier output dropped ...]\n");
  assert.equal(small.takeNext(), "cdef");
  assert.equal(small.takeNext(), undefined);
});
