// Resume benchmark: `deno run -A bench/session_resume.ts [sizes in MB, default 1 10 100]`.
//
// For each size, generates a session whose latest trace file is that large
// (one long task: many requests, each a tool call with a ~50 KB output,
// plus an older rotated _001 file that must never be read), then runs
// `loadSessionForResume` in a fresh subprocess and reports the wall time of
// the load and the subprocess's peak RSS (VmHWM from /proc/self/status),
// next to the VmHWM of a subprocess that only loads the same modules.
// Target: 100 MB in < 1 s with peak RSS < 400 MB.
import { join } from "node:path";
import { loadSessionForResume } from "../lib/session/mod.ts";

const MB = 1024 * 1024;
const ID = "session-2026-01-02-03-04-05-be4c4b0e";

function vmHwmMb(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync("/proc/self/status"));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function child(root: string, mode: string): Promise<void> {
  if (mode === "baseline") {
    console.log(JSON.stringify({ ms: 0, hwm: vmHwmMb(), history: 0 }));
    return;
  }
  const t0 = performance.now();
  const loaded = await loadSessionForResume({
    root,
    projectId: "default_project",
    agentId: "default_agent",
    target: ID,
  });
  const ms = performance.now() - t0;
  console.log(JSON.stringify({ ms, hwm: vmHwmMb(), history: loaded.replay.history.length }));
}

async function generate(root: string, bytes: number): Promise<{ path: string; turns: number }> {
  const dir = join(root, "default_project", "agents", "default_agent", "traces", "2026-01-02");
  await Deno.mkdir(dir, { recursive: true });
  let t = Date.UTC(2026, 0, 2, 3, 4, 5);
  const ts = () => new Date(t++).toISOString();
  const rec = (type: string, payload: unknown) =>
    JSON.stringify({ timestamp: ts(), type, payload }) + "\n";
  const meta = rec("session_meta", {
    session_id: ID,
    provider: "custom",
    model_id: "mock",
    model_context_window: 1000000,
    system_prompt: "You are a benchmark. ".repeat(1000),
    agent_state: join(root, "state"),
    workspace: root,
  });
  // An older shard that resume must not read.
  await Deno.writeTextFile(join(dir, `${ID}_001.jsonl`), meta + "x".repeat(1024) + "\n");
  const path = join(dir, `${ID}_002.jsonl`);
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const enc = new TextEncoder();
  let size = 0;
  let batch = meta + rec("model_msg", {
    type: "text",
    role: "user",
    text: "Run the long benchmark task.",
    stop_reason: "completed",
  });
  let turns = 0;
  let total = 0;
  const body = "0123456789abcdef ".repeat(3000); // ~51 KB per output
  while (size + batch.length < bytes) {
    turns++;
    const id = `call_${turns}`;
    total += 1000;
    batch += rec("event_msg", { type: "request_begin" }) +
      rec("model_msg", {
        type: "thinking",
        role: "assistant",
        thinking: `step ${turns}`,
        fidelity: { signature: "c2ln" },
        stop_reason: "completed",
      }) +
      rec("model_msg", {
        type: "tool_call",
        role: "assistant",
        name: "exec_command",
        arguments: JSON.stringify({ cmd: `echo ${turns}` }),
        tool_call_id: id,
        stop_reason: "completed",
      }) +
      rec("event_msg", { type: "approval_decision", decision: "allow", tool_call_id: id }) +
      rec("event_msg", {
        type: "token_usage",
        session: { cache_read: total - 900, cache_write: 800, output: 100, total },
        request: { cache_read: 0, cache_write: 900, output: 100, total: 1000 },
      }) +
      rec("event_msg", { type: "request_end", status: "completed" }) +
      rec("model_msg", {
        type: "tool_call_output",
        role: "user",
        output: `${turns}\n${body}`,
        tool_call_id: id,
        stop_reason: "completed",
      });
    if (batch.length > 4 * MB) {
      const data = enc.encode(batch);
      await file.write(data);
      size += data.length;
      batch = "";
    }
  }
  await file.write(enc.encode(batch));
  file.close();
  return { path, turns };
}

async function measure(
  root: string,
  mode: string,
): Promise<{ ms: number; hwm: number; history: number }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, "--child", root, mode],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`child failed with code ${out.code}`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

async function main(): Promise<void> {
  if (Deno.args[0] === "--child") return await child(Deno.args[1]!, Deno.args[2]!);
  const sizes = Deno.args.length > 0 ? Deno.args.map(Number) : [1, 10, 100];
  const base = await measure("/nonexistent", "baseline");
  console.log(
    `baseline subprocess (modules loaded, nothing read): VmHWM ${base.hwm.toFixed(0)} MB`,
  );
  console.log("size     turns   load time   VmHWM     history msgs");
  for (const mb of sizes) {
    const root = await Deno.makeTempDir({ prefix: "penguin-bench-resume-" });
    try {
      const { path, turns } = await generate(root, mb * MB);
      const real = (await Deno.stat(path)).size / MB;
      const runs = [];
      for (let i = 0; i < 3; i++) runs.push(await measure(root, "load"));
      runs.sort((a, b) => a.ms - b.ms);
      const med = runs[1]!;
      console.log(
        `${real.toFixed(1).padStart(5)} MB ${String(turns).padStart(6)}  ${
          med.ms.toFixed(0).padStart(6)
        } ms  ${med.hwm.toFixed(0).padStart(5)} MB  ${med.history}`,
      );
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  }
}

await main();
