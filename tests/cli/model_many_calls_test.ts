// A response of many small tool calls ends at the limit on calls per response (lib/models/limits.ts),
// long before the limits on arguments: Gemini sends 1500 whole `write_file` calls of 4 KiB, one event
// each (1500 calls once took penguin's tool host past 1 GB: a worker per call, all at once), and an
// openai-chat server opens 1500 parallel calls whose arguments never close (each new call once
// re-parsed the arguments of every open one). Either way `penguin run` stops reading at call 257
// with the cap error, keeps a valid trace, and stays under a peak bound.
import type { WireProtocol } from "../../lib/models/wire.ts";
import { CAN_MEASURE_PEAK } from "../support/peak_memory.ts";
import { assertRunStopsAtCap } from "./_stream_cap.ts";

const MB = 1000 * 1000;
/** The most penguin (or any process it started) may hold at its peak. */
const PEAK_LIMIT = 300 * MB;
/** Calls the server would send, were it read to the end (6 MB of arguments: the call limit stops it first). */
const CALLS = 1500;
const CONTENT = "x".repeat(4096);

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\r\n\r\n`;

/**
 * 16 MiB of SSE comments after the calls: more than the sockets buffer, so the server is still
 * sending when penguin stops reading, and sees it go (a comment is no content: read to the end,
 * it would change nothing).
 */
function* padding(): Generator<string> {
  const comment = `: ${"-".repeat(1020)}\r\n\r\n`;
  for (let i = 0; i < 16 * 1024; i++) yield comment;
}

function* gemini(): Iterator<string> {
  for (let i = 0; i < CALLS; i++) {
    const call = { name: "write_file", args: { file_path: `f${i}.txt`, content: CONTENT } };
    yield sse({ candidates: [{ content: { role: "model", parts: [{ functionCall: call }] } }] });
  }
  yield* padding();
  yield sse({ candidates: [{ content: { role: "model", parts: [] }, finishReason: "STOP" }] });
}

function* openaiChat(): Iterator<string> {
  for (let i = 0; i < CALLS; i++) {
    const fn = { name: "write_file", arguments: `{"file_path":"f${i}.txt","content":"${CONTENT}` };
    const tc = { index: i, id: `call_${i}`, type: "function", function: fn };
    yield sse({ choices: [{ index: 0, delta: { tool_calls: [tc] }, finish_reason: null }] });
  }
  yield* padding();
  yield sse({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] });
  yield "data: [DONE]\n\n";
}

const CASES: { protocol: WireProtocol; source: () => Iterator<string> }[] = [
  { protocol: "gemini", source: gemini },
  { protocol: "openai-chat", source: openaiChat },
];

const CAP =
  /more than 256 tool calls; penguin stopped reading it \(a limit on what one response may hold; ask the model to make fewer calls at once\)/;

for (const k of CASES) {
  Deno.test({
    name: `${k.protocol}: a response of ${CALLS} small tool calls ends the run at 256 calls`,
    ignore: !CAN_MEASURE_PEAK,
    fn: () => assertRunStopsAtCap({ ...k, cap: CAP, peakLimit: PEAK_LIMIT }),
  });
}
