// Trace store benchmark: `deno run -A bench/trace_bench.ts` (about a minute).
//
// 1. Append latency (median, p99) for 1 KB and 1 MB records, fsync "never" vs "always".
// 2. Reader throughput on a generated 200 MB trace versus plain line splitting of the
//    same file (chunked read + indexOf("\n") + one TextDecoder.decode per line).
// 3. Peak RSS (VmHWM from /proc/self/status) of a subprocess that reads a trace, for the
//    200 MB trace and for a trace holding one 30 MB line, against 2 × largest line + 64 MB,
//    next to a subprocess doing plain line splitting of the same file.
import { join } from "node:path";
import {
  eventMsg,
  modelMsg,
  sessionMetaMsg,
  toolCall,
  toolCallOutput,
  userText,
} from "../lib/protocol/mod.ts";
import type { OmniMessage } from "../lib/protocol/mod.ts";
import { type FsyncPolicy, openTraceWriter, readTrace } from "../lib/trace/mod.ts";

const MB = 1024 * 1024;
const enc = new TextEncoder();

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function fmtMs(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`;
}

function vmHwmKb(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync("/proc/self/status"));
  return m ? Number(m[1]) : NaN;
}

function record(bytes: number, i: number): OmniMessage {
  return modelMsg(toolCallOutput(`call_${i}`, "o".repeat(bytes - 150)));
}

async function appendLatency(
  dir: string,
  size: number,
  fsync: FsyncPolicy,
  count: number,
): Promise<number[]> {
  const w = await openTraceWriter({
    tracesDir: dir,
    sessionId: `bench-${size}-${fsync}`,
    dateDir: "d",
    fsync,
  });
  const msgs = Array.from({ length: 8 }, (_, i) => record(size, i));
  for (let i = 0; i < 5; i++) await w.append(msgs[i % 8]!); // warm-up
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const m = msgs[i % 8]!;
    const t0 = performance.now();
    await w.append(m);
    times.push(performance.now() - t0);
  }
  await w.close();
  return times.sort((a, b) => a - b);
}

// The floor: one awaited FsFile.write of the same size, no writer around it.
async function rawWriteLatency(path: string, size: number, count: number): Promise<number[]> {
  const file = await Deno.open(path, { append: true, create: true });
  const data = enc.encode(JSON.stringify(record(size, 0)) + "\n");
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await file.write(data);
    times.push(performance.now() - t0);
  }
  file.close();
  return times.sort((a, b) => a - b);
}

// A mix shaped like real traces: small events, tool calls, outputs from 300 B to
// 20 KB, a large tool list now and then, and an occasional 1 MB output.
function* syntheticTrace(targetBytes: number): Generator<string> {
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const words = "alpha beta gamma delta file line error ok build test run value";
  const text = (n: number) => words.repeat(Math.ceil(n / words.length)).slice(0, n);
  let total = 0;
  const emit = (m: OmniMessage) => {
    const line = JSON.stringify(m) + "\n";
    total += line.length;
    return line;
  };
  yield emit(sessionMetaMsg({
    session_id: "session-2026-01-02-03-04-05-0badf00d",
    provider: "custom",
    model_id: "mock",
    model_context_window: 1000000,
    system_prompt: text(8000),
    agent_state: "/tmp/a",
    workspace: "/tmp/w",
  }));
  const tools = Array.from({ length: 12 }, (_, i) => ({
    name: `tool_${i}`,
    description: text(300),
    parameters: { type: "object", properties: { cmd: { type: "string", description: text(80) } } },
  }));
  for (let turn = 0; total < targetBytes; turn++) {
    if (turn % 200 === 0) yield emit(eventMsg({ type: "tool_list_ready", tools }));
    yield emit(modelMsg(userText(text(200 + Math.floor(rand() * 800)))));
    yield emit(eventMsg({ type: "request_begin" }));
    yield emit(
      modelMsg({
        type: "thinking",
        role: "assistant",
        thinking: text(500),
        stop_reason: "completed",
      }),
    );
    const id = `call_${turn}`;
    yield emit(modelMsg(toolCall("exec_command", JSON.stringify({ cmd: text(60) }), id)));
    yield emit(eventMsg({ type: "approval_decision", decision: "allow", tool_call_id: id }));
    const outLen = turn % 500 === 499 ? MB : 300 + Math.floor(rand() * rand() * 20000);
    yield emit(modelMsg(toolCallOutput(id, text(outLen))));
    const counts = { cache_read: turn, cache_write: 1, output: 12, total: 132 + turn };
    yield emit(eventMsg({ type: "token_usage", session: counts, request: counts }));
    yield emit(eventMsg({ type: "request_end", status: "completed" }));
  }
}

async function writeLines(path: string, lines: Iterable<string>): Promise<number> {
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  let batch = "";
  let size = 0;
  for (const line of lines) {
    batch += line;
    if (batch.length > 4 * MB) {
      const b = enc.encode(batch);
      size += b.length;
      for (let off = 0; off < b.length;) off += await file.write(b.subarray(off));
      batch = "";
    }
  }
  const b = enc.encode(batch);
  size += b.length;
  for (let off = 0; off < b.length;) off += await file.write(b.subarray(off));
  file.close();
  return size;
}

async function plainSplit(path: string): Promise<number> {
  const file = await Deno.open(path);
  const dec = new TextDecoder();
  const buf = new Uint8Array(MB);
  let pieces: Uint8Array[] = [];
  let lines = 0;
  let chars = 0;
  while (true) {
    const n = await file.read(buf);
    if (n === null) break;
    const view = buf.subarray(0, n);
    let start = 0;
    while (start < n) {
      const nl = view.indexOf(10, start);
      if (nl === -1) {
        pieces.push(view.slice(start));
        break;
      }
      let bytes = view.subarray(start, nl);
      if (pieces.length > 0) {
        pieces.push(bytes);
        const all = new Uint8Array(pieces.reduce((s, p) => s + p.length, 0));
        let off = 0;
        for (const p of pieces) all.set(p, (off += p.length) - p.length);
        bytes = all;
        pieces = [];
      }
      chars += dec.decode(bytes).length;
      lines++;
      start = nl + 1;
    }
  }
  file.close();
  return lines + (chars > 0 ? 0 : 1);
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const r = await fn();
  return [(performance.now() - t0) / 1000, r];
}

async function countRecords(path: string, validate: boolean): Promise<number> {
  let n = 0;
  for await (const _ of readTrace(path, { validate })) n++;
  return n;
}

async function rssOf(
  mode: "--rss" | "--rss-plain",
  path: string,
): Promise<{ hwmKb: number; records: number }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, mode, path],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "penguin-trace-bench-" });
  try {
    console.log(
      "Append latency (sequential awaits, one writer, file kept open; raw = bare FsFile.write)",
    );
    console.log("| record | fsync  | appends | median    | p99       |");
    console.log("| ------ | ------ | ------- | --------- | --------- |");
    const sizes = [[1024, "1 KB", 5000, 500], [MB, "1 MB", 300, 100]] as const;
    for (const [size, label, n, nSync] of sizes) {
      for (const fsync of ["raw", "never", "always"] as const) {
        const count = fsync === "always" ? nSync : n;
        const t = fsync === "raw"
          ? await rawWriteLatency(join(dir, `raw-${size}`), size, count)
          : await appendLatency(dir, size, fsync, count);
        console.log(
          `| ${label.padEnd(6)} | ${fsync.padEnd(6)} | ${String(count).padEnd(7)} | ${
            fmtMs(quantile(t, 0.5)).padEnd(9)
          } | ${fmtMs(quantile(t, 0.99)).padEnd(9)} |`,
        );
      }
    }

    const big = join(dir, "big.jsonl");
    const size = await writeLines(big, syntheticTrace(200 * MB));
    const mb = size / MB;
    await plainSplit(big); // warm the page cache
    console.log(
      `\nReader throughput on a ${mb.toFixed(0)} MB generated trace (page cache warm, best of 3)`,
    );
    const best = async (fn: () => Promise<number>): Promise<[number, number]> => {
      let bestT = Infinity;
      let r = 0;
      for (let i = 0; i < 3; i++) {
        const [t, v] = await timed(fn);
        bestT = Math.min(bestT, t);
        r = v;
      }
      return [bestT, r];
    };
    const [tPlain, lines] = await best(() => plainSplit(big));
    const [tRead, records] = await best(() => countRecords(big, true));
    const [tNoVal] = await best(() => countRecords(big, false));
    console.log("| method                                  | lines/records | MB/s    | vs plain |");
    console.log("| --------------------------------------- | ------------- | ------- | -------- |");
    const row = (name: string, n: number, t: number) =>
      console.log(
        `| ${name.padEnd(39)} | ${String(n).padEnd(13)} | ${(mb / t).toFixed(0).padEnd(7)} | ${
          (tPlain / t * 100).toFixed(0).padStart(5)
        } %  |`,
      );
    row("plain line splitting (decode each line)", lines, tPlain);
    row("readTrace (parse + validate)", records, tRead);
    row("readTrace (parse only, validate:false)", records, tNoVal);

    const huge = join(dir, "huge-line.jsonl");
    const hugeLine = JSON.stringify(modelMsg(userText("z".repeat(30 * MB)))) + "\n";
    await writeLines(huge, [[...syntheticTrace(1)][0]!, hugeLine]);
    console.log("\nPeak RSS of a reader subprocess (VmHWM), target < 2 × largest line + 64 MB");
    console.log("| trace                    | largest line | readTrace | plain split | target   |");
    console.log("| ------------------------ | ------------ | --------- | ----------- | -------- |");
    const mbOf = (kb: number) => `${(kb / 1024).toFixed(0).padStart(5)} MB`;
    const base = await rssOf("--rss", "-");
    console.log(
      `| (nothing read: baseline) | -            | ${mbOf(base.hwmKb)}  | -           | -        |`,
    );
    for (
      const [name, path, largest] of [["200 MB generated trace", big, MB], [
        "one 30 MB line",
        huge,
        30 * MB,
      ]] as const
    ) {
      const r = await rssOf("--rss", path);
      const p = await rssOf("--rss-plain", path);
      const target = (2 * largest + 64 * MB) / 1024;
      console.log(
        `| ${name.padEnd(24)} | ${(largest / MB).toFixed(0).padStart(6)} MB    | ${
          mbOf(r.hwmKb)
        }  | ${mbOf(p.hwmKb)}    | ${mbOf(target)} |`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  if (Deno.args[0] === "--generate") {
    // Write a generated trace for profiling: --generate <path> <MB>
    await writeLines(Deno.args[1]!, syntheticTrace(Number(Deno.args[2] ?? 200) * MB));
  } else if (Deno.args[0] === "--rss" || Deno.args[0] === "--rss-plain") {
    const path = Deno.args[1]!;
    const plain = Deno.args[0] === "--rss-plain";
    const records = path === "-"
      ? 0
      : plain
      ? await plainSplit(path)
      : await countRecords(path, true);
    console.log(JSON.stringify({ hwmKb: vmHwmKb(), records }));
  } else {
    await main();
  }
}
