import assert from "node:assert/strict";
import { join } from "node:path";
import {
  eventMsg,
  modelMsg,
  PenguinError,
  userText,
  validateMessage,
} from "../../lib/protocol/mod.ts";
import {
  readTrace,
  readTraceFile,
  skippedLinesNotice,
  type TraceProblem,
} from "../../lib/trace/mod.ts";
import { meta, sampleTrace, sessionId, toJsonl, withTempDir } from "./_support.ts";
import { prng } from "../support/prng.ts";

const enc = new TextEncoder();
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x1f]/;

Deno.test("a trace truncated at every byte of its last record keeps every earlier record and reports one torn line", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const trace = [...sampleTrace(id), modelMsg(userText("multi-byte tail: héllo ✓ 🐧 done"))];
    const head = enc.encode(toJsonl(trace.slice(0, -1)));
    const last = enc.encode(JSON.stringify(trace[trace.length - 1]));
    const path = join(dir, "t.jsonl");
    const lastLine = trace.length;
    for (let cut = 0; cut <= last.length; cut++) {
      const bytes = new Uint8Array(head.length + cut);
      bytes.set(head);
      bytes.set(last.subarray(0, cut), head.length);
      await Deno.writeFile(path, bytes);
      const { messages, problems } = await readTraceFile(path);
      if (cut === 0) {
        assert.deepEqual(messages, trace.slice(0, -1));
        assert.deepEqual(problems, []);
      } else if (cut === last.length) {
        // Complete but for the newline: the record is whole and kept.
        assert.deepEqual(messages, trace, "a record missing only its newline is kept");
        assert.deepEqual(problems, []);
      } else {
        assert.deepEqual(messages, trace.slice(0, -1), `cut at ${cut}`);
        assert.equal(problems.length, 1, `cut at ${cut}`);
        assert.deepEqual([problems[0]!.line, problems[0]!.kind, problems[0]!.file], [
          lastLine,
          "torn_tail",
          path,
        ]);
        assert.match(
          problems[0]!.reason,
          new RegExp(`^torn last line: .*\\(${cut} byte\\(s\\)\\)$`),
        );
      }
    }
  });
});

function fuzzLines(count: number, seed: number): Uint8Array[] {
  const rand = prng(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const pool = sampleTrace(sessionId()).map((m) => enc.encode(JSON.stringify(m)));
  const randomJson = (depth: number): unknown => {
    switch (int(depth > 2 ? 4 : 7)) {
      case 0:
        return rand() * 1e6 - 5e5;
      case 1:
        return "s".repeat(int(20)) + String.fromCharCode(int(0xd000));
      case 2:
        return null;
      case 3:
        return rand() < 0.5;
      case 4:
        return Array.from({ length: int(4) }, () => randomJson(depth + 1));
      case 5:
        return {
          type: ["model_msg", "event_msg", "session_meta", "x"][int(4)],
          payload: randomJson(depth + 1),
        };
      default:
        return Object.fromEntries(
          Array.from({ length: int(4) }, (_, i) => [`k${i}`, randomJson(depth + 1)]),
        );
    }
  };
  const lines: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const kind = int(5);
    if (kind === 0) {
      lines.push(pool[int(pool.length)]!);
    } else if (kind === 1) {
      const b = new Uint8Array(1 + int(200));
      for (let j = 0; j < b.length; j++) b[j] = int(256);
      lines.push(b.map((x) => (x === 0x0a ? 0x0b : x)));
    } else if (kind === 2) {
      lines.push(enc.encode(JSON.stringify(randomJson(0)) ?? "undefined"));
    } else if (kind === 3) {
      const b = Array.from(pool[int(pool.length)]!);
      for (let m = 1 + int(3); m > 0; m--) {
        const at = int(b.length);
        const op = int(4);
        if (op === 0) b.splice(at, 1);
        else if (op === 1) b.splice(at, 0, 0x20 + int(0x5f));
        else if (op === 2) b[at] = 0x20 + int(0x5f);
        else b.length = at;
      }
      lines.push(new Uint8Array(b.filter((x) => x !== 0x0a)));
    } else {
      lines.push(enc.encode(["", " ", "\t", "\r"][int(4)]!));
    }
  }
  return lines;
}

// Independent of the reader: classify a line on its own.
function expectedOutcome(line: Uint8Array): "blank" | "good" | "bad" {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(line);
  if (text.trim() === "") return "blank";
  try {
    const s = new TextDecoder("utf-8", { fatal: true }).decode(line);
    return validateMessage(JSON.parse(s)).ok ? "good" : "bad";
  } catch {
    return "bad";
  }
}

Deno.test("10,000 fuzzed lines never crash the reader and every bad line is reported", async () => {
  await withTempDir(async (dir) => {
    const lines = fuzzLines(10_000, 20260102);
    const path = join(dir, "fuzz.jsonl");
    const total = lines.reduce((n, l) => n + l.length + 1, 0);
    const bytes = new Uint8Array(total);
    let off = 0;
    for (const l of lines) {
      bytes.set(l, off);
      off += l.length;
      bytes[off++] = 0x0a;
    }
    await Deno.writeFile(path, bytes);
    const outcomes = lines.map(expectedOutcome);
    const goodLines = outcomes.flatMap((o, i) => (o === "good" ? [i + 1] : []));
    const badLines = outcomes.flatMap((o, i) => (o === "bad" ? [i + 1] : []));
    assert.ok(goodLines.length > 1000 && badLines.length > 5000, "the fuzz mix has both kinds");
    for (const chunkSize of [1 << 20, 13]) {
      const { records, problems } = await readTraceFile(path, { chunkSize });
      assert.deepEqual(records.map((r) => r.line), goodLines, `records, chunk ${chunkSize}`);
      assert.deepEqual(problems.map((p) => p.line), badLines, `problems, chunk ${chunkSize}`);
      for (const p of problems) {
        assert.ok(p.kind === "malformed" || p.kind === "invalid", p.kind);
        assert.ok(p.reason.length > 0 && !CONTROL.test(p.reason), "reasons are one clean line");
      }
    }
    assert.deepEqual(await Deno.readFile(path), bytes, "reading never modifies the file");
  });
});

Deno.test("a single 30 MB line is read whole", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const huge = modelMsg(userText("z".repeat(30 * 1024 * 1024)));
    const path = join(dir, "big.jsonl");
    await Deno.writeTextFile(path, toJsonl([meta(id), huge, eventMsg({ type: "request_begin" })]));
    const seen: Array<[number, string]> = [];
    for await (const rec of readTrace(path)) seen.push([rec.line, rec.message.type]);
    assert.deepEqual(seen, [[1, "session_meta"], [2, "model_msg"], [3, "event_msg"]]);
    const { messages } = await readTraceFile(path, { chunkSize: 1 << 16 });
    assert.equal((messages[1]!.payload as { text: string }).text.length, 30 * 1024 * 1024);
  });
});

Deno.test("lines of several megabytes, whole or damaged, are read and reported like short ones", async () => {
  await withTempDir(async (dir) => {
    const id = sessionId();
    const big = (n: number, c: string) => JSON.stringify(modelMsg(userText(c.repeat(n))));
    const badStatus = JSON.stringify(
      eventMsg({ type: "request_end", status: "completed", error_message: "e".repeat(3 << 20) }),
    )
      .replace('"completed"', '"nope"');
    const parts = [
      JSON.stringify(meta(id)),
      big(2_500_000, "a"),
      big(2_000_000, "b").slice(0, -2) + "!!",
      badStatus,
      JSON.stringify(eventMsg({ type: "request_begin" })),
    ];
    const path = join(dir, "long.jsonl");
    await Deno.writeTextFile(
      path,
      parts.join("\n") + "\n" + big(2_000_000, "c").slice(0, 1_500_000),
    );
    for (const chunkSize of [1 << 20, 4096]) {
      const { records, problems } = await readTraceFile(path, { chunkSize });
      assert.deepEqual(records.map((r) => r.line), [1, 2, 5], `chunk ${chunkSize}`);
      assert.equal((records[1]!.message.payload as { text: string }).text, "a".repeat(2_500_000));
      assert.deepEqual(problems.map((p) => [p.line, p.kind]), [[3, "malformed"], [4, "invalid"], [
        6,
        "torn_tail",
      ]]);
      assert.match(problems[1]!.reason, /^payload\.status: /);
      assert.match(problems[2]!.reason, /\(1500000 byte\(s\)\)$/);
    }
  });
});

Deno.test("blank and whitespace-only lines are ignored and line numbers stay true", async () => {
  await withTempDir(async (dir) => {
    const trace = sampleTrace(sessionId());
    const path = join(dir, "blank.jsonl");
    const parts = [
      "\n",
      JSON.stringify(trace[0]),
      "\n  \n\t\r\n",
      JSON.stringify(trace[1]),
      "\r\n\n",
      "   ",
    ];
    await Deno.writeTextFile(path, parts.join(""));
    const { records, problems } = await readTraceFile(path);
    assert.deepEqual(records.map((r) => r.line), [2, 5]);
    assert.deepEqual(records.map((r) => r.message), trace.slice(0, 2));
    assert.deepEqual(problems, []);
  });
});

Deno.test("malformed and schema-invalid middle lines are skipped and reported with line and reason", async () => {
  await withTempDir(async (dir) => {
    const trace = sampleTrace(sessionId());
    const path = join(dir, "bad.jsonl");
    const badStatus = JSON.stringify(trace[7]).replace('"completed"', '"done"');
    const content = toJsonl(trace.slice(0, 2)) + "{not json\n" + badStatus + "\n" +
      toJsonl(trace.slice(2));
    await Deno.writeTextFile(path, content);
    const problems: TraceProblem[] = [];
    const lines: number[] = [];
    for await (const r of readTrace(path, { onProblem: (p) => problems.push(p) })) {
      lines.push(r.line);
    }
    assert.deepEqual(lines, [1, 2, 5, 6, 7, 8, 9, 10]);
    assert.deepEqual(problems.map((p) => [p.line, p.kind]), [[3, "malformed"], [4, "invalid"]]);
    assert.match(problems[0]!.reason, /^not valid JSON \(/);
    assert.match(
      problems[1]!.reason,
      /^payload\.status: expected one of "completed", .*, found "done"$/,
    );
    assert.equal(
      skippedLinesNotice(path, problems),
      `[trace] skipped 2 malformed line(s) [3, 4] in ${path}`,
    );
    // Without validation the schema-invalid record comes through.
    const loose = await readTraceFile(path, { validate: false });
    assert.deepEqual(loose.problems.map((p) => p.line), [3]);
    assert.equal(loose.records.length, trace.length + 1);
  });
});

Deno.test("strict mode throws on the first problem, naming file and line", async () => {
  await withTempDir(async (dir) => {
    const trace = sampleTrace(sessionId());
    const path = join(dir, "strict.jsonl");
    await Deno.writeTextFile(path, toJsonl(trace.slice(0, 3)) + "[1,2\n" + "oops\n");
    await assert.rejects(
      readTraceFile(path, { strict: true }),
      (e) =>
        e instanceof PenguinError && e.kind === "data" &&
        e.message.startsWith(`${path}:4: not valid JSON (`),
    );
    await Deno.writeTextFile(path, toJsonl(trace.slice(0, 3)) + '{"timestamp":');
    await assert.rejects(
      readTraceFile(path, { strict: true }),
      (e) => e instanceof PenguinError && e.message.startsWith(`${path}:4: torn last line`),
    );
    await Deno.writeTextFile(path, toJsonl(trace));
    assert.equal((await readTraceFile(path, { strict: true })).messages.length, trace.length);
  });
});

Deno.test("reading a missing trace is a not_found error naming the path", async () => {
  await assert.rejects(
    readTraceFile("/nonexistent/penguin/x.jsonl"),
    (e) =>
      e instanceof PenguinError && e.kind === "not_found" &&
      e.message.includes('"/nonexistent/penguin/x.jsonl"'),
  );
});

Deno.test("readTrace with holding reads only the lines holding the text, short or huge", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    const call = (id: string, args: string) =>
      JSON.stringify({
        timestamp: "2026-12-01T23:08:00.000Z",
        type: "model_msg",
        payload: {
          type: "tool_call",
          role: "assistant",
          name: "exec_command",
          arguments: args,
          tool_call_id: id,
          stop_reason: "completed",
        },
      });
    const text = (t: string) =>
      JSON.stringify({
        timestamp: "2026-12-01T23:08:00.000Z",
        type: "model_msg",
        payload: { type: "text", role: "assistant", text: t, stop_reason: "completed" },
      });
    const big = "y".repeat(3 * 1024 * 1024);
    await Deno.writeTextFile(
      path,
      [text("a"), call("c1", "{}"), "{not json", text(big), call("c2", JSON.stringify({ big }))]
        .join("\n") + "\n",
    );
    const problems: unknown[] = [];
    const ids: string[] = [];
    for await (
      const r of readTrace(path, {
        holding: '"tool_call"',
        onProblem: (p) => problems.push(p),
        chunkSize: 64 * 1024,
      })
    ) {
      assert.equal(r.message.type, "model_msg");
      if (r.message.type === "model_msg" && r.message.payload.type === "tool_call") {
        ids.push(r.message.payload.tool_call_id);
      }
    }
    assert.deepEqual(ids, ["c1", "c2"]);
    assert.deepEqual(problems, [], "lines not holding the text are not read, so not reported");
  });
});
