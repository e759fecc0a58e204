// The masking of the model's own output (lib/agent/_mask_model.ts) over a call streamed as
// thousands of small argument deltas: the call's name and id are masked once per call, not once
// per delta (each masking builds the secrets' matcher anew). Measured as work: how often the
// secrets are read, not time. The arguments are still masked, and a secret in an id still is.
import assert from "node:assert/strict";
import { countedSecret } from "../support/counted_secret.ts";
import { createModelMasking } from "../../lib/agent/_mask_model.ts";
import type { ModelStreamItem } from "../../lib/models/outcome.ts";
import { partialToolCall } from "../../lib/protocol/builders.ts";
import type { ModelPayload, ToolCallMessage } from "../../lib/protocol/types.ts";

const V = "Qm7Zr2Kx9Wc4Lp8Tn3Hv6Bd1Fs5Gj0Ya";
const DELTAS = 5000;

async function* stream(id: string, pieces: string[]): AsyncGenerator<ModelStreamItem> {
  const msg = (message: ModelPayload): ModelStreamItem => ({ kind: "message", message });
  yield msg(partialToolCall("start", id, "write_file"));
  for (const p of pieces) yield msg(partialToolCall("delta", id, "", p));
  yield msg(partialToolCall("stop", id));
  const call: ToolCallMessage = {
    type: "tool_call",
    role: "assistant",
    name: "write_file",
    arguments: JSON.stringify({ content: pieces.join("").slice(12, -2) }),
    tool_call_id: id,
    stop_reason: "completed",
  };
  yield msg(call);
  yield { kind: "end", outcome: { status: "completed" } };
}

/** The arguments `{"content":"…"}` around `body`, cut into 8-character pieces. */
function pieces(body: string): string[] {
  const text = JSON.stringify({ content: body });
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 8) out.push(text.slice(i, i + 8));
  return out;
}

async function run(id: string, body: string) {
  const { secret, reads } = countedSecret("ATK_V", V);
  const masking = createModelMasking([secret]);
  const items: ModelStreamItem[] = [];
  const before = reads();
  for await (const it of masking.mask(stream(id, pieces(body)))) items.push(it);
  const messages = items.flatMap((i) => (i.kind === "message" ? [i.message] : []));
  return { reads: reads() - before, messages };
}

Deno.test("model masking: a call's name and id are masked once per call, not once per delta", async () => {
  const body = "Q".repeat(8 * DELTAS);
  const { reads, messages } = await run("call_1", body);
  // Before: the name and the id were masked (the matcher built) for each of the 5000 deltas.
  assert.ok(reads < 100, `${reads} reads of the secret for ${DELTAS} deltas`);
  const streamed = messages
    .filter((m): m is ModelPayload & { arguments: string } => m.type === "partial_tool_call")
    .map((m) => m.arguments).join("");
  assert.equal(JSON.parse(streamed).content, body);
  assert.ok(messages.every((m) => !("tool_call_id" in m) || m.tool_call_id === "call_1"));
});

Deno.test("model masking: a secret in a call's id and arguments is still masked on every partial", async () => {
  const { messages } = await run(`call_${V}`, `x ${V} y`);
  const ids = new Set(messages.map((m) => (m as { tool_call_id?: string }).tool_call_id));
  ids.delete(undefined);
  assert.equal(ids.size, 1, "the partials and the call share one masked id");
  assert.ok(![...ids][0]!.includes(V));
  const text = JSON.stringify(messages);
  assert.ok(!text.includes(V), "the secret appears nowhere");
  assert.ok(text.includes("[redacted:vault:ATK_V]"));
});
