// An event under every byte limit whose JSON holds millions of small values costs penguin its
// parse, not its bytes (`{},` is 3 bytes and one object): one openai-chat event of 8 MiB of
// unused `"junk":[{},{},…]` (about 2.8 million objects) took `penguin run` to 393 MB (150 MB now) before the
// event was judged by its brackets (lib/protocol/json_shape.ts). Now the run ends at that event
// with the limit's error, not retried, and its peak stays near that of a plain run.
import assert from "node:assert/strict";
import { ENCODERS, startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";

const MB = 1000 * 1000;
const MiB = 1024 * 1024;
/** The most penguin may hold at its peak (without the bound it reached well over this). */
const PEAK_LIMIT = 200 * MB;

/** openai-chat events of the text "QZ", the one carrying "Q" with `size` bytes of unused `{},`. */
function junkEvents(size: number): string[] {
  const encoder = ENCODERS.find((e) => e.protocol === "openai-chat")!;
  const events = encoder.encodeTurn(turn.text("QZ", { chunk: 1 }), "m");
  const at = events.findIndex((e) => e.includes('"Q"'));
  const junk = `"junk":[${"{},".repeat(Math.floor(size / 3))}{}],`;
  events[at] = events[at]!.replace("data: {", `data: {${junk}`);
  return events;
}

Deno.test({
  name: "openai-chat: one 8 MiB event of empty objects ends the run at the bound, memory held",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const events = junkEvents(8 * MiB);
    const server = await startModelServer({
      handler: (_req, index) =>
        index === 0 ? { items: [], event_source: () => events.values() } : turn.text("done"),
    });
    const sb = await makeRoot(server, { visible: true, protocol: "openai-chat" });
    try {
      const r = await runCliPeak(
        ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"],
        sb.base,
      );
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(
        r.stdout + r.stderr,
        /has an event with more than 100000 JSON objects and arrays; penguin stopped reading it/,
      );
      assert.equal(server.requests.length, 1, "not retried");
      assert.ok(r.peakBytes <= PEAK_LIMIT, `penguin peak ${Math.round(r.peakBytes / MB)} MB`);
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});
