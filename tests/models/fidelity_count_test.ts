// An opaque payload is counted by the length of its JSON without being stringified: a 15 MB
// signature stringified to be counted against a response's bound and again for the context's size
// made 15 MB of garbage each time (attack round 24 bounded R10).
import assert from "node:assert/strict";
import { streamModel } from "../../lib/models/stream.ts";
import { contextChars } from "../../lib/agent/context_size.ts";
import type { CompleteMessage } from "../../lib/protocol/types.ts";
import { signedBody, signedRequest } from "../support/signed_stream.ts";

const MiB = 1024 * 1024;
const SIGNATURE = "S".repeat(3 * MiB);

/** Run `fn` and return the lengths of the JSON.stringify results of at least 1 MiB meanwhile. */
async function largeStringifies(fn: () => Promise<void> | void): Promise<number[]> {
  const real = JSON.stringify;
  const seen: number[] = [];
  JSON.stringify = ((...args: Parameters<typeof real>) => {
    const out = real(...args);
    if (typeof out === "string" && out.length >= MiB) seen.push(out.length);
    return out;
  }) as typeof real;
  try {
    await fn();
  } finally {
    JSON.stringify = real;
  }
  return seen;
}

Deno.test("a response's 3 MiB signature is counted without being stringified", async () => {
  const body = signedBody([SIGNATURE]);
  const request = signedRequest();
  const fetch = () =>
    Promise.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } }));
  let signed: CompleteMessage | undefined;
  const seen = await largeStringifies(async () => {
    for await (const x of streamModel(request, { fetch, idleTimeoutMs: 0 })) {
      if (x.kind === "message" && x.message.type === "thinking") signed = x.message;
      if (x.kind === "end") assert.equal(x.outcome.status, "completed");
    }
  });
  assert.ok(signed, "the signed thinking block came");
  assert.deepEqual(seen, [], "a payload of megabytes was stringified while the response was read");
  // The context's size counts it the same way.
  const chars = await largeStringifies(() => {
    assert.equal(contextChars(signed!), JSON.stringify(signed!.fidelity).length + 1);
  });
  assert.deepEqual(chars.slice(0, -1), [], "contextChars stringified the payload");
});
