// The responses one penguin process reads at once keep at most 16 MiB of text, reasoning,
// arguments and opaque payloads together: each response's own bounds (8 MiB of text…) hold per session, and a
// session's background subagents read theirs at once (attack round 23 bounded B10: twelve
// answering 7.9 MB each took penguin to 873 MB). The response that passes it stops, as past a
// bound of its own; one read (closed) no longer counts.
import assert from "node:assert/strict";
import { createTranslator } from "../../lib/models/translate.ts";
import {
  MAX_PROCESS_RESPONSES,
  MAX_RESPONSE_FIDELITY,
  MAX_RESPONSE_TEXT,
} from "../../lib/models/limits.ts";

Deno.test("responses read at once keep at most MAX_PROCESS_RESPONSES together", () => {
  const each = MAX_RESPONSE_TEXT - 1024 * 1024; // 7 MiB: under one response's bound
  const text = "x".repeat(each);
  const count = Math.floor(MAX_PROCESS_RESPONSES / each); // 2 fit together
  const open = Array.from({ length: count }, () => createTranslator());
  for (const t of open) {
    t.push({ type: "text", text });
    assert.equal(t.state.error, undefined);
  }
  const next = createTranslator();
  next.push({ type: "text", text });
  assert.equal(next.state.error?.code, "penguin_too_large");
  assert.match(next.state.error.message, /responses this penguin is reading hold more than 16 MiB/);
  next.close("failed");
  // One of them read to its end: its text is the conversation's now, and another response fits.
  open.shift()!.close("completed");
  const after = createTranslator();
  after.push({ type: "thinking", thinking: text });
  assert.equal(after.state.error, undefined);
  for (const t of [...open, after]) t.close("completed");
  const alone = createTranslator();
  alone.push({ type: "text", text });
  assert.equal(alone.state.error, undefined);
  alone.close("completed");
});

Deno.test("opaque payloads count with the text toward MAX_PROCESS_RESPONSES (round 24 bounded R10)", () => {
  // Eight subagents each answering a 15 MB signature took penguin to 546 MB: the payloads were
  // outside the count. Each response here carries a payload under its own bound.
  const signature = "s".repeat(MAX_RESPONSE_FIDELITY - 1024);
  const fit = Math.floor(MAX_PROCESS_RESPONSES / signature.length); // 4 fit together
  const open = Array.from({ length: fit }, () => createTranslator());
  for (const t of open) {
    t.push({ type: "thinking", thinking: "t", fidelity: { signature } });
    assert.equal(t.state.error, undefined);
  }
  const next = createTranslator();
  next.push({ type: "thinking", thinking: "t", fidelity: { signature } });
  assert.equal(next.state.error?.code, "penguin_too_large");
  assert.match(next.state.error.message, /arguments and opaque payloads together/);
  for (const t of [...open, next]) t.close("completed");
});

/** The translator's error now (read through a call: a push changes it). */
const errorOf = (t: ReturnType<typeof createTranslator>) => t.state.error;

Deno.test("one response's opaque payloads stop it past MAX_RESPONSE_FIDELITY (4 MiB)", () => {
  // Round 24 bounded R10: a 15 MB signature was kept (under the earlier 16 MiB), eight of them at
  // once took penguin to 285-317 MB.
  assert.equal(MAX_RESPONSE_FIDELITY, 4 * 1024 * 1024);
  const under = createTranslator();
  under.push({
    type: "thinking",
    thinking: "t",
    fidelity: { signature: "s".repeat(MAX_RESPONSE_FIDELITY - 64) },
  });
  assert.equal(under.state.error, undefined, "a payload under the bound is kept");
  under.close("completed");
  const over = createTranslator();
  over.push({ type: "thinking", thinking: "t", fidelity: { signature: "s".repeat(15_000_000) } });
  assert.equal(over.state.error?.code, "penguin_too_large");
  assert.match(over.state.error.message, /more than 4 MiB of signatures and other opaque payloads/);
  over.close("failed");
  // Two payloads of one response count together.
  const two = createTranslator();
  const half = "h".repeat(MAX_RESPONSE_FIDELITY / 2);
  two.push({ type: "thinking", thinking: "a", fidelity: { signature: half } });
  assert.equal(two.state.error, undefined);
  two.push({ type: "thinking", thinking: "b", fidelity: { signature: half } });
  assert.match(errorOf(two)?.message ?? "", /more than 4 MiB of signatures/);
  two.close("failed");
});
