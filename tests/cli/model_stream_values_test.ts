// JSON values bounded on real `penguin run`s against a hostile Chat Completions server: one
// event whose unused field is ONE object of 700 000 keys (one container, under the objects-and-
// arrays bound), and one response of calls each under a call's bound whose arguments add up to
// 1.6 million values. Each used to be parsed (and the calls run); now the request stops at the
// value bound (lib/protocol/json_shape.ts, lib/models/limits.ts), not retried, peak ≤ 300 MB.
import assert from "node:assert/strict";
import { startModelServer, turn } from "../support/model_server.ts";
import type { ScriptedTurn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";

const MB = 1000 * 1000;
/** The most penguin may hold at its peak while reading a hostile response. */
const PEAK_LIMIT = 300 * MB;

/** One Chat Completions stream event (the fields penguin needs, nothing more). */
const ev = (fields: Record<string, unknown>, delta: unknown, finish: string | null = null) =>
  `data: ${
    JSON.stringify({ ...fields, choices: [{ index: 0, delta, finish_reason: finish }] })
  }\n\n`;

/** A whole Chat Completions stream of `body` events, then `finish`. */
function chatStream(body: string[], finish: string): ScriptedTurn {
  const usage = `data: ${
    JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } })
  }\n\n`;
  const events = [ev({}, { role: "assistant", content: "" }), ...body, ev({}, {}, finish) + usage];
  return { items: [], event_source: () => [...events, "data: [DONE]\n\n"].values() };
}

/** `penguin run` against `first` (then "done"): its exit, output, peak and the requests made. */
async function runAgainst(first: ScriptedTurn) {
  const server = await startModelServer({
    handler: (_req, index) => index === 0 ? first : turn.text("done"),
  });
  const sb = await makeRoot(server, { visible: true });
  try {
    const r = await runCliPeak(
      ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"],
      sb.base,
    );
    return { ...r, out: r.stdout + r.stderr, requests: server.requests.length };
  } finally {
    await server.close();
    await sb.cleanup();
  }
}

Deno.test({
  name: "an event holding one object of 700 000 keys: the run stops at the value bound",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const keys = Array.from({ length: 700_000 }, (_, i) => `"k${i}":0`).join(",");
    const junk = ev({ junk: {} }, { content: "hi" }).replace('"junk":{}', `"junk":{${keys}}`);
    const r = await runAgainst(chatStream([junk], "stop"));
    assert.equal(r.code, 1, r.out);
    assert.match(
      r.out,
      /has an event with more than 200000 JSON values; penguin stopped reading it/,
    );
    assert.equal(r.requests, 1, "not retried");
    assert.ok(r.peakBytes <= PEAK_LIMIT, `penguin peak ${Math.round(r.peakBytes / MB)} MB`);
  },
});

Deno.test({
  name: "16 calls of 99 000 objects each: the run stops past 400 000 values over the calls",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const args = `{"file_path":"a","x":[${"{},".repeat(98_999)}{}]}`;
    const calls = Array.from({ length: 16 }, (_, i) =>
      ev({}, {
        tool_calls: [{
          index: i,
          id: `c${i}`,
          function: { name: "no_such_tool", arguments: args },
        }],
      }));
    const r = await runAgainst(chatStream(calls, "tool_calls"));
    assert.equal(r.code, 1, r.out);
    assert.match(
      r.out,
      /has more than 400000 JSON values in tool-call arguments over its calls; penguin stopped reading it/,
    );
    assert.equal(r.requests, 1, "not retried");
    assert.ok(r.peakBytes <= PEAK_LIMIT, `penguin peak ${Math.round(r.peakBytes / MB)} MB`);
  },
});
