// The answer gate (one large MCP answer at a time): its slot goes first come, first
// served, a wait can be aborted, a slot given back runs the collection; a desk hands a slot
// to the call that takes it, else gives it back; an HTTP body past the large size is not
// read further while another answer holds the slot; and a call leaves no listener on the
// caller's signal (the SDK's listener kept every answer alive for the session).
import assert from "node:assert/strict";
import { fullCollections, garbageCollector } from "../../lib/state/_gc.ts";
import {
  createAnswerDesk,
  createAnswerGate,
  LARGE_ANSWER_CHARS,
} from "../../lib/mcp/answer_gate.ts";
import { boundedFetch, type FetchLike } from "../../lib/mcp/bounded_fetch.ts";
import { withTestHttpServer } from "./_test_http_server.ts";

/** Resolves after the next turn of the event loop. */
const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("the gate gives its slot in order of asking, and collects when it is given back", async () => {
  let collected = 0;
  const gate = createAnswerGate(1, () => collected++);
  const first = await gate.acquire();
  assert.ok(first);
  const order: string[] = [];
  const second = gate.acquire().then((r) => (order.push("second"), r));
  const third = gate.acquire().then((r) => (order.push("third"), r));
  assert.equal(gate.waiting, 2);
  first();
  first(); // given back once only
  assert.equal(collected, 1);
  const r2 = await second;
  assert.deepEqual(order, ["second"]);
  assert.equal(gate.held, 1);
  r2!();
  (await third)!();
  assert.deepEqual(order, ["second", "third"]);
  assert.equal(gate.held, 0);
  assert.equal(collected, 3);
});

Deno.test("an aborted wait takes nothing and leaves the line", async () => {
  const gate = createAnswerGate(1);
  const held = await gate.acquire();
  const ac = new AbortController();
  const waiting = gate.acquire(ac.signal);
  ac.abort();
  assert.equal(await waiting, undefined);
  assert.equal(gate.waiting, 0);
  held!();
  assert.equal(gate.held, 0);
  assert.equal(await gate.acquire(AbortSignal.abort()), undefined);
});

Deno.test("a desk hands the slot to its taker, else gives it back on the next turn", async () => {
  const gate = createAnswerGate(1);
  const desk = createAnswerDesk();
  desk.offer((await gate.acquire())!);
  const taken = desk.take();
  assert.ok(taken);
  assert.equal(desk.take(), undefined);
  await nextTurn();
  assert.equal(gate.held, 1, "a taken slot is the taker's to give back");
  taken();
  desk.offer((await gate.acquire())!);
  await nextTurn();
  assert.equal(gate.held, 0, "a slot nobody took is given back");
});

Deno.test("the process's collector runs a collection", () => {
  const collect = garbageCollector();
  const before = fullCollections();
  // 64 MB of garbage in the heap, freed only by a collection.
  let garbage: number[] | undefined = new Array(8 * 1024 * 1024).fill(0.5);
  const held = Deno.memoryUsage().heapUsed;
  garbage = undefined;
  collect();
  assert.equal(garbage, undefined);
  assert.equal(fullCollections(), before + 1);
  const freed = held - Deno.memoryUsage().heapUsed;
  assert.ok(freed > 32 * 1024 * 1024, `a collection freed ${freed} bytes of 64 MB of garbage`);
});

Deno.test("an HTTP body past the large size waits for the slot before more is read", async () => {
  const chunk = "x".repeat(64 * 1024);
  const total = 4 * LARGE_ANSWER_CHARS;
  const body = `{"jsonrpc":"2.0","id":1,"result":{"t":"${"x".repeat(total)}"}}`;
  let sent = 0;
  const base: FetchLike = () => {
    const bytes = new TextEncoder().encode(body);
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= bytes.length) return c.close();
        c.enqueue(bytes.slice(sent, sent + chunk.length));
        sent += chunk.length;
      },
    }, { highWaterMark: 0 });
    return Promise.resolve(
      new Response(stream, { headers: { "content-type": "application/json" } }),
    );
  };
  const gate = createAnswerGate(1);
  const desk = createAnswerDesk();
  const other = await gate.acquire();
  const fetch = boundedFetch(() => {}, undefined, base, new Map(), { gate, desk });
  const response = await fetch("http://h/", { method: "POST", body: '{"id":1,"method":"x"}' });
  const text = response.text();
  while (gate.waiting === 0) await nextTurn();
  // Held up at the large size: a few chunks of the pipes' buffers at most past it.
  assert.ok(sent <= LARGE_ANSWER_CHARS + 8 * chunk.length, `read ${sent}`);
  other!();
  assert.equal((await text).length, body.length);
  const slot = desk.take();
  assert.ok(slot, "the body's slot waits at the desk for its call");
  slot();
  assert.equal(gate.held, 0);
});

Deno.test("a call leaves no listener on the caller's signal", async () => {
  await withTestHttpServer({ json: true, prefix: "penguin-mcpg-" }, async (conn) => {
    const signal = new AbortController().signal;
    let listeners = 0;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = (...args: Parameters<typeof add>) => (listeners++, add(...args));
    signal.removeEventListener = (...args: Parameters<typeof remove>) => (
      listeners--, remove(...args)
    );
    const result = await conn.callTool("echo", { message: "kept?" }, { signal, timeoutMs: 0 });
    assert.match(JSON.stringify(result), /echo: kept\?/);
    assert.equal(listeners, 0);
  });
});
