// Request bodies built whole hold at most 4 MiB of history together in a process; a body that does
// not fit is streamed (chunked), the same JSON. Attack round 25: eight subagents each resending
// megabytes of signatures built every body whole at once (640 MB).
import assert from "node:assert/strict";
import {
  claimWholeBody,
  SMALL_BODY_CHARS,
  WHOLE_BODIES_CHARS,
  wholeBodiesInFlight,
} from "../../lib/models/_body_room.ts";
import { streamModel } from "../../lib/models/stream.ts";
import type { CompleteMessage } from "../../lib/protocol/types.ts";
import { startModelServer, turn } from "../support/model_server.ts";

const MiB = 1024 * 1024;

Deno.test("bodies built whole share 4 MiB of history; small ones always fit, larger ones stream", () => {
  assert.equal(wholeBodiesInFlight(), 0);
  const first = claimWholeBody(3 * MiB);
  assert.ok(first, "a 3 MiB history alone is built whole");
  assert.equal(claimWholeBody(2 * MiB), undefined, "3 + 2 MiB do not fit: streamed");
  const small = claimWholeBody(SMALL_BODY_CHARS - 1);
  assert.ok(small, "a history under 1 MiB is built whole whatever is in flight");
  first();
  first(); // idempotent
  assert.equal(wholeBodiesInFlight(), SMALL_BODY_CHARS - 1);
  const second = claimWholeBody(3 * MiB);
  assert.ok(second, "room again once the first was sent");
  second();
  small();
  assert.equal(claimWholeBody(WHOLE_BODIES_CHARS + 1), undefined, "past the room alone: streamed");
  assert.equal(wholeBodiesInFlight(), 0);
});

Deno.test("a request opened while another's whole body is in flight streams its body, the same JSON", async () => {
  let release!: () => void;
  const both = new Promise<void>((r) => release = r);
  let arrived = 0;
  const server = await startModelServer({
    handler: async () => {
      // The first request is answered only once the second has arrived: both are in flight.
      if (++arrived === 2) release();
      await both;
      return turn.text("ok");
    },
  });
  try {
    const history = (ch: string): CompleteMessage[] => [{
      type: "text",
      role: "user",
      text: ch.repeat(3 * MiB),
      stop_reason: "completed",
    }];
    const run = async (ch: string) => {
      for await (
        const x of streamModel({
          endpoint: server.endpoint("openai-chat"),
          system_prompt: "s",
          tools: [],
          history: history(ch),
        })
      ) {
        if (x.kind === "end") assert.equal(x.outcome.status, "completed");
      }
    };
    await Promise.all([run("a"), run("b")]);
    // Either may arrive first; one was built whole, the other streamed.
    const whole = server.requests.find((r) => r.headers["content-length"] !== undefined);
    const streamed = server.requests.find((r) => r !== whole);
    assert.ok(whole && streamed, `two requests, one with a length: ${server.requests.length}`);
    assert.equal(
      whole!.headers["content-length"],
      String(new TextEncoder().encode(JSON.stringify(whole!.body)).length),
    );
    assert.equal(streamed!.headers["transfer-encoding"], "chunked");
    const text = (r: typeof whole) => (r!.body as { messages: { content: string }[] }).messages[1]!;
    assert.equal(text(whole).content.length + text(streamed).content.length, 6 * MiB);
    assert.notEqual(text(whole).content[0], text(streamed).content[0]);
    assert.equal(wholeBodiesInFlight(), 0, "every claim given back");
  } finally {
    await server.close();
  }
});
