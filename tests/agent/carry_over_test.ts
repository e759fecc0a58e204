import assert from "node:assert/strict";
import {
  buildCarryOver,
  type TurnProducts,
  unwrapSyntheticBlock,
  withRetriedTurns,
} from "../../lib/agent/mod.ts";
import { assistantText, toolCall, toolCallOutput, userText } from "../../lib/protocol/builders.ts";

const products = (over: Partial<TurnProducts>): TurnProducts => ({
  toolOutputs: [],
  toolCalls: [],
  segments: [],
  outcome: { status: "completed" },
  ...over,
});

Deno.test("case A carries the turn's outputs and a placeholder for each unanswered committed call", () => {
  const a = toolCall("read_file", "{}", "a");
  const b = toolCall("exec_command", '{"cmd":"x"}', "b");
  const outA = toolCallOutput("a", "content");
  const carry = buildCarryOver(
    [userText("go")],
    products({ toolCalls: [a, b], toolOutputs: [outA] }),
  );
  assert.deepEqual(carry, [
    outA,
    toolCallOutput("b", "[interrupted: tool aborted by user]", "aborted"),
  ]);
});

Deno.test("case B keeps the input's tool outputs and flattens the rest into one [turn_aborted] block", () => {
  const prev = toolCallOutput("p", "previous turn output");
  const carry = buildCarryOver(
    [
      prev,
      userText("[turn_aborted]\n  [user_input]first[/user_input]\n[/turn_aborted]"),
      userText("second"),
    ],
    products({
      outcome: { status: "aborted" },
      segments: [
        { type: "thinking", role: "assistant", thinking: "hmm", stop_reason: "aborted" },
        assistantText("par", "aborted"),
      ],
      toolCalls: [toolCall("read_file", '{"file_path":"a"}', "c1")],
      toolOutputs: [toolCallOutput("c1", "A", "completed")],
    }),
  );
  assert.equal(carry.length, 2);
  assert.deepEqual(carry[0], prev);
  assert.equal(
    (carry[1] as { text: string }).text,
    [
      "[turn_aborted]",
      "  [user_input]first[/user_input]",
      "  [user_input]second[/user_input]",
      "  [thinking]hmm[/thinking]",
      "  [text]par[/text]",
      '  [tool_call name="read_file" id="c1"]{"file_path":"a"}[/tool_call]',
      '  [tool_call_output id="c1" status="completed"]A[/tool_call_output]',
      "[/turn_aborted]",
    ].join("\n"),
  );
});

Deno.test("a retry appends one [turn_retried] block only when a failed attempt produced something", () => {
  const input = [userText("go")];
  assert.deepEqual(withRetriedTurns(input, [products({ outcome: { status: "timeout" } })]), input);
  const out = withRetriedTurns(input, [
    products({ outcome: { status: "timeout" }, segments: [assistantText("x", "timeout")] }),
    products({ outcome: { status: "malformed" }, segments: [assistantText("y", "malformed")] }),
  ]);
  assert.equal(out.length, 2);
  assert.equal(
    (out[1] as { text: string }).text,
    "[turn_retried]\n  [text]x[/text]\n  [text]y[/text]\n[/turn_retried]",
  );
  assert.equal(
    unwrapSyntheticBlock((out[1] as { text: string }).text),
    "  [text]x[/text]\n  [text]y[/text]",
  );
  assert.equal(unwrapSyntheticBlock("<turn_aborted>\nold\n</turn_aborted>"), "old");
  assert.equal(unwrapSyntheticBlock("plain text"), null);
});
