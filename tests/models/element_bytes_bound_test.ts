// The message bytes remembered between requests are bounded per process, not only per
// conversation: a session's subagents are conversations too, and eight each keeping 8 MiB held
// 64 MiB beside their histories (attack round 25). A request's body is its JSON either way.
import assert from "node:assert/strict";
import {
  elementBytes,
  PROCESS_KEPT_BYTES,
  rememberedBytes,
} from "../../lib/models/_element_bytes.ts";
import { historyChars } from "../../lib/models/_json_body.ts";
import type { CompleteMessage } from "../../lib/protocol/types.ts";

const MiB = 1024 * 1024;

Deno.test("conversations remember at most PROCESS_KEPT_BYTES of message bytes together", () => {
  const conversations = Array.from({ length: 4 }, () => ({}));
  const elements = (ch: string) =>
    Array.from({ length: 7 }, (_, i) => ({ role: "user", content: ch.repeat(MiB) + i }));
  const decoder = new TextDecoder();
  for (const [i, c] of conversations.entries()) {
    const els = elements(String.fromCharCode(97 + i));
    const known = elementBytes(c, "messages", "messages", els)!;
    // Whatever is remembered, the bytes are the array's JSON.
    const text = known.chunks.map((b) => decoder.decode(b)).join("");
    assert.equal(text, JSON.stringify(els).slice(1, -1));
    assert.ok(rememberedBytes() <= PROCESS_KEPT_BYTES, `${rememberedBytes()} bytes remembered`);
  }
  assert.ok(rememberedBytes() > 8 * MiB, "the first conversations still remember theirs");
  // A conversation sent again with the same elements reuses what it remembered.
  const again = elementBytes(conversations[0]!, "messages", "messages", elements("a"))!;
  assert.equal(again.count, 7);
  assert.ok(rememberedBytes() <= PROCESS_KEPT_BYTES);
});

Deno.test("historyChars counts opaque payloads as their JSON", () => {
  const signature = "s".repeat(1000);
  const m: CompleteMessage = {
    type: "thinking",
    role: "assistant",
    thinking: "t",
    stop_reason: "completed",
    fidelity: { signature },
  } as CompleteMessage;
  assert.equal(historyChars([m]), 1 + JSON.stringify({ signature }).length);
});
