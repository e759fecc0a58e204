// Large objects made garbage are counted toward one full collection every 32 MiB of them
// (`largeGarbage`, lib/state/_gc.ts): a server-sent event of megabytes once it is parsed, a trace
// record of megabytes once it is written (attack round 24 bounded R10: eight subagents answering a
// 15 MB signature at once grew the heap to several times what was alive, 389-514 MB).
import assert from "node:assert/strict";
import { denoEval } from "../support/deno_eval.ts";
import { join } from "node:path";
import { fullCollections, LARGE_GARBAGE_MIN, largeGarbage } from "../../lib/state/_gc.ts";
import { openTraceWriter } from "../../lib/trace/writer.ts";
import { streamModel } from "../../lib/models/stream.ts";
import { signedBody, signedRequest } from "../support/signed_stream.ts";

const MiB = 1024 * 1024;

Deno.test("large objects made garbage run a full collection every 32 MiB of them, small ones never", () => {
  const before = fullCollections();
  for (let i = 0; i < 1000; i++) largeGarbage(LARGE_GARBAGE_MIN - 1);
  assert.equal(fullCollections(), before, "objects under 1 MiB are not counted");
  for (let i = 0; i < 32; i++) largeGarbage(4 * MiB);
  const ran = fullCollections() - before;
  assert.ok(ran >= 3 && ran <= 4, `${ran} collections for 128 MiB`);
});

Deno.test("a trace writer counts the records of megabytes it wrote", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-large-garbage-" });
  try {
    const w = await openTraceWriter({
      tracesDir: dir,
      sessionId: "session-2026-12-06-10-00-00-0a0b0c0d",
      dateDir: "2026-12-06",
      fsync: "never",
    });
    const before = fullCollections();
    for (let i = 0; i < 12; i++) {
      await w.append({
        timestamp: "2026-12-06T10:00:00.000Z",
        type: "model_msg",
        payload: {
          type: "text",
          role: "assistant",
          text: "x".repeat(4 * MiB),
          stop_reason: "completed",
        },
      });
    }
    await w.close();
    assert.ok(fullCollections() > before, "48 MiB of records written, no collection");
    assert.ok((await Deno.stat(join(dir, "2026-12-06"))).isDirectory);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A fetch answering a server-sent event stream of `body`, read `size` bytes at a time (as network reads come). */
function chunkedFetch(body: Uint8Array, size: number): () => Promise<Response> {
  return () => {
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (at >= body.length) return c.close();
        c.enqueue(body.subarray(at, at += size));
      },
    });
    return Promise.resolve(
      new Response(stream, { headers: { "content-type": "text/event-stream" } }),
    );
  };
}

Deno.test("a response's large events are counted once each has ended", async () => {
  const body = new TextEncoder().encode(
    signedBody(["S".repeat(2 * MiB), "S".repeat(2 * MiB - 1024)]),
  );
  const request = signedRequest();
  const fetch = chunkedFetch(body, 256 * 1024);
  const before = fullCollections();
  // Three responses of two 2 MiB signatures each (within what a response may hold): 12 MiB of
  // events, each leaving three copies of itself (the framer's buffer, its data, the parse): 36 MiB.
  for (let i = 0; i < 3; i++) {
    let end: unknown;
    for await (const x of streamModel(request, { fetch, idleTimeoutMs: 0 })) {
      if (x.kind === "end") {
        end = x.outcome.status === "completed"
          ? "completed"
          : JSON.stringify(x.outcome).slice(0, 300);
      }
    }
    assert.equal(end, "completed");
  }
  assert.ok(
    fullCollections() > before,
    "12 MiB of large events (36 MiB of copies) read, no collection",
  );
});

Deno.test("a process that never collects never looks for the collector (a V8 context)", async () => {
  const gc = new URL("../../lib/state/_gc.ts", import.meta.url).href;
  const writer = new URL("../../lib/trace/writer.ts", import.meta.url).href;
  const mask = new URL("../../lib/tools/secret_mask.ts", import.meta.url).href;
  const script = `
    const { collectorFound, fullCollections, largeGarbage } = await import(${JSON.stringify(gc)});
    await import(${JSON.stringify(writer)});
    await import(${JSON.stringify(mask)});
    const before = collectorFound();
    for (let i = 0; i < 9; i++) largeGarbage(4 * 1024 * 1024);
    console.log(JSON.stringify({ before, after: collectorFound(), ran: fullCollections() }));`;
  const r = JSON.parse(new TextDecoder().decode(await denoEval(script)));
  assert.deepEqual(r, { before: false, after: true, ran: 1 });
});

Deno.test("events between 64 KiB and 1 MiB count toward the collector too (round 25 bounded C3)", async () => {
  // Eight subagents streaming events of 1,000,000 bytes (just under the earlier 1 MiB bound) took
  // penguin to 461-575 MB: neither the event room nor the collector saw them.
  const sigs = Array.from({ length: 12 }, (_, i) => String.fromCharCode(97 + i).repeat(300_000));
  const body = new TextEncoder().encode(signedBody(sigs));
  const request = signedRequest();
  const fetch = chunkedFetch(body, 64 * 1024);
  const before = fullCollections();
  // Four responses of twelve 300 KB events: 14 MB of events, three copies each.
  for (let i = 0; i < 4; i++) {
    let end: unknown;
    for await (const x of streamModel(request, { fetch, idleTimeoutMs: 0 })) {
      if (x.kind === "end") end = x.outcome.status;
    }
    assert.equal(end, "completed");
  }
  assert.ok(fullCollections() > before, "14 MB of 300 KB events read, no collection");
});
