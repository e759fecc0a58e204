/**
 * Model-layer benchmark.
 *
 * `deno run -A bench/models_bench.ts` prints, per wire protocol whose module
 * and encoder exist: parse throughput of a ~10 MB scripted stream through
 * `streamModel` (in memory, and over 127.0.0.1), and the time-to-first-token
 * overhead `streamModel` adds over reading the same response with plain
 * `fetch` and over a raw TCP socket. Under `deno bench` it registers the
 * in-memory throughput cases only.
 *
 * @module
 */
import { streamModel } from "../lib/models/stream.ts";
import type { WireProtocol, WireRequest } from "../lib/models/wire.ts";
import { ENCODERS, item, startModelServer, turn } from "../tests/support/model_server.ts";
import type { ScriptedTurn } from "../tests/support/model_server/script.ts";

const TARGET_BYTES = 10 * 1024 * 1024;

function bigTurn(textChars: number): ScriptedTurn {
  const words = "the quick brown fox jumps over the lazy dog while reasoning about streams ";
  const text = words.repeat(Math.ceil(textChars / words.length)).slice(0, textChars);
  const t = turn.of(
    item.thinking(text.slice(0, Math.floor(textChars / 5))),
    item.text(text),
    item.toolCall("exec_command", { cmd: "ls" }),
  );
  t.chunk = 24;
  return t;
}

/** A ~10 MB SSE body for `protocol`: one scripted turn sized to the target. */
function bigBody(protocol: WireProtocol): string {
  const enc = ENCODERS.find((e) => e.protocol === protocol)!;
  const probe = 200_000;
  const size = enc.encodeTurn(bigTurn(probe), "bench-model").join("").length;
  const chars = Math.floor((probe * TARGET_BYTES) / size);
  return enc.encodeTurn(bigTurn(chars), "bench-model").join("");
}

function request(protocol: WireProtocol, base: string): WireRequest {
  return {
    endpoint: { provider: "bench", model_id: "bench-model", protocol, base_url: base },
    system_prompt: "",
    tools: [],
    history: [{ type: "text", role: "user", text: "go", stop_reason: "completed" }],
  };
}

function memoryFetch(body: Uint8Array): typeof fetch {
  return () =>
    Promise.resolve(
      new Response(
        new ReadableStream<Uint8Array>({
          start(c) {
            for (let i = 0; i < body.length; i += 64 * 1024) {
              c.enqueue(body.subarray(i, i + 64 * 1024));
            }
            c.close();
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      ),
    );
}

async function drain(
  req: WireRequest,
  f?: typeof fetch,
): Promise<{ items: number; status: string }> {
  let items = 0;
  let status = "";
  for await (const it of streamModel(req, { fetch: f, idleTimeoutMs: 0 })) {
    items++;
    if (it.kind === "end") status = it.outcome.status;
  }
  return { items, status };
}

const protocols = ENCODERS.map((e) => e.protocol);
const bodies = new Map(protocols.map((p) => [p, new TextEncoder().encode(bigBody(p))]));

for (const p of protocols) {
  const body = bodies.get(p)!;
  Deno.bench(`${p}: parse ${(body.length / 1e6).toFixed(1)} MB in memory`, async () => {
    await drain(request(p, "http://bench.invalid/v1"), memoryFetch(body));
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function throughput(): Promise<void> {
  console.log("Parse throughput (best of 3):");
  for (const p of protocols) {
    const body = bodies.get(p)!;
    const mb = body.length / 1e6;
    let best = Infinity;
    let r = { items: 0, status: "" };
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      r = await drain(request(p, "http://bench.invalid/v1"), memoryFetch(body));
      best = Math.min(best, performance.now() - t0);
    }
    const server = await startModelServer({ turns: [turn.raw(body)] });
    const t0 = performance.now();
    const net = await drain(request(p, server.baseUrl(p)));
    const netMs = performance.now() - t0;
    await server.close();
    console.log(
      `  ${p.padEnd(19)} ${mb.toFixed(1)} MB  in-memory ${best.toFixed(0)} ms (${
        (mb / (best / 1000)).toFixed(1)
      } MB/s, ${r.items} items, ${r.status})` +
        `  loopback ${netMs.toFixed(0)} ms (${
          (mb / (netMs / 1000)).toFixed(1)
        } MB/s, ${net.status})`,
    );
  }
}

async function rawSocketFirstByte(port: number, path: string, body: string): Promise<number> {
  const t0 = performance.now();
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const req =
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${
      new TextEncoder().encode(body).length
    }\r\nconnection: close\r\n\r\n${body}`;
  await conn.write(new TextEncoder().encode(req));
  const buf = new Uint8Array(64 * 1024);
  let seen = "";
  while (!seen.includes("data:")) {
    const n = await conn.read(buf);
    if (n === null) break;
    seen += new TextDecoder().decode(buf.subarray(0, n));
  }
  const dt = performance.now() - t0;
  conn.close();
  return dt;
}

async function ttft(): Promise<void> {
  const N = 300;
  console.log(`Time to first token over 127.0.0.1 (median of ${N}):`);
  for (const p of protocols) {
    const server = await startModelServer({
      handler: () => turn.text("Hello there, friend."),
      maxRequests: 3 * N + 10,
    });
    const req = request(p, server.baseUrl(p));
    const { module } = { module: (await import("../lib/models/protocols/mod.ts")).wireModule(p) };
    const http = module.buildRequest({
      ...req,
      endpoint: { ...req.endpoint, base_url: server.baseUrl(p) },
    });
    const path = new URL(http.url).pathname + new URL(http.url).search;
    const client: number[] = [];
    const plain: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < N; i++) {
      let t0 = performance.now();
      for await (const it of streamModel(req)) {
        if (
          it.kind === "message" &&
          (it.message.type === "partial_text" && it.message.event_type === "delta")
        ) {
          client.push(performance.now() - t0);
          break;
        }
      }
      t0 = performance.now();
      const res = await fetch(http.url, { method: "POST", headers: http.headers, body: http.body });
      const reader = res.body!.getReader();
      let seen = "";
      while (!seen.includes("data:")) {
        const r = await reader.read();
        if (r.done) break;
        seen += new TextDecoder().decode(r.value);
      }
      plain.push(performance.now() - t0);
      await reader.cancel();
      raw.push(await rawSocketFirstByte(server.port, path, http.body));
    }
    await server.close();
    const c = median(client);
    const f = median(plain);
    const s = median(raw);
    console.log(
      `  ${p.padEnd(19)} streamModel ${c.toFixed(3)} ms  plain fetch ${
        f.toFixed(3)
      } ms  raw socket ${s.toFixed(3)} ms` +
        `  → overhead vs fetch ${(c - f).toFixed(3)} ms, vs raw socket ${(c - s).toFixed(3)} ms`,
    );
  }
}

if (import.meta.main) {
  await throughput();
  await ttft();
}
