// copyLines (fork, clone and import): the selected lines of a trace, cut by
// the one line reader, copied with their bytes unchanged.
import assert from "node:assert/strict";
import { join } from "node:path";
import { copyLines, createTraceFile } from "../../lib/session/_copy.ts";

async function copied(
  source: string,
  select: (line: number) => boolean,
  lastLine: number,
): Promise<{ text: string; count: number }> {
  const dir = await Deno.makeTempDir();
  try {
    const src = join(dir, "src.jsonl");
    await Deno.writeTextFile(src, source);
    const dest = join(dir, "out", "dest.jsonl");
    let count = 0;
    await createTraceFile(dest, async (sink) => {
      count = await copyLines(src, select, lastLine, sink);
    });
    return { text: await Deno.readTextFile(dest), count };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("copyLines copies the selected lines up to the last one, a line longer than the read buffer whole", async () => {
  const big = "é".repeat(1_500_000); // 3 MB: read in pieces, never gathered
  const source = `{"a":1}\r\n${big}\n{"c":3}\n{"d":4}`;
  assert.deepEqual(await copied(source, (l) => l !== 3, 4), {
    text: `{"a":1}\n${big}\n{"d":4}\n`,
    count: 3,
  });
  assert.deepEqual(await copied(source, () => true, 1), { text: `{"a":1}\n`, count: 1 });
  assert.deepEqual(await copied(source, (l) => l === 3, 9), { text: `{"c":3}\n`, count: 1 });
  assert.deepEqual(await copied(source, () => true, 0), { text: "", count: 0 });
});

Deno.test("copyLines copies nothing of a file that is not the one read before (round 24 secrets B3)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const src = join(dir, "src.jsonl");
    await Deno.writeTextFile(src, `{"a":1}\n`);
    const before = await Deno.stat(src);
    // Swapped for another file by rename since it was read.
    await Deno.writeTextFile(join(dir, "other.jsonl"), `{"a":"SECRET"}\n`);
    await Deno.rename(join(dir, "other.jsonl"), src);
    const dest = join(dir, "out", "dest.jsonl");
    await assert.rejects(
      createTraceFile(dest, async (sink) => {
        await copyLines(src, () => true, 1, sink, { expect: before });
      }),
      /changed while it was read/,
    );
    await assert.rejects(Deno.stat(dest), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("copyLines writes what the check gives instead of a line's bytes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const src = join(dir, "src.jsonl");
    await Deno.writeTextFile(src, `{"a":1}\n{"b":"SECRET"}\n{"c":3}\n`);
    const dest = join(dir, "out", "dest.jsonl");
    const enc = new TextEncoder();
    const dec = new TextDecoder();
    await createTraceFile(dest, async (sink) => {
      await copyLines(src, () => true, 3, sink, {
        check: (bytes) =>
          dec.decode(bytes).includes("SECRET") ? enc.encode(`{"b":"[redacted]"}`) : undefined,
      });
    });
    assert.equal(await Deno.readTextFile(dest), `{"a":1}\n{"b":"[redacted]"}\n{"c":3}\n`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("copyLines copies a long line from the bytes its check read, not from a second read (round 25 secrets B2)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const src = join(dir, "src.jsonl");
    const clean = `{"text":"${"0".repeat(3_000_000)}"}`;
    await Deno.writeTextFile(src, `{"a":1}\n${clean}\n{"c":3}\n`);
    const dest = join(dir, "out", "dest.jsonl");
    const secret = "SECRET-VALUE-0123456789";
    // The check passes the clean line, and the file is rewritten in place (same size, same inode)
    // at that moment, as a racing writer would: what is copied is what was checked.
    const check = (bytes: Uint8Array, line: number) => {
      const text = new TextDecoder().decode(bytes);
      assert.equal(text.includes(secret), false, `line ${line} checked with the secret`);
      if (line === 2) {
        const f = Deno.openSync(src, { write: true });
        f.seekSync(8 + 1_000_000, Deno.SeekMode.Start);
        f.writeSync(new TextEncoder().encode(secret));
        f.close();
      }
      return undefined;
    };
    await createTraceFile(dest, async (sink) => {
      await copyLines(src, () => true, 3, sink, { check });
    });
    const out = await Deno.readTextFile(dest);
    assert.equal(out.includes(secret), false, "bytes never checked were copied");
    assert.equal(out, `{"a":1}\n${clean}\n{"c":3}\n`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
