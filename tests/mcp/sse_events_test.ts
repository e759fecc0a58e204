// boundedSseEvents: events split at every end of line the SSE format knows (a lone \r too, so an
// event checked here is the event a standard parser sees), comments left out, and the bound
// holding before an event is whole.
import assert from "node:assert/strict";
import { boundedSseEvents, type SseEvent } from "../../lib/mcp/sse_events.ts";

function feed(max: number, chunks: string[]): { events: SseEvent[]; tooLong: number } {
  const got = { events: [] as SseEvent[], tooLong: 0 };
  const push = boundedSseEvents(max, {
    onEvent: (e) => got.events.push(e),
    onTooLong: () => got.tooLong++,
  });
  for (const c of chunks) push(c);
  return got;
}

Deno.test("boundedSseEvents splits events at \\n, \\r\\n and a lone \\r, across chunks", () => {
  const got = feed(1000, [
    "id: 1\r",
    "\ndata: a\r\n",
    "data:b\rdata\r",
    "\r: comment\n",
    'event: message\ndata: {"x"',
    ":1}\n\n",
    "data: unfinished\n",
  ]);
  assert.deepEqual(got, {
    events: [
      { lines: ["id: 1", "data: a", "data:b", "data"], data: "a\nb\n" },
      { lines: ["event: message", 'data: {"x":1}'], data: '{"x":1}' },
    ],
    tooLong: 0,
  });
});

Deno.test("a lone \\r cannot hide a second data line from the check", () => {
  // A parser that split only at \n would see one line, its data a string never closed.
  const got = feed(1000, ['data: [\revent: "\rdata: {},{}]\n\n']);
  assert.deepEqual(got.events, [{
    lines: ["data: [", 'event: "', "data: {},{}]"],
    data: "[\n{},{}]",
  }]);
});

Deno.test("boundedSseEvents reports an event past the bound once, before it ends, and reads nothing after", () => {
  assert.deepEqual(feed(12, ["data: 1\n\ndata: 12", "345", "6789\n\n", "data: 2\n\n"]), {
    events: [{ lines: ["data: 1"], data: "1" }],
    tooLong: 1,
  });
  // Many short lines count toward the event, not each line alone.
  assert.equal(feed(12, ["data: 1\ndata: 2\ndata: 3\n"]).tooLong, 1);
  // Comments are not kept, so they do not count.
  assert.equal(feed(12, [": keep-alive\n".repeat(5) + "data: 1\n\n"]).events.length, 1);
});
