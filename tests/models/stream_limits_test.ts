// What one model response may hold (lib/models/limits.ts), over all four wire protocols from one
// table: a tool call's arguments past 2 MiB, calls past 4 MiB in all, text or reasoning past
// 8 MiB (each stops the request), an opaque signature kept byte for byte under its limit; then the Chat Completions
// parser's own bounds and the SSE framer's per-event limit.
import assert from "node:assert/strict";
import { CLIENT_TYPES } from "../../lib/state/project_config_types.ts";
import type { WireDelta, WireProtocol } from "../../lib/models/wire.ts";
import type { CompleteMessage, ToolCallMessage } from "../../lib/protocol/types.ts";
import { createChatParser } from "../../lib/models/protocols/_openai_chat_parse.ts";
import { coalesce } from "../../lib/models/_pump.ts";
import { partialText, partialToolCall } from "../../lib/protocol/builders.ts";
import {
  MAX_RESPONSE_FIDELITY,
  MAX_RESPONSE_TEXT,
  MAX_TOOL_ARGUMENTS,
  MAX_TOOL_CALL_NAME,
  TOO_LARGE_CODE,
} from "../../lib/models/limits.ts";
import { item, type ScriptedTurn, turn, withModelServer } from "../support/model_server.ts";
import { assertPartialDiscipline, collect, type Collected, writeFileRequest } from "./_support.ts";

const MiB = 1024 * 1024;
/** The four protocols, from the one list of protocol ids. */
const PROTOCOLS: readonly WireProtocol[] = CLIENT_TYPES;

const calls = (c: Collected) =>
  c.completes.filter((m): m is ToolCallMessage => m.type === "tool_call");

const content = (ch: string, n: number) => ({ content: ch.repeat(n) });

interface Case {
  name: string;
  turn: ScriptedTurn;
  /** A call dropped past a limit has had deltas but ends without arguments. */
  dropsStreamedArguments?: boolean;
  check(c: Collected): void;
}

const SIGNATURE = "sig/" + "Zm9v+/=".repeat(150_000) + "\u00e9";

const CASES: Case[] = [
  {
    // Attack round 25 bounded C18: names and ids counted against no bound (a hundred calls named
    // with a megabyte each: 394 MB; megabyte ids: 4.3 GB).
    name: "a call named past 1024 characters stops the request; the calls before are kept",
    turn: turn.of(
      item.toolCall("write_file", content("a", 3), { id: "c_ok" }),
      item.toolCall("w".repeat(MAX_TOOL_CALL_NAME + 1), content("b", 3), { id: "c_long" }),
    ),
    check(c) {
      assert.equal(c.outcome.status, "failed");
      assert.equal(c.outcome.permanent, true);
      assert.match(
        c.outcome.error_message!,
        /a tool call whose name or id is longer than 1024 characters \(1025\)/,
      );
      assert.deepEqual(calls(c).map((m) => m.name), ["write_file"]);
    },
  },
  {
    name: "a call whose id passes 1024 characters stops the request",
    turn: turn.of(
      item.toolCall("write_file", content("a", 3), { id: "c".repeat(MAX_TOOL_CALL_NAME + 1) }),
    ),
    check(c) {
      assert.equal(c.outcome.status, "failed");
      assert.match(c.outcome.error_message!, /name or id is longer than 1024 characters/);
      assert.equal(calls(c).length, 0);
    },
  },
  {
    name: "a call's arguments past 2 MiB stop the request; the call fails, nothing after is read",
    turn: {
      ...turn.of(
        item.toolCall("write_file", content("Q", MAX_TOOL_ARGUMENTS), { id: "c_big" }),
        item.toolCall("write_file", content("s", 10), { id: "c_small" }),
      ),
      chunk: MiB,
    },
    dropsStreamedArguments: true,
    check(c) {
      assert.equal(c.outcome.status, "failed");
      assert.equal(c.outcome.permanent, true);
      assert.match(
        c.outcome.error_message!,
        /more than 2 MiB of arguments in a tool call \(write_file\); penguin stopped reading it at 2\.0 MiB/,
      );
      const got = calls(c).map((m) => [m.stop_reason, m.arguments.length]);
      assert.deepEqual(got, [["failed", 0]], "the next call was not read");
    },
  },
  {
    name: "calls past 4 MiB of arguments in all stop the request; the calls before are kept",
    turn: {
      ...turn.of(
        ...["A", "B", "C", "D"].map((ch, i) =>
          item.toolCall("write_file", content(ch, 1.5 * MiB), { id: `c${i}` })
        ),
      ),
      chunk: MiB,
    },
    dropsStreamedArguments: true,
    check(c) {
      assert.equal(c.outcome.status, "failed");
      assert.match(
        c.outcome.error_message!,
        /more than 4 MiB of tool-call arguments over its calls/,
      );
      const got = calls(c).map((m) => [m.stop_reason, m.arguments.length > 0]);
      assert.deepEqual(got, [["completed", true], ["completed", true], ["failed", false]]);
    },
  },
  {
    name: "text past 8 MiB fails the request (not retried), the text kept closes failed",
    turn: { ...turn.text("t".repeat(MAX_RESPONSE_TEXT + 1)), chunk: MiB },
    check(c) {
      assert.equal(c.outcome.status, "failed");
      assert.equal(c.outcome.permanent, true);
      assert.match(c.outcome.error_message!, /more than 8 MiB of text; penguin stopped reading/);
      const text = c.completes.find((m) => m.type === "text") as {
        text: string;
        stop_reason: string;
      };
      assert.equal(text.stop_reason, "failed");
      assert.ok(text.text.length <= MAX_RESPONSE_TEXT);
    },
  },
  {
    name: "reasoning past 8 MiB fails the request the same way",
    turn: {
      ...turn.of(item.thinking("r".repeat(MAX_RESPONSE_TEXT + 1)), item.text("ok")),
      chunk: MiB,
    },
    check(c) {
      assert.equal(c.outcome.status, "failed");
      assert.equal(c.outcome.permanent, true);
      assert.match(c.outcome.error_message!, /more than 8 MiB of reasoning/);
      assert.ok(!c.completes.some((m) => m.type === "text"), "nothing after the limit was read");
    },
  },
  {
    name: "a 1 MiB signature under the limits is kept byte for byte",
    turn: {
      ...turn.of(
        item.thinking("hm", {
          signature: SIGNATURE,
          encrypted: SIGNATURE,
          field: "reasoning_details",
        }),
        item.text("ok"),
      ),
      chunk: 64 * 1024,
    },
    check(c) {
      assert.equal(c.outcome.status, "completed");
      const found = c.completes.some((m: CompleteMessage) =>
        JSON.stringify(m.fidelity ?? {}).includes(JSON.stringify(SIGNATURE))
      );
      assert.ok(found, "the signature is in a message's fidelity, unchanged");
    },
  },
];

for (const protocol of PROTOCOLS) {
  for (const k of CASES) {
    Deno.test(`${protocol}: ${k.name}`, async () => {
      await withModelServer({ turns: [k.turn] }, async (s) => {
        const c = await collect(writeFileRequest(s, protocol));
        if (!k.dropsStreamedArguments) assertPartialDiscipline(c.messages);
        k.check(c);
        assert.equal(s.requests.length, 1);
      });
    });
  }
}

const chunk = (delta: unknown) => ({
  data: JSON.stringify({ choices: [{ index: 0, delta, finish_reason: null }] }),
});

Deno.test("openai-chat parser: arguments before the name stop being kept past 2 MiB", () => {
  const p = createChatParser();
  const out: WireDelta[] = [];
  const piece = "x".repeat(MiB);
  for (let i = 0; i < 3; i++) {
    out.push(...p.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] })));
  }
  out.push(...p.push(chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "w" } }] })));
  out.push(...p.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] })));
  out.push(...p.end());
  assert.deepEqual(out, [
    { type: "tool_call_start", key: "0:0", id: "c1", name: "w", oversize: true },
    { type: "tool_call_end", key: "0:0", oversize: true },
  ]);
});

Deno.test("openai-chat parser: reasoning_details past 4 MiB stop the response", () => {
  const p = createChatParser();
  const data = "d".repeat(MiB);
  let error: WireDelta | undefined;
  for (let i = 0; i * MiB <= MAX_RESPONSE_FIDELITY && !error; i++) {
    const out = p.push(
      chunk({ reasoning_details: [{ type: "reasoning.encrypted", index: i, data }] }),
    );
    error = out.find((d) => d.type === "error");
  }
  assert.ok(error && error.type === "error");
  assert.equal(error.code, TOO_LARGE_CODE);
  assert.match(error.message, /more than 4 MiB of reasoning details/);
});

Deno.test("one server-sent event past 32 MiB fails the request without retry", async () => {
  const event = `data: ${
    JSON.stringify({ choices: [{ index: 0, delta: { content: "z".repeat(33 * MiB) } }] })
  }\n\n`;
  await withModelServer({ turns: [{ items: [], raw_body: event }] }, async (s) => {
    const c = await collect(writeFileRequest(s, "openai-chat"));
    assert.equal(c.outcome.status, "failed");
    assert.equal(c.outcome.permanent, true);
    assert.match(c.outcome.error_message!, /an event of more than 32 MiB/);
    assert.equal(c.completes.length, 0);
  });
});

Deno.test("the partial deltas of one read are merged per segment and per call", () => {
  const merged = coalesce([
    partialText("start"),
    partialText("delta", "ab"),
    partialText("delta", "cd"),
    partialText("stop"),
    partialToolCall("start", "c1", "w"),
    partialToolCall("delta", "c1", "", "{"),
    partialToolCall("delta", "c1", "", "}"),
    partialToolCall("delta", "c2", "", "["),
    partialToolCall("delta", "c2", "", "]"),
  ]);
  assert.deepEqual(merged, [
    partialText("start"),
    partialText("delta", "abcd"),
    partialText("stop"),
    partialToolCall("start", "c1", "w"),
    partialToolCall("delta", "c1", "", "{}"),
    partialToolCall("delta", "c2", "", "[]"),
  ]);
});
