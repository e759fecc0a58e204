/**
 * The cost of a stream cut into tiny events, one network read each (a
 * provider may write every few characters on its own): the driver hands
 * the deltas on merged, not one message per event, and sets no timer per
 * read. Measured as work (items handed on, timers set), not time: the
 * responses come from an in-process body whose reads all settle at once.
 */
import assert from "node:assert/strict";
import { streamModel } from "../../lib/models/stream.ts";
import type { ModelStreamItem } from "../../lib/models/outcome.ts";
import type { WireProtocol, WireRequest } from "../../lib/models/wire.ts";
import { CLIENT_TYPES } from "../../lib/state/project_config_types.ts";
import { ENCODERS, item, turn } from "../support/model_server.ts";
import { assertPartialDiscipline } from "./_support.ts";

/** Characters of the call's `content` argument, streamed 8 at a time. */
const CONTENT = 64 * 1024;

function request(protocol: WireProtocol): WireRequest {
  return {
    endpoint: {
      provider: "scripted",
      model_id: "m",
      protocol,
      base_url: "http://127.0.0.1:9/v1",
      api_key: "sk-test",
    },
    system_prompt: "",
    tools: [{ name: "write_file", description: "Write", parameters: { type: "object" } }],
    history: [{ type: "text", role: "user", text: "hi", stop_reason: "completed" }],
  };
}

/** A fetch whose response body gives `events` one per read, each read settled at once. */
function oneEventPerRead(events: string[], reads: { n: number }): typeof fetch {
  const bytes = new TextEncoder();
  return () => {
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        reads.n++;
        if (i < events.length) c.enqueue(bytes.encode(events[i++]!));
        else c.close();
      },
    }, { highWaterMark: 0 });
    const type = "text/event-stream";
    return Promise.resolve(new Response(body, { headers: { "content-type": type } }));
  };
}

/** Text and a call's arguments, 8 characters an event (gemini sends a call's arguments whole). */
const TURN = {
  ...turn.of(
    item.text("T".repeat(CONTENT)),
    item.toolCall("write_file", { content: "Q".repeat(CONTENT) }, { id: "c1" }),
  ),
  chunk: 8,
};

for (const protocol of CLIENT_TYPES) {
  Deno.test(`${protocol}: 8-character events, one read each, are handed on merged, with no timer per read`, async () => {
    const encoder = ENCODERS.find((e) => e.protocol === protocol)!;
    const events = encoder.encodeTurn(TURN, "m");
    assert.ok(events.length > CONTENT / 8, `${protocol}: one event per 8 characters`);
    const reads = { n: 0 };
    const realSetTimeout = globalThis.setTimeout;
    let timers = 0;
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      timers++;
      return realSetTimeout(...args);
    }) as typeof setTimeout;
    const items: ModelStreamItem[] = [];
    try {
      const opts = { fetch: oneEventPerRead(events, reads), idleTimeoutMs: 60_000 };
      for await (const it of streamModel(request(protocol), opts)) items.push(it);
    } finally {
      globalThis.setTimeout = realSetTimeout;
    }
    const end = items.at(-1);
    assert.equal(end?.kind === "end" && end.outcome.status, "completed");
    assert.ok(reads.n >= events.length, "every event was its own read");
    const messages = items.flatMap((i) => (i.kind === "message" ? [i.message] : []));
    assertPartialDiscipline(messages);
    const text = messages.find((m) => m.type === "text") as { text: string };
    assert.equal(text.text.length, CONTENT);
    const call = messages.find((m) => m.type === "tool_call") as { arguments: string };
    assert.equal(JSON.parse(call.arguments).content.length, CONTENT);
    // One message per event before: thousands. Merged: each segment's start, a few deltas, its end.
    assert.ok(messages.length <= 24, `${messages.length} messages for ${events.length} events`);
    assert.ok(timers <= 8, `${timers} timers set for ${reads.n} reads`);
  });
}
