// Record order of one turn (runTurn) against a scripted stream and tool:
// no interleaving that depends on how fast a tool is.
import assert from "node:assert/strict";
import { runTurn } from "../../lib/agent/turn.ts";
import { toolCall, toolCallOutput } from "../../lib/protocol/builders.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import type { ModelStreamItem } from "../../lib/models/outcome.ts";

Deno.test("a tool output that finishes between token_usage and request_end is recorded after both", async () => {
  let toolDone!: () => void;
  const gate = new Promise<void>((resolve) => (toolDone = resolve));
  let usageTaken!: () => void;
  const usageGate = new Promise<void>((resolve) => (usageTaken = resolve));
  const call = toolCall("fast", "{}", "c1");
  async function* stream(): AsyncGenerator<ModelStreamItem> {
    yield { kind: "message", message: call };
    yield { kind: "usage", usage: { cache_read: 0, cache_write: 0, output: 5, total: 10 } };
    usageTaken(); // the turn has taken the usage item; the tool finishes now
    await gate; // the tool's output is out before the stream ends
    yield { kind: "end", outcome: { status: "completed" } };
  }
  const records: OmniMessage[] = [];
  const turn = runTurn({
    stream: stream(),
    approve: () => ({ decision: "allow" }),
    execute: async function* () {
      await usageGate;
      yield toolCallOutput("c1", "done");
      toolDone();
    },
    record: (m) => records.push(m),
    warn: () => {},
    reconnects: 0,
    plannedRetry: () => undefined,
    addUsage: (r) => r,
  });
  for (let step = await turn.next(); !step.done; step = await turn.next()) { /* drain */ }
  const kinds = records.map((m) => m.payload.type);
  assert.deepEqual(kinds, [
    "request_begin",
    "tool_call",
    "approval_decision",
    "tool_call_output",
    "token_usage",
    "request_end",
  ]);
});
