// Agent-loop benchmark: `deno run -A bench/agent_turn_overhead.ts [turns=500]`.
//
// 1. Engine overhead per turn, in process: a fake model answers every request at once with
//    one tool call (complete partials, usage, end); a trivial tool answers at once; the real
//    trace writer appends to a temp dir. Overhead of turn n = time from the end of model
//    response n to the call of request n+1, minus the tool's own time. The fake model builds
//    the real openai-chat request body (JSON of the whole history) first, so "serialize" is
//    reported on its own. Figures at turn 10 and at turn 500 (median of a window around it).
// 2. End to end through HTTP: a real session (createAgent → createSession → run) against the
//    scripted model server; the gap between the server finishing response n and receiving
//    request n+1 (client side, and as seen by the server, which runs in a worker).
import { join } from "node:path";
import { modelMsg, type OmniMessage, toolCall } from "../lib/protocol/mod.ts";
import { createAgent, createEngine, decide } from "../lib/agent/mod.ts";
import { executeTool, type Tool } from "../lib/tools/mod.ts";
import { openTraceWriter } from "../lib/trace/mod.ts";
import type { ModelStreamItem } from "../lib/models/mod.ts";
import { wireModule } from "../lib/models/mod.ts";
import { addModel } from "../lib/state/mod.ts";

const TURNS = Number(Deno.args[0] ?? 500);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function windowAt(xs: number[], at: number, half = 5): number[] {
  return xs.slice(Math.max(0, at - half), Math.min(xs.length, at + half));
}

function fmt(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`;
}

async function engineOverhead(dir: string): Promise<void> {
  const writer = await openTraceWriter({
    tracesDir: join(dir, "traces"),
    sessionId: "session-2026-01-01-00-00-00-0000beef",
  });
  const module = wireModule("openai-chat");
  const endAt: number[] = [];
  const reqAt: number[] = [];
  const serialize: number[] = [];
  const toolMs: number[] = [];
  let n = 0;
  const tool: Tool = {
    definition: {
      name: "noop",
      description: "noop",
      parameters: { type: "object", properties: {} },
      permission: "r",
      timeoutMs: 0,
      maxOutputLength: 16000,
      callDescription: false,
    },
    async *run() {
      yield { type: "delta", text: "ok ".repeat(30) };
    },
  };
  let last: Promise<unknown> = Promise.resolve();
  const engine = createEngine({
    request: (req) => {
      reqAt.push(performance.now());
      const i = n++;
      const t0 = performance.now();
      module.buildRequest({
        endpoint: { provider: "x", model_id: "m", protocol: "openai-chat", base_url: "http://x" },
        system_prompt: "s".repeat(8000),
        tools: [],
        history: req.history,
      });
      serialize.push(performance.now() - t0);
      const done = i >= TURNS - 1;
      return (async function* (): AsyncGenerator<ModelStreamItem> {
        if (done) {
          yield {
            kind: "message",
            message: { type: "text", role: "assistant", text: "done", stop_reason: "completed" },
          };
        } else {
          yield {
            kind: "message",
            message: toolCall("noop", JSON.stringify({ note: "x".repeat(100), i }), `call_${i}`),
          };
        }
        yield { kind: "usage", usage: { cache_read: 0, cache_write: 100, output: 20, total: 120 } };
        endAt.push(performance.now());
        yield { kind: "end", outcome: { status: "completed" } };
      })();
    },
    execute: async function* (call, signal) {
      const t0 = performance.now();
      yield* executeTool(tool, call, { workspace: dir, sessionId: "s", signal });
      toolMs.push(performance.now() - t0);
    },
    record: (m: OmniMessage) => {
      last = writer.append(m);
    },
    warn: () => {},
  }, { maxTurns: -1, promptEstimate: 2000, maxTokens: 32000, contextWindow: 1_000_000 });
  const approve = (c: Parameters<typeof decide>[1]) => decide(() => "allow", c, () => {});
  for await (
    const _ of engine.run([
      modelMsg({ type: "text", role: "user", text: "go", stop_reason: "completed" })
        .payload as never,
    ], { approve })
  ) {
    // drain
  }
  await last;
  await writer.close();
  const overhead: number[] = [];
  for (let i = 0; i + 1 < reqAt.length; i++) {
    overhead.push(reqAt[i + 1]! - endAt[i]! - (toolMs[i] ?? 0));
  }
  const at = (k: number) => ({
    loop: median(windowAt(overhead, k)),
    ser: median(windowAt(serialize, k + 1)),
  });
  const t10 = at(9);
  const tN = at(overhead.length - 6);
  console.log(`engine, in process (${reqAt.length} requests, real trace writer):`);
  for (const [label, t] of [["10", t10], [String(overhead.length), tN]] as const) {
    console.log(
      `  turn ${label.padStart(3)}: loop ${fmt(t.loop)} + request body serialization ${
        fmt(t.ser)
      } = ${fmt(t.loop + t.ser)}`,
    );
  }
  console.log(
    `  tool framing (executeTool of a no-op tool, excluded above), median: ${fmt(median(toolMs))}`,
  );
}

/** The scripted model server in a worker; resolves its base URL and a stop() giving arrival times. */
export async function serverWorker(
  turns: number,
): Promise<{ url: string; stop(): Promise<number[]> }> {
  const worker = new Worker(new URL("./_agent_server_worker.ts", import.meta.url), {
    type: "module",
  });
  const next = () =>
    new Promise<Record<string, unknown>>((r) => (worker.onmessage = (e) => r(e.data)));
  const ready = next();
  worker.postMessage({ turns });
  const { url } = await ready as { url: string };
  return {
    url,
    async stop() {
      const done = next();
      worker.postMessage("stop");
      return ((await done) as { arrivals: number[] }).arrivals;
    },
  };
}

const now = () => performance.timeOrigin + performance.now();

async function endToEnd(dir: string): Promise<void> {
  const closedAt: number[] = [];
  const server = await serverWorker(TURNS);
  const root = join(dir, "data");
  const ws = join(dir, "ws");
  await Deno.mkdir(ws, { recursive: true });
  await Deno.writeTextFile(join(ws, "f.txt"), "hello\n".repeat(20));
  await addModel(join(root, "default_project", ".project_config.toml"), {
    provider: "custom",
    model_id: "m",
    base_url: server.url,
    client_type: "openai-chat",
  }, { setDefault: true });
  const agent = await createAgent({ root });
  const session = await agent.createSession({ workspaceDir: ws });
  const toolStart = new Map<string, number>();
  const toolMs: number[] = [];
  const beginAt: number[] = [];
  const toolDoneAt: number[] = [];
  const started = now();
  for await (const m of session.run("go", { approve: "allow-all" })) {
    const p = m.payload as { type: string; event_type?: string; tool_call_id?: string };
    if (p.type === "request_end") closedAt.push(now());
    if (p.type === "request_begin") beginAt.push(now());
    if (p.type === "partial_tool_call_output" && p.event_type === "start") {
      toolStart.set(p.tool_call_id!, now());
    }
    if (p.type === "tool_call_output") {
      toolMs.push(now() - toolStart.get(p.tool_call_id!)!);
      toolDoneAt.push(now());
    }
  }
  const total = now() - started;
  await session.dispose();
  const arrivedAt = await server.stop();
  const loop: number[] = [];
  const wire: number[] = [];
  for (let i = 0; i + 1 < beginAt.length; i++) {
    const ready = Math.max(closedAt[i]!, toolDoneAt[i] ?? 0);
    loop.push(beginAt[i + 1]! - ready);
    wire.push(arrivedAt[i + 1]! - ready);
  }
  const w = (xs: number[], k: number) => fmt(median(windowAt(xs, k)));
  console.log(
    `end to end over HTTP (${beginAt.length} requests, read_file each turn, ${
      fmt(total)
    } total, server in a worker):`,
  );
  console.log(
    `  response and tools done → next request_begin: turn 10 ${w(loop, 9)}, turn ${loop.length} ${
      w(loop, loop.length - 6)
    }`,
  );
  console.log(
    `  … → next request parsed by the server (adds body serialization, loopback HTTP, server JSON.parse): ` +
      `turn 10 ${w(wire, 9)}, turn ${wire.length} ${w(wire, wire.length - 6)}`,
  );
  console.log(`  read_file tool time, median: ${fmt(median(toolMs))}`);
}

if (import.meta.main) {
  const dir = await Deno.makeTempDir({ prefix: "penguin-bench-agent-" });
  try {
    await engineOverhead(dir);
    await endToEnd(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
