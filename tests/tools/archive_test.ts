// The truncation archive writer: exact up to its limit, then a UTF-8-safe head, the gap
// marker and the tail; bounded memory whatever the output size.
import assert from "node:assert/strict";
import { ARCHIVE_GAP_MARKER, startArchive } from "../../lib/tools/_archive.ts";
import { createOutputBuffer } from "../../lib/tools/_output_buffer.ts";
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
