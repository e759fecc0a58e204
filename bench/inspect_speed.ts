// Inspect benchmarks: `deno run -A bench/inspect_speed.ts [--gb 1] [--keep]` (a few minutes).
//
// 1. `trace stats` over a generated data root of ~1 GB of traces (bench/inspect_gen.ts), in a
//    subprocess that reports its throughput and peak RSS (VmHWM), next to a subprocess doing
//    plain newline counting of the same files (chunked read + indexOf). Then the real CLI
//    (`deno run -P=penguin main.ts trace stats --json <root>`), timed end to end.
// 2. `trace show` of one 100 MB trace: time until the first 50 lines reach a pipe (the CLI
//    run as a subprocess, killed once it has printed them).
// Everything generated goes to a temp dir under /tmp and is deleted at the end.
import { join } from "node:path";
import { sessionFiles, writeCorpus } from "./inspect_gen.ts";
import { createPriceBook } from "../lib/inspect/pricing.ts";
import { collectStats } from "../lib/inspect/stats.ts";
import { resolveTargets } from "../lib/inspect/targets.ts";
import { walkTraceFiles } from "../lib/trace/layout.ts";

const SELF = new URL(import.meta.url).pathname;
const REPO = new URL("../", import.meta.url).pathname;
const MB = 1e6;

function vmHwmKb(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync("/proc/self/status"));
  return m ? Number(m[1]) : NaN;
}

async function childStats(root: string): Promise<void> {
  const t0 = performance.now();
  const sessions = await resolveTargets([root]);
  const report = await collectStats(sessions, { prices: createPriceBook() });
  const s = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({
    seconds: s,
    bytes: report.bytes,
    sessions: sessions.length,
    requests: report.total.requests,
    vmhwm_kb: vmHwmKb(),
  }));
}

async function childCount(root: string): Promise<void> {
  const t0 = performance.now();
  const files = await walkTraceFiles(root);
  const buf = new Uint8Array(1 << 20);
  let lines = 0;
  let bytes = 0;
  for (const f of files) {
    const file = await Deno.open(f);
    while (true) {
      const n = await file.read(buf);
      if (n === null) break;
      bytes += n;
      const view = buf.subarray(0, n);
      for (let i = view.indexOf(10); i >= 0; i = view.indexOf(10, i + 1)) lines++;
    }
    file.close();
  }
  const s = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ seconds: s, bytes, lines, vmhwm_kb: vmHwmKb() }));
}

async function runChild(mode: string, root: string): Promise<Record<string, number>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", SELF, mode, root],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`${mode} failed`);
  return JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").pop()!);
}

async function cliStats(root: string): Promise<number> {
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-P=penguin",
      "--no-prompt",
      "--config",
      `${REPO}deno.json`,
      `${REPO}main.ts`,
      "trace",
      "stats",
      "--json",
      root,
    ],
    stdout: "piped",
    stderr: "null",
  }).output();
  if (!out.success) throw new Error("penguin trace stats failed");
  return (performance.now() - t0) / 1000;
}

// One session of ~`bytes` bytes in one file (no rotation: requests without compaction).
async function bigTrace(dir: string, bytes: number): Promise<string> {
  const id = "session-2026-02-01-10-00-00-b16b16b1";
  const path = join(dir, `${id}_001.jsonl`);
  const files = sessionFiles({
    sessionId: id,
    requests: 119,
    seed: 3,
    start: Date.UTC(2026, 1, 1),
  });
  const body = files[0]!;
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const enc = new TextEncoder();
  await file.write(enc.encode(body.join("\n") + "\n"));
  const rest = enc.encode(body.slice(2).join("\n") + "\n"); // repeat the turns, not the head
  let size = (await file.stat()).size;
  while (size < bytes) {
    await file.write(rest);
    size += rest.length;
  }
  file.close();
  return path;
}

async function showFirstScreen(path: string, lines = 50): Promise<{ ms: number; got: number }> {
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-P=penguin",
      "--no-prompt",
      "--config",
      `${REPO}deno.json`,
      `${REPO}main.ts`,
      "trace",
      "show",
      path,
    ],
    stdout: "piped",
    stderr: "null",
    env: { NO_COLOR: "1" },
  }).spawn();
  const reader = child.stdout.getReader();
  const dec = new TextDecoder();
  let text = "";
  let got = 0;
  while (got < lines) {
    const { value, done } = await reader.read();
    if (done) break;
    text += dec.decode(value, { stream: true });
    got = text.split("\n").length - 1;
  }
  const ms = performance.now() - t0;
  await reader.cancel();
  try {
    child.kill("SIGKILL");
  } catch { /* exited */ }
  await child.status;
  return { ms, got };
}

async function main(): Promise<void> {
  const gbFlag = Deno.args.indexOf("--gb");
  const gb = gbFlag >= 0 ? Number(Deno.args[gbFlag + 1]) : 1;
  const keep = Deno.args.includes("--keep");
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "penguin-inspect-bench-" });
  try {
    const root = join(dir, "root");
    let t = performance.now();
    const corpus = await writeCorpus(root, gb * 1024 * 1024 * 1024);
    console.log(
      `corpus: ${
        (corpus.bytes / MB).toFixed(0)
      } MB in ${corpus.files} files, ${corpus.sessions} sessions (written in ${
        ((performance.now() - t) / 1000).toFixed(1)
      } s)`,
    );
    // Warm the page cache the same way for both readers.
    await runChild("--child-count", root);
    for (let i = 0; i < 2; i++) {
      const st = await runChild("--child-stats", root);
      const lc = await runChild("--child-count", root);
      console.log(
        `stats:      ${(st.bytes! / MB / st.seconds!).toFixed(0)} MB/s (${
          st.seconds!.toFixed(2)
        } s, ${st.requests} requests), VmHWM ${(st.vmhwm_kb! / 1024).toFixed(0)} MB`,
      );
      console.log(
        `line count: ${(lc.bytes! / MB / lc.seconds!).toFixed(0)} MB/s (${
          lc.seconds!.toFixed(2)
        } s, ${lc.lines} lines), VmHWM ${(lc.vmhwm_kb! / 1024).toFixed(0)} MB`,
      );
    }
    const cli = await cliStats(root);
    console.log(
      `penguin trace stats --json (CLI, end to end): ${cli.toFixed(2)} s = ${
        (corpus.bytes / MB / cli).toFixed(0)
      } MB/s`,
    );

    t = performance.now();
    const big = await bigTrace(dir, 100 * 1024 * 1024);
    const size = (await Deno.stat(big)).size;
    console.log(
      `big trace: ${(size / MB).toFixed(0)} MB (${((performance.now() - t) / 1000).toFixed(1)} s)`,
    );
    for (let i = 0; i < 3; i++) {
      const r = await showFirstScreen(big);
      console.log(`show: first ${r.got} lines of the 100 MB trace in ${r.ms.toFixed(0)} ms`);
    }
  } finally {
    if (!keep) await Deno.remove(dir, { recursive: true });
    else console.log(`kept ${dir}`);
  }
}

if (Deno.args[0] === "--child-stats") await childStats(Deno.args[1]!);
else if (Deno.args[0] === "--child-count") await childCount(Deno.args[1]!);
else await main();
