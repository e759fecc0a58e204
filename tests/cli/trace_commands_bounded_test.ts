// Trace commands given a hostile trace stay bounded (attack round 24 bounded): what they keep per
// record is counted past a limit, and a line past the record bound is not read, whatever command
// reads it. Real `penguin` processes; peaks as /usr/bin/time would report them.
import assert from "node:assert/strict";
import { join } from "node:path";
import { withRoot } from "../support/roots.ts";
import { runCli } from "../support/cli.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { sessionMetaRecord } from "../support/trace_meta.ts";

const MB = 1000 * 1000;
const PEAK_LIMIT = 300 * MB;
const ID = "session-2026-12-01-10-00-00-0badc0de";

/** A trace of session ID in `root`'s traces: its meta, then `lines`; its path. */
async function writeTrace(root: string, lines: Iterable<string>): Promise<string> {
  const dir = join(root, "default_project", "agents", "default_agent", "traces", "2026-12-01");
  await Deno.mkdir(dir, { recursive: true });
  const path = join(dir, `${ID}_001.jsonl`);
  using f = await Deno.open(path, { write: true, createNew: true });
  const enc = new TextEncoder();
  let batch = JSON.stringify(sessionMetaRecord(ID)) + "\n";
  for (const line of lines) {
    batch += line + "\n";
    if (batch.length > 1 << 20) {
      await f.write(enc.encode(batch));
      batch = "";
    }
  }
  await f.write(enc.encode(batch));
  return path;
}

/** `n` pointers to distinct missing children, each id 250 characters long. */
function* longPointers(n: number): Generator<string> {
  const pad = "p".repeat(250 - 37);
  for (let i = 0; i < n; i++) {
    yield JSON.stringify({
      timestamp: "2026-12-01T10:00:01.000Z",
      type: "event_msg",
      payload: { type: "subagent", session_id: `${pad}${i.toString(16).padStart(37, "0")}` },
    });
  }
}

function* pointers(n: number): Generator<string> {
  for (let i = 0; i < n; i++) {
    yield JSON.stringify({
      timestamp: "2026-12-01T10:00:01.000Z",
      type: "event_msg",
      payload: {
        type: "subagent",
        session_id: `session-2026-12-01-10-00-00-${(i + 1).toString(16).padStart(8, "0")}`,
      },
    });
  }
}

Deno.test("trace validate looks for the children of 1000 pointers of a file and counts the others (R1)", async () => {
  await withRoot(async (root) => {
    const path = await writeTrace(root, pointers(5000));
    const r = await runCli(["--root", root, "trace", "validate", path]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout.split("no trace of the child session").length - 1, 1000);
    assert.match(r.stdout, /the children of 4000 more pointer\(s\) not looked for/);
  });
});

Deno.test({
  name: "trace stats of a trace whose tail is a 1 GiB line reports it unread, peak ≤ 300 MB (R14)",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withRoot(async (root) => {
      const path = await writeTrace(root, []);
      {
        // A sparse tail of 1 GiB, no newline: the file's length, none of its disk.
        using f = await Deno.open(path, { write: true });
        const { size } = await f.stat();
        await f.truncate(size + 1024 ** 3);
      }
      const r = await runCliPeak(["--root", root, "trace", "stats", path], root);
      assert.ok(r.peakBytes <= PEAK_LIMIT, `peak ${Math.round(r.peakBytes / MB)} MB`);
      assert.match(r.stderr, /skipped 1 malformed line\(s\) \[2\]/);
    });
  },
});

function* toolCalls(n: number): Generator<string> {
  for (let i = 0; i < n; i++) {
    yield JSON.stringify({
      timestamp: "2026-12-01T10:00:01.000Z",
      type: "model_msg",
      payload: {
        type: "tool_call",
        role: "assistant",
        tool_call_id: `c${i}`,
        name: `tool_${i}`,
        arguments: "{}",
        stop_reason: "completed",
      },
    });
    yield JSON.stringify({
      timestamp: "2026-12-01T10:00:01.000Z",
      type: "model_msg",
      payload: {
        type: "tool_call_output",
        role: "user",
        tool_call_id: `c${i}`,
        output: "ok",
        stop_reason: "completed",
      },
    });
  }
}

Deno.test("trace stats keeps 200 tool rows and 1000 groups; the others count as one (R7)", async () => {
  await withRoot(async (root) => {
    const path = await writeTrace(root, toolCalls(3000));
    const byTool = await runCli(["--root", root, "trace", "stats", path, "--by", "tool", "--json"]);
    assert.equal(byTool.code, 0, byTool.stderr);
    assert.ok(byTool.stdout.includes('"(other)"'), "groups past 1000 count as one");
    assert.ok(!byTool.stdout.includes('"tool_2999"'), "no group of its own past the limit");
    const bySession = await runCli(["--root", root, "trace", "stats", path, "--json"]);
    assert.equal(bySession.code, 0, bySession.stderr);
    assert.ok(bySession.stdout.includes('"(other tools)"'), "tools past 200 count as one");
    assert.ok(!bySession.stdout.includes('"tool_2999"'), "no tool row of its own past the limit");
  });
});

Deno.test({
  name:
    "sessions list of 24 sessions whose meta holds a 15 MB workspace keeps none of it, peak ≤ 300 MB (R4)",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withRoot(async (root) => {
      const dir = join(root, "default_project", "agents", "default_agent", "traces", "2026-12-01");
      await Deno.mkdir(dir, { recursive: true });
      const meta = sessionMetaRecord(ID);
      (meta.payload as Record<string, unknown>).workspace = `/w/${"x".repeat(15 * MB)}`;
      const first = join(dir, `${ID}_001.jsonl`);
      await Deno.writeTextFile(first, JSON.stringify(meta) + "\n");
      for (let i = 1; i < 24; i++) {
        const id = `session-2026-12-01-10-00-00-${i.toString(16).padStart(8, "0")}`;
        await Deno.link(first, join(dir, `${id}_001.jsonl`));
      }
      const r = await runCliPeak(["--root", root, "sessions", "list", "--all"], root);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.peakBytes <= PEAK_LIMIT, `peak ${Math.round(r.peakBytes / MB)} MB`);
      assert.equal(r.stdout.split("session-2026-12-01-10-00-00-").length - 1, 24, r.stdout);
    });
  },
});

Deno.test("sessions import of a trace of 5000 pointers to missing children looks for 1000, counts the rest (R3)", async () => {
  await withRoot(async (root) => {
    const src = join(root, "..", `src-${crypto.randomUUID()}`);
    await Deno.mkdir(src);
    try {
      const path = await writeTrace(src, pointers(5000));
      const ws = await Deno.makeTempDir({ dir: root });
      const r = await runCli(["--root", root, "sessions", "import", path, "--workspace", ws]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout + r.stderr,
        /4000 more subagent pointer\(s\) past the first 1000 children/,
      );
    } finally {
      await Deno.remove(src, { recursive: true });
    }
  });
});

Deno.test({
  name:
    "sessions import of 30 pointers carrying 8 MB each keeps their ids only, peak ≤ 300 MB (R2)",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withRoot(async (root) => {
      const src = join(root, "..", `src-${crypto.randomUUID()}`);
      await Deno.mkdir(src);
      try {
        const pad = "p".repeat(8 * MB);
        const heavy = function* () {
          for (const line of pointers(30)) {
            const rec = JSON.parse(line);
            rec.payload.extra = pad;
            yield JSON.stringify(rec);
          }
        };
        const path = await writeTrace(src, heavy());
        const ws = await Deno.makeTempDir({ dir: root });
        const r = await runCliPeak(
          ["--root", root, "sessions", "import", path, "--workspace", ws],
          root,
        );
        assert.equal(r.code, 0, r.stderr);
        assert.ok(r.peakBytes <= PEAK_LIMIT, `peak ${Math.round(r.peakBytes / MB)} MB`);
      } finally {
        await Deno.remove(src, { recursive: true });
      }
    });
  },
});

Deno.test("trace export names 1000 children of a trace's pointers and counts the others (R9)", async () => {
  await withRoot(async (root) => {
    const path = await writeTrace(root, pointers(1005));
    const r = await runCli(["--root", root, "trace", "export", path, "--format", "md"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.split("- subagent: ").length - 1, 1000);
    assert.match(r.stdout, /- and 5 more subagent pointer\(s\)/);
  });
});

Deno.test("trace export --format otlp keeps 4096 tool spans open; older ones end unfinished (R16)", async () => {
  await withRoot(async (root) => {
    function* unanswered(): Generator<string> {
      let n = 0;
      for (const line of toolCalls(4106)) if (n++ % 2 === 0) yield line; // the calls alone
    }
    const path = await writeTrace(root, unanswered());
    const r = await runCli(["--root", root, "trace", "export", path, "--format", "otlp"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.split("more than 4096 tool calls open at once").length - 1, 10);
    assert.equal(r.stdout.split("the trace ends before the tool's output").length - 1, 4096);
  });
});

Deno.test("sessions show of 12,000 tool calls keeps the last 10,000 entries and says so (R8)", async () => {
  await withRoot(async (root) => {
    await writeTrace(root, toolCalls(6000)); // a call and its output each
    for (const json of [false, true]) {
      const r = await runCli([
        ...["--root", root, "sessions", "show", ID],
        ...json ? ["--json"] : [],
      ]);
      assert.equal(r.code, 0, r.stderr);
      if (json) {
        const o = JSON.parse(r.stdout);
        assert.equal(o.items.length, 10_000);
        assert.equal(o.items_left_out, 2000);
      } else {
        assert.match(r.stdout, /\(2000 earlier entries not shown: the last 10000 are\)/);
        assert.ok(r.stdout.includes("tool_5999"), "the last call is shown");
      }
    }
  });
});

Deno.test({
  name:
    "trace show, stats and the exports of 300 calls named with 0.9 MB each keep names cut, peak ≤ 300 MB (round 25 C15)",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // Kept whole (and interned with their bytes by the stats scan), such names took `trace show`
    // to 881 MB, `trace stats` to 819 MB and the OTLP export to 1056 MB.
    await withRoot(async (root) => {
      const name = "n".repeat(900_000);
      await writeTrace(
        root,
        (function* () {
          for (let i = 0; i < 300; i++) {
            yield JSON.stringify({
              timestamp: "2026-12-01T10:00:01.000Z",
              type: "model_msg",
              payload: {
                type: "tool_call",
                role: "assistant",
                name: name + i,
                arguments: "{}",
                tool_call_id: `c${i}`,
                stop_reason: "completed",
              },
            });
          }
        })(),
      );
      const out = join(root, "out");
      for (
        const args of [
          ["trace", "show", ID],
          ["trace", "stats", ID, "--by", "tool"],
          ["trace", "export", ID, "--format", "json", "-o", `${out}.json`],
          ["trace", "export", ID, "--format", "otlp", "-o", `${out}.otlp.json`],
        ]
      ) {
        const r = await runCliPeak(["--root", root, ...args], root);
        assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr.slice(0, 500)}`);
        assert.ok(r.peakBytes <= PEAK_LIMIT, `${args.join(" ")}: peak ${r.peakBytes / MB} MB`);
        assert.equal(
          r.stdout.includes("n".repeat(2000)),
          false,
          `${args.join(" ")} shows a name whole`,
        );
      }
    });
  },
});

Deno.test({
  name:
    "sessions import of 600,000 pointers with 250-character ids keeps 2000 of them, peak ≤ 300 MB (round 25 C6)",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // Every pointer's id was kept for the copy: 482 MB.
    await withRoot(async (root) => {
      const src = join(root, "..", `src-${crypto.randomUUID()}`);
      await Deno.mkdir(src);
      try {
        const path = await writeTrace(src, longPointers(600_000));
        const ws = await Deno.makeTempDir({ dir: root });
        const r = await runCliPeak(
          ["--root", root, "sessions", "import", path, "--workspace", ws],
          root,
        );
        assert.equal(r.code, 0, r.stderr);
        assert.ok(r.peakBytes <= PEAK_LIMIT, `peak ${Math.round(r.peakBytes / MB)} MB`);
        assert.match(r.stdout + r.stderr, /599000 more subagent pointer\(s\) past the first 1000/);
      } finally {
        await Deno.remove(src, { recursive: true });
      }
    });
  },
});

Deno.test({
  name:
    "trace stats of 600,000 pointers with 250-character ids follows 1000 and counts the rest, peak ≤ 300 MB (round 25 C7)",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // Every pointer's id was kept and looked for: 384 MB in 22 s.
    await withRoot(async (root) => {
      await writeTrace(root, longPointers(600_000));
      const r = await runCliPeak(["--root", root, "trace", "stats", ID], root);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.peakBytes <= PEAK_LIMIT, `peak ${Math.round(r.peakBytes / MB)} MB`);
      assert.match(
        r.stdout,
        /not followed: the children of 599000 subagent pointer\(s\) past the first 1000/,
      );
    });
  },
});
