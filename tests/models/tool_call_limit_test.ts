// The limit on tool calls per response (lib/models/limits.ts) over all four wire protocols: call
// 257 stops the request (not retried) and the 256 before it are kept; one event listing thousands
// of calls is cut at the limit by the Gemini and Chat Completions parsers. Then the Chat
// Completions parser's completeness test: arguments are scanned as they come and parsed once,
// when they close, so a call ends early only when its arguments are whole JSON.
import assert from "node:assert/strict";
import { CLIENT_TYPES } from "../../lib/state/project_config_types.ts";
import type { WireDelta, WireProtocol } from "../../lib/models/wire.ts";
import type { ToolCallMessage } from "../../lib/protocol/types.ts";
import { createChatParser } from "../../lib/models/protocols/_openai_chat_parse.ts";
import { createGeminiParser } from "../../lib/models/protocols/_gemini_parse.ts";
import { createJsonCloseScanner } from "../../lib/models/protocols/_json_close.ts";
import { createTranslator } from "../../lib/models/translate.ts";
import { MAX_RESPONSE_TOOL_CALLS, TOO_LARGE_CODE } from "../../lib/models/limits.ts";
import { item, turn, withModelServer } from "../support/model_server.ts";
import { collect, writeFileRequest } from "./_support.ts";

/** The four protocols, from the one list of protocol ids. */
const PROTOCOLS: readonly WireProtocol[] = CLIENT_TYPES;

const CAP = /more than 256 tool calls; penguin stopped reading it/;

for (const protocol of PROTOCOLS) {
  Deno.test(`${protocol}: tool call 257 stops the request; the 256 before it are kept`, async () => {
    const items = Array.from(
      { length: 300 },
      (_, i) => item.toolCall("write_file", { content: `c${i}` }, { id: `c${i}` }),
    );
    await withModelServer({ turns: [turn.of(...items)] }, async (s) => {
      const c = await collect(writeFileRequest(s, protocol));
      assert.equal(c.outcome.status, "failed");
      assert.equal(c.outcome.permanent, true);
      assert.match(c.outcome.error_message!, CAP);
      const calls = c.completes.filter((m): m is ToolCallMessage => m.type === "tool_call");
      assert.equal(calls.length, MAX_RESPONSE_TOOL_CALLS);
      assert.ok(calls.every((m) => m.stop_reason === "completed"));
      assert.equal(JSON.parse(calls.at(-1)!.arguments).content, "c255");
      assert.equal(s.requests.length, 1);
    });
  });
}

/** Tool-call starts the parser makes of one event, and whether the translator stopped at the cap. */
function throughTranslator(deltas: WireDelta[]): { starts: number; code?: string | undefined } {
  const t = createTranslator();
  for (const d of deltas) {
    t.push(d);
    if (t.state.error) break;
  }
  return {
    starts: deltas.filter((d) => d.type === "tool_call_start").length,
    code: t.state.error?.code,
  };
}

Deno.test("gemini parser: one event of 5000 calls makes 257 of them, the translator stops", () => {
  const part = (i: number) => ({ functionCall: { name: "w", args: { i } } });
  const parts = Array.from({ length: 5000 }, (_, i) => part(i));
  const event = { data: JSON.stringify({ candidates: [{ content: { parts } }] }) };
  const r = throughTranslator(createGeminiParser().push(event));
  assert.deepEqual(r, { starts: MAX_RESPONSE_TOOL_CALLS + 1, code: TOO_LARGE_CODE });
});

Deno.test("openai-chat parser: one event of 5000 calls makes 257 of them", () => {
  const tool_calls = Array.from({ length: 5000 }, (_, i) => ({
    index: i,
    id: `c${i}`,
    function: { name: "w", arguments: "{" },
  }));
  const event = { data: JSON.stringify({ choices: [{ index: 0, delta: { tool_calls } }] }) };
  const r = throughTranslator(createChatParser().push(event));
  assert.deepEqual(r, { starts: MAX_RESPONSE_TOOL_CALLS + 1, code: TOO_LARGE_CODE });
});

const chunk = (delta: unknown) => ({
  data: JSON.stringify({ choices: [{ index: 0, delta, finish_reason: null }] }),
});
const callDelta = (index: number, fn: Record<string, string>, id?: string) =>
  chunk({ tool_calls: [{ index, ...(id ? { id } : {}), function: fn }] });

Deno.test("openai-chat parser: a call ends when the next starts only once its arguments close", () => {
  const p = createChatParser();
  const out: WireDelta[] = [];
  // Call 0's arguments hold brackets and quotes inside a string: still open after them.
  out.push(...p.push(callDelta(0, { name: "w", arguments: '{"a":"}]\\"' }, "c0")));
  out.push(...p.push(callDelta(1, { name: "w", arguments: "{}" }, "c1")));
  assert.ok(!out.some((d) => d.type === "tool_call_end"), "call 0 is not whole JSON yet");
  out.push(...p.push(callDelta(0, { arguments: '"}  ' })));
  // Call 2 starts: calls 0 and 1 are whole JSON now, so both end before it.
  out.push(...p.push(callDelta(2, { name: "w", arguments: "{" }, "c2")));
  const ends = out.filter((d) => d.type === "tool_call_end").map((d) => d.key);
  assert.deepEqual(ends, ["0:0", "1:1"]);
  const args0 = out.filter((d) => d.type === "tool_call_args" && d.key === "0:0")
    .map((d) => (d as { args: string }).args).join("");
  assert.deepEqual(JSON.parse(args0), { a: '}]"' });
});

Deno.test("openai-chat parser: closed brackets that are not JSON never end a call early", () => {
  const p = createChatParser();
  const out: WireDelta[] = [];
  out.push(...p.push(callDelta(0, { name: "w", arguments: "{a}" }, "c0")));
  out.push(...p.push(callDelta(1, { name: "w", arguments: "[1]" }, "c1")));
  out.push(...p.push(callDelta(2, { name: "w", arguments: "{}" }, "c2")));
  const ends = out.filter((d) => d.type === "tool_call_end").map((d) => d.key);
  assert.deepEqual(ends, ["1:1"], "only call 1 (whole JSON) ended when call 2 started");
  out.push(...p.end());
  assert.equal(out.filter((d) => d.type === "tool_call_end").length, 3);
});

Deno.test("json close scanner: states over streamed chunks", () => {
  const states = (chunks: string[]) => {
    const s = createJsonCloseScanner();
    return chunks.map((c) => (s.push(c), s.state));
  };
  assert.deepEqual(states([" ", "{", '"k":"{[', '\\"', '"', "}", " \n", "x"]), [
    "empty",
    "open",
    "open",
    "open",
    "open",
    "closed",
    "closed",
    "other",
  ]);
  assert.deepEqual(states(["[[]", "]"]), ["open", "closed"]);
  assert.deepEqual(states(["12"]), ["other"]);
  assert.deepEqual(states(['"s"']), ["other"]);
});
