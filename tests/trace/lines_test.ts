import assert from "node:assert/strict";
import { join } from "node:path";
import { modelMsg, PenguinError, userText } from "../../lib/protocol/mod.ts";
import {
  type FollowedLine,
  followLines,
  forEachLine,
  type Line,
  linesWith,
  MAX_LINE_BYTES,
  readFirstLine,
  readLines,
  type ReadLinesOptions,
  readTraceFile,
  textLines,
  textLinesFromEnd,
} from "../../lib/trace/mod.ts";
import { sampleTrace, sessionId, toJsonl, withTempDir } from "./_support.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

interface Seen {
  no: number;
  text: string;
  terminated: boolean;
  kind: Line["kind"];
}

/** Every line of the file at `path`, long lines read whole. */
async function allLines(path: string, options: ReadLinesOptions = {}): Promise<Seen[]> {
  const file = await Deno.open(path, { read: true });
  const out: Seen[] = [];
  try {
    for await (const batch of readLines(file, options)) {
      for (const l of batch) {
        const text = l.kind === "text"
          ? l.text
          : dec.decode(l.kind === "bytes" ? l.bytes : await l.read());
        out.push({ no: l.no, text, terminated: l.terminated, kind: l.kind });
      }
    }
  } finally {
    file.close();
  }
  return out;
}

/** The lines a plain split of `text` gives (LF or CRLF ends, last line unterminated when it has no LF). */
function expected(text: string): { no: number; text: string; terminated: boolean }[] {
  const parts = text.split("\n");
  const last = parts.pop()!;
  const out = parts.map((t, i) => ({ no: i + 1, text: t.replace(/\r$/, ""), terminated: true }));
  if (last !== "") out.push({ no: out.length + 1, text: last, terminated: false });
  return out;
}

const strip = (seen: Seen[]) => seen.map(({ no, text, terminated }) => ({ no, text, terminated }));

Deno.test("readLines cuts at every LF, drops a CR before it, and gives the same lines at any buffer size", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    const text = 'one\r\n{"two":2}\n\n  \r\nfünf ✓ 🐧\r\n' + "x".repeat(300) + "\r\nlast";
    await Deno.writeTextFile(path, text);
    for (const chunkSize of [1, 2, 3, 7, 64, 1 << 20]) {
      for (const decode of [true, false]) {
        for (const gatherLimit of [4, 50, 1 << 20]) {
          const seen = await allLines(path, { chunkSize, decode, gatherLimit });
          assert.deepEqual(strip(seen), expected(text), `${chunkSize}/${decode}/${gatherLimit}`);
        }
      }
    }
  });
});

Deno.test("a last line without its newline comes as not terminated; with one, every line is terminated", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    await Deno.writeTextFile(path, "a\nb");
    assert.deepEqual(strip(await allLines(path)), [
      { no: 1, text: "a", terminated: true },
      { no: 2, text: "b", terminated: false },
    ]);
    await Deno.writeTextFile(path, "a\nb\n");
    assert.ok((await allLines(path)).every((l) => l.terminated));
  });
});

Deno.test("valid UTF-8 takes the decoded fast path; a run holding a line that is not valid UTF-8 falls back to bytes line by line, with true line numbers", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    const bad = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]);
    const bytes = new Uint8Array([...enc.encode("a\nb\n"), ...bad, ...enc.encode("\nc\n")]);
    await Deno.writeFile(path, bytes);
    const seen = await allLines(path);
    // Lines 1-3 share a decode window with the bad line 3: byte by byte; the fast path resumes after it.
    assert.deepEqual(seen.map((l) => [l.no, l.kind]), [
      [1, "bytes"],
      [2, "bytes"],
      [3, "bytes"],
      [4, "text"],
    ]);
    const clean = join(dir, "clean.jsonl");
    await Deno.writeTextFile(clean, "a\nb\n");
    assert.deepEqual((await allLines(clean)).map((l) => l.kind), ["text", "text"]);
    const raw = await allLines(path, { decode: false });
    assert.ok(raw.every((l) => l.kind === "bytes"));
  });
});

Deno.test("a line longer than the gather limit is never gathered: it comes as a range read on demand, and the lines after it are right", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    const huge = "h".repeat(5000) + "END";
    await Deno.writeTextFile(path, `first\n${huge}\r\nafter\n${huge}`);
    const file = await Deno.open(path, { read: true });
    try {
      const got: string[] = [];
      for await (const batch of readLines(file, { chunkSize: 256, gatherLimit: 1000 })) {
        for (const l of batch) {
          if (l.kind !== "long") {
            got.push(l.kind === "text" ? l.text : dec.decode(l.bytes));
            continue;
          }
          assert.equal(l.size, huge.length);
          assert.equal(dec.decode(await l.read(l.size - 3, l.size)), "END");
          assert.equal(dec.decode(await l.read(0, 2)), "hh");
          got.push(`long:${l.no}:${l.terminated}:${(await l.read()).length}`);
        }
      }
      assert.deepEqual(got, ["first", `long:2:true:${huge.length}`, "after", `long:4:false:5003`]);
    } finally {
      file.close();
    }
  });
});

Deno.test("a huge line among records is read whole by readTrace, with the line numbers after it true", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    const big = modelMsg(userText("y".repeat(3 << 20)));
    const trace = [...sampleTrace(sessionId()), big, modelMsg(userText("after"))];
    await Deno.writeTextFile(path, toJsonl(trace) + "{oops\n");
    const { records, problems } = await readTraceFile(path, { chunkSize: 64 * 1024 });
    assert.deepEqual(records.map((r) => r.message), trace);
    assert.deepEqual(records.map((r) => r.line), trace.map((_, i) => i + 1));
    assert.deepEqual(problems.map((p) => [p.line, p.kind]), [[trace.length + 1, "malformed"]]);
  });
});

Deno.test("an invalid JSON line is reported with its line number, on the fast path and the byte path alike", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    const good = toJsonl(sampleTrace(sessionId()));
    const lines = good.split("\n").length - 1;
    // Line lines+1 breaks the JSON; line lines+2 is not UTF-8 (forcing the byte path); then a good record.
    const tail = new Uint8Array([
      ...enc.encode('{"timestamp": nope}\r\n'),
      0xc3,
      0x28,
      0x0a,
      ...enc.encode(toJsonl([modelMsg(userText("end"))])),
    ]);
    await Deno.writeFile(path, new Uint8Array([...enc.encode(good), ...tail]));
    for (const chunkSize of [5, 1 << 20]) {
      const { messages, problems } = await readTraceFile(path, { chunkSize });
      assert.equal(messages.length, lines + 1);
      assert.deepEqual(problems.map((p) => [p.line, p.kind]), [
        [lines + 1, "malformed"],
        [lines + 2, "malformed"],
      ]);
      assert.match(problems[0]!.reason, /^not valid JSON/);
      assert.equal(problems[1]!.reason, "not valid UTF-8");
      await assert.rejects(
        readTraceFile(path, { chunkSize, strict: true }),
        (e) =>
          e instanceof PenguinError && e.kind === "data" &&
          e.message.startsWith(`${path}:${lines + 1}: not valid JSON`),
      );
    }
  });
});

Deno.test("following a file another writer appends to returns only complete lines; a partial one waits for its newline", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    await Deno.writeTextFile(path, "old\n");
    const writer = await Deno.open(path, { append: true });
    const follower = await followLines(path);
    try {
      assert.deepEqual((await follower.read()).lines, [{ no: 1, text: "old" }]);
      await writer.write(enc.encode('{"half":'));
      const partial = await follower.read();
      assert.deepEqual(partial, { lines: [], bytes: 8 });
      assert.equal(follower.pending(), 8);
      await writer.write(enc.encode(' "done"}\r\nnext\npart'));
      assert.deepEqual((await follower.read()).lines, [
        { no: 2, text: '{"half": "done"}' },
        { no: 3, text: "next" },
      ]);
      assert.equal(follower.pending(), 4);
      assert.deepEqual(await follower.read(), { lines: [], bytes: 0 });
      // Truncated and rewritten: it notices, and starts over.
      await Deno.writeTextFile(path, "new\n");
      assert.equal(await follower.shrank(), true);
      await follower.restart();
      assert.deepEqual((await follower.read()).lines, [{ no: 1, text: "new" }]);
    } finally {
      follower.close();
      writer.close();
    }
  });
});

Deno.test("following a line past MAX_LINE_BYTES counts it, keeps none of it, and goes on after its newline", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    await Deno.writeTextFile(path, "first\n");
    const follower = await followLines(path);
    try {
      assert.deepEqual((await follower.read()).lines, [{ no: 1, text: "first" }]);
      // A sparse line of MAX_LINE_BYTES + 1 bytes (zeros), not yet ended.
      {
        using f = await Deno.open(path, { write: true });
        await f.truncate(6 + MAX_LINE_BYTES + 1);
      }
      while ((await follower.read()).bytes > 0) { /* the rest of the long line */ }
      assert.equal(follower.pending(), MAX_LINE_BYTES + 1);
      await Deno.writeTextFile(path, "\nnext\n", { append: true });
      const got: FollowedLine[] = (await follower.read()).lines;
      assert.deepEqual(got, [
        { no: 2, text: "", skipped: MAX_LINE_BYTES + 1 },
        { no: 3, text: "next" },
      ]);
    } finally {
      follower.close();
    }
  });
});

Deno.test("following a long backlog returns it in reads of about 8 MiB of lines", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    const line = "x".repeat(1023);
    await Deno.writeTextFile(path, `${line}\n`.repeat(20 * 1024)); // 20 MiB
    const follower = await followLines(path);
    try {
      const counts: number[] = [];
      for (let r = await follower.read(); r.bytes > 0; r = await follower.read()) {
        counts.push(r.lines.length);
      }
      assert.equal(counts.reduce((a, b) => a + b, 0), 20 * 1024);
      assert.ok(counts.length >= 3, `reads: ${counts.join(", ")}`);
      assert.ok(Math.max(...counts) <= 9 * 1024, `reads: ${counts.join(", ")}`);
    } finally {
      follower.close();
    }
  });
});

Deno.test("following from the end skips what the file holds and the rest of a line caught half-written", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    await Deno.writeTextFile(path, "a\nhalf-writ");
    const follower = await followLines(path, { fromEnd: true });
    try {
      await Deno.writeTextFile(path, "ten\nb\n", { append: true });
      assert.deepEqual((await follower.read()).lines.map((l) => l.text), ["b"]);
    } finally {
      follower.close();
    }
  });
});

Deno.test("text windows split into complete lines from the head and from the tail, CRs dropped", () => {
  assert.deepEqual([...textLines("a\r\nb\nc", false)], ["a", "b"]);
  assert.deepEqual([...textLines("a\r\nb\nc", true)], ["a", "b", "c"]);
  assert.deepEqual([...textLinesFromEnd("xa\r\nb\nc\r\n", false)], ["", "c", "b"]);
  assert.deepEqual([...textLinesFromEnd("a\r\nb\nc", true)], ["c", "b", "a"]);
});

Deno.test("forEachLine cuts a text in place like textLines, from any line start", () => {
  const spans = (text: string, complete: boolean, from = 0) => {
    const out: string[] = [];
    forEachLine(text, complete, from, (start, end) => out.push(text.slice(start, end)));
    return out;
  };
  for (const text of ["a\r\nb\n\nc", "a\nb\n", "", "\r\n\n"]) {
    for (const complete of [true, false]) {
      assert.deepEqual(spans(text, complete), [...textLines(text, complete)], JSON.stringify(text));
    }
  }
  assert.deepEqual(spans("head\nx\r\ny", true, 5), ["x", "y"]);
  assert.deepEqual(spans("head\nx\r\ny", true, 4), ["", "x", "y"], "from a newline: an empty line");
});

Deno.test("linesWith gives the lines holding a marker at any buffer size, long lines skipped", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "m.jsonl");
    const long = `{"mark":1,"pad":"${"x".repeat(100)}"}`;
    await Deno.writeTextFile(path, `a\n{"mark":2}\nb mark\n${long}\nc\n{"mark":3}`);
    for (const chunkSize of [4, 7, 16, 1 << 20]) {
      const file = await Deno.open(path, { read: true });
      const found: string[] = [];
      try {
        for await (const l of linesWith(file, enc.encode('"mark"'), 40, chunkSize)) {
          found.push(dec.decode(l));
        }
      } finally {
        file.close();
      }
      // A long line within one buffer is still handed over; past a buffer it is skipped unread.
      const want = chunkSize > long.length
        ? ['{"mark":2}', long, '{"mark":3}']
        : ['{"mark":2}', '{"mark":3}'];
      assert.deepEqual(found, want, `chunk ${chunkSize}`);
    }
  });
});

Deno.test("readFirstLine gives the first line, the whole file when it has no newline, and null past the cap", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    await Deno.writeTextFile(path, '{"a":1}\r\n{"b":2}\n');
    assert.equal(await readFirstLine(path), '{"a":1}');
    await Deno.writeTextFile(path, "only");
    assert.equal(await readFirstLine(path), "only");
    await Deno.writeTextFile(path, "z".repeat(200_000));
    assert.equal(await readFirstLine(path, 100_000), null);
    assert.equal(await readFirstLine(join(dir, "missing.jsonl")), null);
  });
});

Deno.test("readLines starts where the file stands, and long lines read from the right place", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    await Deno.writeTextFile(path, "skip me\n" + "L".repeat(300) + "!\nend\n");
    const file = await Deno.open(path, { read: true });
    try {
      await file.seek(8, Deno.SeekMode.Start);
      const got: string[] = [];
      for await (const batch of readLines(file, { chunkSize: 16, gatherLimit: 64 })) {
        for (const l of batch) {
          if (l.kind === "long") got.push(dec.decode(await l.read(l.size - 2, l.size)));
          else got.push(l.kind === "text" ? l.text : dec.decode(l.bytes));
        }
      }
      assert.deepEqual(got, ["L!", "end"]);
    } finally {
      file.close();
    }
  });
});

Deno.test("a followed line that spans several reads comes whole, characters cut by the reads included", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    // 3.5 MiB of 2-, 3- and 4-byte characters: reads of 1 MiB end inside them.
    const long = "é€😀".repeat(400_000);
    await Deno.writeTextFile(path, `${long}\nafter\n`);
    const follower = await followLines(path);
    try {
      const got: FollowedLine[] = [];
      for (let r = await follower.read(); r.bytes > 0; r = await follower.read()) {
        got.push(...r.lines);
      }
      assert.equal(got.length, 2);
      assert.ok(got[0]!.text === long, "the long line is whole");
      assert.deepEqual(got[1], { no: 2, text: "after" });
      // The read buffer is still the follower's own: later lines are read right.
      await Deno.writeTextFile(path, "later\n", { append: true });
      assert.deepEqual((await follower.read()).lines, [{ no: 3, text: "later" }]);
    } finally {
      follower.close();
    }
  });
});
