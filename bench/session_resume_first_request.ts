// Resume to first request: `deno run -A bench/session_resume_first_request.ts [sizes in MB, default 1 10 100]`.
//
// For each size, generates a session whose latest trace file is that large
// (one long task: requests that each make a tool call with a ~50 KB output,
// plus an older rotated _001 file that resume must not read), then, in a
// fresh subprocess, runs createAgent → agent.resumeSession → session.run and
// measures the time from just before createAgent until the model server has
// received the whole first request (its body is the whole history, about
// the size of the file), and the subprocess's peak RSS (VmHWM from
// /proc/self/status) after that request. The server is a minimal HTTP server
// in this process that counts the body bytes without parsing them.
// Target: 100 MB in < 1 s with peak RSS < 400 MB.
import { join } from "node:path";
import { createAgent } from "../lib/agent/mod.ts";
import { addModel } from "../lib/state/mod.ts";

const MB = 1024 * 1024;
const ID = "session-2026-01-02-03-04-05-be4c4b0e";

function vmHwmMb(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync("/proc/self/status"));
  return m ? Number(m[1]) / 1024 : NaN;
}

interface ChildReport {
  t0: number;
  loaded: number;
  hwm: number;
  context: number;
}

async function child(root: string): Promise<void> {
  const t0 = Date.now();
  const agent = await createAgent({ root, env: {} });
  const session = await agent.resumeSession({ target: ID, warn: () => {} });
  const loaded = Date.now();
  for await (const _ of session.run("Go on.", { approve: "deny-all" })) { /* drain */ }
  const report: ChildReport = {
    t0,
    loaded,
    hwm: vmHwmMb(),
    context: session.resumedHistory?.length ?? 0,
  };
  await session.dispose();
  console.log(JSON.stringify(report));
}

/** A session whose latest file (`_002`) is about `bytes` long. */
async function generate(root: string, bytes: number): Promise<number> {
  // The workspace must lie outside the data root (resume refuses it otherwise).
  const ws = `${root}-ws`;
  await Deno.mkdir(ws, { recursive: true });
  const dir = join(root, "default_project", "agents", "default_agent", "traces", "2026-01-02");
  await Deno.mkdir(dir, { recursive: true });
  let t = Date.UTC(2026, 0, 2, 3, 4, 5);
  const rec = (type: string, payload: unknown) =>
    JSON.stringify({ timestamp: new Date(t++).toISOString(), type, payload }) + "\n";
  const meta = rec("session_meta", {
    session_id: ID,
    provider: "custom",
    model_id: "m",
    model_context_window: 1000000,
    system_prompt: "You are a benchmark. ".repeat(1000),
    agent_state: join(root, "state"),
    workspace: ws,
  });
  await Deno.writeTextFile(
    join(dir, `${ID}_001.jsonl`),
    meta + rec("event_msg", {
      type: "compaction_end",
      reason: "turns",
      mode: "discard",
      status: "completed",
    }),
  );
  const file = await Deno.open(join(dir, `${ID}_002.jsonl`), {
    write: true,
    create: true,
    truncate: true,
  });
  const enc = new TextEncoder();
  let batch = meta + rec("event_msg", { type: "tool_list_ready", tools: [] }) +
    rec("model_msg", {
      type: "text",
      role: "user",
      text: "Run the long benchmark task.",
      stop_reason: "completed",
    });
  let size = 0;
  let turns = 0;
  const body = "0123456789abcdef ".repeat(3000); // ~51 KB per output
  while (size + batch.length < bytes) {
    turns++;
    const id = `call_${turns}`;
    const total = 1000 * turns;
    batch += rec("event_msg", { type: "request_begin" }) +
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
        session: { cache_read: 0, cache_write: total, output: 0, total },
        request: { cache_read: 0, cache_write: 1000, output: 0, total: 1000 },
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
  return turns;
}

const SSE = [
  { choices: [{ index: 0, delta: { role: "assistant", content: "ok" }, finish_reason: null }] },
  { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
  { choices: [], usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } },
].map((c) => `data: ${JSON.stringify({ id: "b", object: "chat.completion.chunk", ...c })}\n\n`)
  .join("") + "data: [DONE]\n\n";

/** A server that notes when each request's body has fully arrived. */
function startServer(): {
  url: string;
  seen: { at: number; bytes: number }[];
  close(): Promise<void>;
} {
  const seen: { at: number; bytes: number }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    let bytes = 0;
    for await (const chunk of req.body ?? []) bytes += chunk.length;
    seen.push({ at: Date.now(), bytes });
    return new Response(SSE, { headers: { "content-type": "text/event-stream" } });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1`,
    seen,
    close: () => server.shutdown(),
  };
}

async function measure(root: string): Promise<ChildReport> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, "--child", root],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`child failed with code ${out.code}`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

async function main(): Promise<void> {
  if (Deno.args[0] === "--child") return await child(Deno.args[1]!);
  const sizes = Deno.args.length > 0 ? Deno.args.map(Number) : [1, 10, 100];
  console.log("size      turns  resumed   first request  body      VmHWM");
  for (const mb of sizes) {
    const root = await Deno.makeTempDir({ prefix: "penguin-bench-first-request-" });
    const server = startServer();
    try {
      const turns = await generate(root, mb * MB);
      await addModel(join(root, "default_project", ".project_config.toml"), {
        provider: "custom",
        model_id: "m",
        base_url: server.url,
        client_type: "openai-chat",
      }, { setDefault: true });
      const latest = join(
        root,
        "default_project/agents/default_agent/traces/2026-01-02",
        `${ID}_002.jsonl`,
      );
      const generated = (await Deno.stat(latest)).size;
      const runs: { loadMs: number; firstMs: number; bytes: number; hwm: number }[] = [];
      for (let i = 0; i < 3; i++) {
        server.seen.length = 0;
        const r = await measure(root);
        const first = server.seen[0]!;
        runs.push({
          loadMs: r.loaded - r.t0,
          firstMs: first.at - r.t0,
          bytes: first.bytes,
          hwm: r.hwm,
        });
        // Each run appends a task to the trace: put the file back as generated.
        await Deno.truncate(latest, generated);
      }
      runs.sort((a, b) => a.firstMs - b.firstMs);
      const med = runs[1]!;
      console.log(
        `${(generated / MB).toFixed(1).padStart(5)} MB ${String(turns).padStart(6)} ${
          med.loadMs.toFixed(0).padStart(6)
        } ms ${med.firstMs.toFixed(0).padStart(9)} ms  ${
          (med.bytes / MB).toFixed(1).padStart(5)
        } MB ${med.hwm.toFixed(0).padStart(6)} MB`,
      );
    } finally {
      await server.close();
      await Deno.remove(root, { recursive: true });
      await Deno.remove(`${root}-ws`, { recursive: true }).catch(() => {});
    }
  }
}

await main();
