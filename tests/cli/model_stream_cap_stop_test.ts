// A response that passes a limit of lib/models/limits.ts ends there: on each of the four wire
// protocols a hostile server streams tool-call arguments (Gemini: text) in 8-character events far
// past the limits (made as they are sent: 64 MiB would take minutes to read whole), and `penguin run` stops
// reading at the limit — the server sees the client go away — ends with the cap error naming
// the limit and how much came, keeps a valid trace, and stays under a peak bound.
import assert from "node:assert/strict";
import { ENCODERS, item, turn } from "../support/model_server.ts";
import type { WireProtocol } from "../../lib/models/wire.ts";
import { CAN_MEASURE_PEAK } from "../support/peak_memory.ts";
import { assertRunStopsAtCap } from "./_stream_cap.ts";

const MB = 1000 * 1000;
const MiB = 1024 * 1024;
/** The most penguin may hold at its peak while reading the stream. */
const PEAK_LIMIT = 250 * MB;
/** What the server would send in all, were it read to the end. */
const SENT_AT_MOST = 64 * MiB;

/** A marker the scripted encoders cut into deltas like any argument text. */
const MARK = "ABCDEFGHIJKLMNOP";

/**
 * The events of a response whose one `write_file` call (or, with `text`,
 * whose text) streams in 8-character deltas, endlessly (up to
 * {@linkcode SENT_AT_MOST}): the encoder's own events up to the first delta
 * of the mark, then that delta again and again.
 */
function tinyDeltas(protocol: WireProtocol, text = false): () => Iterator<string> {
  const encoder = ENCODERS.find((e) => e.protocol === protocol)!;
  // 16 characters before the mark: it starts a delta of its own.
  const it = text
    ? item.text(`................${MARK}`)
    : item.toolCall("write_file", `{"content":"....${MARK}`);
  const events = encoder.encodeTurn({ ...turn.of(it), chunk: 8 }, "m");
  const first = events.findIndex((e) => e.includes(MARK.slice(0, 8)) && !e.includes(MARK));
  assert.ok(first > 0, `${protocol}: a delta event`);
  const head = events.slice(0, first);
  const delta = events[first]!.replace(MARK.slice(0, 8), "QQQQQQQQ");
  return function* () {
    yield* head;
    for (let sent = 0; sent < SENT_AT_MOST; sent += 8) yield delta;
  };
}

const ARGS_CAP =
  /more than 2 MiB of arguments in a tool call \(write_file\); penguin stopped reading it at 2\.0 MiB \(a limit on what one response may hold; ask the model to write large content in smaller parts\)/;

/** Gemini sends a call whole in one event: its row streams text in tiny events instead. */
const CASES: { protocol: WireProtocol; source: () => () => Iterator<string>; cap: RegExp }[] = [
  { protocol: "openai-chat", source: () => tinyDeltas("openai-chat"), cap: ARGS_CAP },
  { protocol: "openai-responses", source: () => tinyDeltas("openai-responses"), cap: ARGS_CAP },
  {
    protocol: "anthropic-messages",
    source: () => tinyDeltas("anthropic-messages"),
    cap: ARGS_CAP,
  },
  {
    protocol: "gemini",
    source: () => tinyDeltas("gemini", true),
    cap: /more than 8 MiB of text; penguin stopped reading it at 8\.0 MiB/,
  },
];

for (const k of CASES) {
  Deno.test({
    name:
      `${k.protocol}: a response streamed on past 8 MiB in tiny events ends the run at the limit`,
    ignore: !CAN_MEASURE_PEAK,
    fn: () => assertRunStopsAtCap({ ...k, source: k.source(), peakLimit: PEAK_LIMIT }),
  });
}
