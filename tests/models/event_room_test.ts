/**
 * One large server-sent event is assembled at a time in the process
 * (`lib/models/_event_room.ts`): a response whose event under way has passed
 * LARGE_EVENT characters reads no further while another one's large event is
 * under way (attack round 24 bounded R10: eight subagents answering a 15 MB
 * signature each were assembled at once). Observed as reads: each response's
 * body gives one chunk per read, only when read, and the first one's server
 * holds its event half sent until the test lets it go.
 */
import assert from "node:assert/strict";
import { streamModel } from "../../lib/models/stream.ts";
import type { ModelStreamItem } from "../../lib/models/outcome.ts";
import { eventRoomWaiting, LARGE_EVENT } from "../../lib/models/_event_room.ts";
import { signedBody, signedRequest } from "../support/signed_stream.ts";

const CHUNK = LARGE_EVENT / 4;

const request = signedRequest;

/** A response signed with `signature`, cut into CHUNK-sized reads. */
function chunksOf(signature: string): Uint8Array[] {
  const bytes = new TextEncoder().encode(signedBody([signature]));
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += CHUNK) out.push(bytes.subarray(at, at + CHUNK));
  return out;
}

/**
 * A fetch whose body gives `chunks` one per read, only when read; the read of chunk `holdAt`
 * waits for `gate` (and says so on `held`). `reads.n` counts the chunks given.
 */
function bodyOf(
  chunks: Uint8Array[],
  reads: { n: number },
  hold?: { at: number; gate: Promise<void>; held: () => void },
): typeof fetch {
  return () => {
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (hold !== undefined && reads.n === hold.at) {
          hold.held();
          await hold.gate;
        }
        if (reads.n < chunks.length) c.enqueue(chunks[reads.n++]!);
        else c.close();
      },
    }, { highWaterMark: 0 });
    return Promise.resolve(
      new Response(body, { headers: { "content-type": "text/event-stream" } }),
    );
  };
}

async function collect(it: AsyncIterable<ModelStreamItem>): Promise<ModelStreamItem[]> {
  const out: ModelStreamItem[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** The signature the stream's thinking block came back with. */
function signatureOf(items: ModelStreamItem[]): string | undefined {
  for (const i of items) {
    if (i.kind === "message" && i.message.type === "thinking") {
      const f = (i.message as { fidelity?: Record<string, unknown> }).fidelity;
      const sig = f?.signature ?? (f?.anthropic as { signature?: string } | undefined)?.signature;
      if (typeof sig === "string") return sig;
    }
  }
  return undefined;
}

Deno.test("a second large event is not read on while the first is under way, and both complete", async () => {
  const [sigA, sigB] = ["A", "B"].map((c) => c.repeat(3 * LARGE_EVENT));
  const [a, b] = [chunksOf(sigA!), chunksOf(sigB!)];
  // Far enough into A's event to hold the room, not yet at its end.
  const holdAt = Math.ceil((2 * LARGE_EVENT) / CHUNK);
  let letGo = () => {};
  const gate = new Promise<void>((resolve) => letGo = resolve);
  let held = () => {};
  const aHeld = new Promise<void>((resolve) => held = resolve);
  const readsA = { n: 0 };
  const readsB = { n: 0 };
  const first = collect(streamModel(request(), {
    fetch: bodyOf(a, readsA, { at: holdAt, gate, held }),
    idleTimeoutMs: 0,
  }));
  await aHeld;
  assert.equal(eventRoomWaiting(), 0);
  let bDone = false;
  const second = collect(streamModel(request(), { fetch: bodyOf(b, readsB), idleTimeoutMs: 0 }))
    .finally(() => bDone = true);
  // B reads until its own event passes LARGE_EVENT, then waits for the room A holds.
  while (eventRoomWaiting() === 0 && !bDone) await new Promise((r) => setTimeout(r, 0));
  assert.equal(bDone, false, "B was read to its end while A's large event was under way");
  assert.ok(readsB.n * CHUNK <= LARGE_EVENT + 2 * CHUNK, `B read ${readsB.n} chunks`);
  assert.ok(readsB.n < b.length);
  letGo();
  const [itemsA, itemsB] = await Promise.all([first, second]);
  for (const items of [itemsA, itemsB]) {
    const end = items.at(-1);
    assert.equal(end?.kind === "end" && end.outcome.status, "completed");
  }
  assert.equal(signatureOf(itemsA), sigA);
  assert.equal(signatureOf(itemsB), sigB);
  assert.equal(readsB.n, b.length);
  assert.equal(eventRoomWaiting(), 0);
});

Deno.test("a response stopped while it waits for the room leaves the queue, and the holder completes", async () => {
  const sig = "C".repeat(3 * LARGE_EVENT);
  const holdAt = Math.ceil((2 * LARGE_EVENT) / CHUNK);
  let letGo = () => {};
  const gate = new Promise<void>((resolve) => letGo = resolve);
  let held = () => {};
  const aHeld = new Promise<void>((resolve) => held = resolve);
  const first = collect(streamModel(request(), {
    fetch: bodyOf(chunksOf(sig), { n: 0 }, { at: holdAt, gate, held }),
    idleTimeoutMs: 0,
  }));
  await aHeld;
  const stop = new AbortController();
  let bDone = false;
  const second = collect(streamModel(request(), {
    fetch: bodyOf(chunksOf(sig), { n: 0 }),
    idleTimeoutMs: 0,
    signal: stop.signal,
  })).finally(() => bDone = true);
  while (eventRoomWaiting() === 0 && !bDone) await new Promise((r) => setTimeout(r, 0));
  assert.equal(eventRoomWaiting(), 1);
  stop.abort();
  const itemsB = await second;
  const endB = itemsB.at(-1);
  assert.equal(endB?.kind === "end" && endB.outcome.status, "aborted");
  assert.equal(eventRoomWaiting(), 0);
  letGo();
  const endA = (await first).at(-1);
  assert.equal(endA?.kind === "end" && endA.outcome.status, "completed");
});

Deno.test("a plain JSON body past LARGE_EVENT takes the room as a large event does (round 25 C11)", async () => {
  // Eight non-streamed bodies of 30 MB at once went past the room: 431 MB.
  const sig = "D".repeat(3 * LARGE_EVENT);
  const holdAt = Math.ceil((2 * LARGE_EVENT) / CHUNK);
  let letGo = () => {};
  const gate = new Promise<void>((resolve) => letGo = resolve);
  let held = () => {};
  const aHeld = new Promise<void>((resolve) => held = resolve);
  const first = collect(streamModel(request(), {
    fetch: bodyOf(chunksOf(sig), { n: 0 }, { at: holdAt, gate, held }),
    idleTimeoutMs: 0,
  }));
  await aHeld;
  const text = "J".repeat(3 * LARGE_EVENT);
  const json = new TextEncoder().encode(JSON.stringify({
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "m",
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    usage: { input_tokens: 1, output_tokens: 1 },
  }));
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < json.length; at += CHUNK) chunks.push(json.subarray(at, at + CHUNK));
  const reads = { n: 0 };
  const jsonFetch: typeof fetch = () =>
    Promise.resolve(
      new Response(
        new ReadableStream<Uint8Array>({
          pull(c) {
            if (reads.n < chunks.length) c.enqueue(chunks[reads.n++]!);
            else c.close();
          },
        }, { highWaterMark: 0 }),
        { headers: { "content-type": "application/json" } },
      ),
    );
  let bDone = false;
  const second = collect(streamModel(request(), { fetch: jsonFetch, idleTimeoutMs: 0 }))
    .finally(() => bDone = true);
  while (eventRoomWaiting() === 0 && !bDone) await new Promise((r) => setTimeout(r, 0));
  assert.equal(bDone, false, "the body was read to its end while A's large event was under way");
  assert.equal(eventRoomWaiting(), 1);
  assert.ok(reads.n < chunks.length, `B read ${reads.n} of ${chunks.length} chunks`);
  letGo();
  const [itemsA, itemsB] = await Promise.all([first, second]);
  for (const items of [itemsA, itemsB]) {
    const end = items.at(-1);
    assert.equal(end?.kind === "end" && end.outcome.status, "completed");
  }
  const answer = itemsB.find((i) => i.kind === "message" && i.message.type === "text");
  assert.equal(
    answer?.kind === "message" && answer.message.type === "text" && answer.message.text,
    text,
  );
  assert.equal(eventRoomWaiting(), 0);
});
