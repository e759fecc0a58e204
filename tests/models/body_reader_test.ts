/**
 * A model response body is read into one refilled buffer
 * (lib/models/_body_reader.ts). fetch's body is a byte stream that gives a
 * default reader a fresh 64 KiB buffer for every read; a server writing
 * each 8-character event on its own made every event such a read, and four
 * such responses took penguin past 300 MB. The stream below hands reads out
 * as fetch's does and notes each buffer it is given that is not the one of
 * the read before (a fresh buffer is zeroed; a refilled one still starts
 * with the event it last held).
 *
 * @module
 */
import assert from "node:assert/strict";
import { streamModel } from "../../lib/models/stream.ts";
import { bodyReader, READ_BUFFER_BYTES } from "../../lib/models/_body_reader.ts";
import type { WireRequest } from "../../lib/models/wire.ts";
import { ENCODERS, turn } from "../support/model_server.ts";

const enc = new TextEncoder();

/** A byte stream of `events`, one a read, into the buffer each read brings (64 KiB when the reader brings none). */
function eventBody(events: string[]): { body: ReadableStream<Uint8Array>; fresh: () => number } {
  let i = 0;
  let fresh = 0;
  const body = new ReadableStream({
    type: "bytes",
    autoAllocateChunkSize: 64 * 1024,
    pull(c) {
      if (i >= events.length) {
        c.close();
        c.byobRequest?.respond(0);
        return;
      }
      const view = c.byobRequest!.view as Uint8Array;
      if (view[0] === 0) fresh++;
      const { written } = enc.encodeInto(events[i++]!, view);
      c.byobRequest!.respond(written);
    },
  });
  return { body, fresh: () => fresh };
}

const request: WireRequest = {
  endpoint: {
    protocol: "openai-chat",
    provider: "p",
    model_id: "m",
    base_url: "http://127.0.0.1:9/v1",
  },
  system_prompt: "",
  tools: [],
  history: [{ type: "text", role: "user", text: "hi", stop_reason: "completed" }],
};

Deno.test("a response of 5000 tiny events is read into one buffer, its text whole", async () => {
  const text = "abcdefgh".repeat(5000);
  const encoder = ENCODERS.find((e) => e.protocol === "openai-chat")!;
  const events = encoder.encodeTurn(turn.text(text, { chunk: 8 }), "m");
  assert.ok(events.length > 5000);
  const { body, fresh } = eventBody(events);
  const fetch = () =>
    Promise.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } }));
  let answer = "";
  let outcome: unknown;
  for await (const item of streamModel(request, { fetch })) {
    if (item.kind === "message" && item.message.type === "text") answer = item.message.text;
    if (item.kind === "end") outcome = item.outcome.status;
  }
  assert.equal(outcome, "completed");
  assert.equal(answer, text);
  const buffers = fresh();
  assert.equal(buffers, 1, `${buffers} buffers handed to the body for ${events.length} reads`);
});

Deno.test("a body that is not a byte stream is read as it comes", async () => {
  const chunks = ["one ", "two ", "three"];
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const s of chunks) c.enqueue(enc.encode(s));
      c.close();
    },
  });
  const reader = bodyReader(body);
  const dec = new TextDecoder();
  let got = "";
  for (let r = await reader.read(); !r.done; r = await reader.read()) got += dec.decode(r.value);
  assert.equal(got, "one two three");
});

Deno.test("each read of a byte stream fills the one buffer", async () => {
  const { body } = eventBody(["first", "second", "third"]);
  const reader = bodyReader(body);
  const dec = new TextDecoder();
  const got: string[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    assert.equal(r.value.buffer.byteLength, READ_BUFFER_BYTES);
    got.push(dec.decode(r.value));
  }
  assert.deepEqual(got, ["first", "second", "third"]);
  await reader.cancel();
});
