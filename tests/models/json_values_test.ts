/**
 * JSON values counted on every wire protocol (lib/protocol/json_shape.ts,
 * lib/models/limits.ts): an event, a plain body or a call's arguments under
 * every byte limit whose ONE object holds hundreds of thousands of keys (or
 * whose one array holds that many numbers) is refused unparsed, and so are
 * the calls of one response whose arguments add up past the response's
 * bound though each is under a call's. Real HTTP to the scripted server.
 */
import assert from "node:assert/strict";
import { CLIENT_TYPES } from "../../lib/state/project_config_types.ts";
import type { WireProtocol, WireRequest } from "../../lib/models/wire.ts";
import type { ToolCallMessage } from "../../lib/protocol/types.ts";
import {
  ENCODERS,
  item,
  type ModelServer,
  type ScriptedTurn,
  turn,
  withModelServer,
} from "../support/model_server.ts";
import { collect, type Collected } from "./_support.ts";

const PROTOCOLS: readonly WireProtocol[] = CLIENT_TYPES;

function request(server: ModelServer, protocol: WireProtocol): WireRequest {
  return {
    endpoint: server.endpoint(protocol, "scripted-model", "sk-test"),
    system_prompt: "",
    tools: [{ name: "exec_command", description: "Run a command", parameters: { type: "object" } }],
    history: [{ type: "text", role: "user", text: "hi", stop_reason: "completed" }],
  };
}

/** `"k0":0,"k1":0,…` — `n` keys of one object, each with a number. */
const keys = (n: number) => Array.from({ length: n }, (_, i) => `"${i.toString(36)}":0`).join(",");

/** `protocol`'s text "QZ" whose event carrying "Q" holds an unused object of `n` keys. */
function keysEvent(protocol: WireProtocol, n: number): ScriptedTurn {
  const encoder = ENCODERS.find((e) => e.protocol === protocol)!;
  const events = encoder.encodeTurn(turn.text("QZ", { chunk: 1 }), "scripted-model");
  const at = events.findIndex((e) => e.includes('"Q"'));
  events[at] = events[at]!.replace("data: {", `data: {"junk":{${keys(n)}},`);
  return { items: [], event_source: () => events.values() };
}

/** Calls of exec_command, each's `cmd` an array of `counts[i]` zeros. */
function zerosCalls(counts: number[]): ScriptedTurn {
  const zeros = (n: number) => Array(n).fill(0);
  const t = turn.of(...counts.map((n) => item.toolCall("exec_command", { cmd: zeros(n) })));
  return { ...t, chunk: 1 << 20 };
}

function calls(c: Collected): ToolCallMessage[] {
  return c.completes.filter((m): m is ToolCallMessage => m.type === "tool_call");
}

async function refused(
  s: ModelServer,
  protocol: WireProtocol,
  message: RegExp,
): Promise<Collected> {
  const c = await collect(request(s, protocol));
  assert.equal(c.outcome.status, "failed");
  assert.equal(c.outcome.permanent, true, "not retried");
  assert.match(c.outcome.error_message!, message);
  return c;
}

for (const protocol of PROTOCOLS) {
  Deno.test(`${protocol}: an event holding one object of 200 000 keys fails unparsed`, async () => {
    await withModelServer({ turns: [keysEvent(protocol, 200_000)] }, async (s) => {
      const c = await refused(
        s,
        protocol,
        /The model's response has an event with more than 200000 JSON values; penguin stopped reading it/,
      );
      assert.ok(!c.completes.some((m) => m.type === "text" && m.stop_reason === "completed"));
    });
  });

  Deno.test(`${protocol}: a plain JSON body of one object of 200 000 keys fails unparsed`, async () => {
    const body = `{"junk":{${keys(200_000)}}}`;
    await withModelServer({ turns: [turn.raw(body, "application/json")] }, async (s) => {
      const c = await refused(s, protocol, /has a body with more than 200000 JSON values/);
      assert.deepEqual(c.completes, []);
    });
  });

  Deno.test(`${protocol}: one call's arguments of 200 001 numbers stop the response`, async () => {
    await withModelServer({ turns: [zerosCalls([200_001])] }, async (s) => {
      // Gemini sends the arguments inside the event's JSON: the event is judged, unparsed.
      const what = protocol === "gemini"
        ? "an event"
        : "arguments in a tool call \\(exec_command\\)";
      const c = await refused(
        s,
        protocol,
        new RegExp(`has ${what} with more than 200000 JSON values`),
      );
      for (const call of calls(c)) assert.equal(call.stop_reason, "failed");
    });
  });

  Deno.test(`${protocol}: calls under a call's bound stop the response past 400 000 values in all`, async () => {
    await withModelServer({ turns: [zerosCalls([150_000, 150_000, 150_000])] }, async (s) => {
      const c = await refused(
        s,
        protocol,
        /has more than 400000 JSON values in tool-call arguments over its calls; penguin stopped reading it/,
      );
      const done = calls(c).filter((m) => m.stop_reason === "completed");
      assert.ok(done.length <= 2, `${done.length} calls completed`);
      assert.ok(calls(c).some((m) => m.stop_reason === "failed" && m.arguments === ""));
    });
  });

  Deno.test(`${protocol}: calls within both bounds complete`, async () => {
    await withModelServer({ turns: [zerosCalls([150_000, 150_000])] }, async (s) => {
      const c = await collect(request(s, protocol));
      assert.equal(c.outcome.status, "completed", c.outcome.error_message);
      const got = calls(c).map((m) => (JSON.parse(m.arguments) as { cmd: number[] }).cmd.length);
      assert.deepEqual(got, [150_000, 150_000]);
    });
  });
}
