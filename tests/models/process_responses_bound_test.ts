// The responses one penguin process reads at once keep at most 32 MiB of text, reasoning and
// arguments together: each response's own bounds (8 MiB of text…) hold per session, and a
// session's background subagents read theirs at once (attack round 23 bounded B10: twelve
// answering 7.9 MB each took penguin to 873 MB). The response that passes it stops, as past a
// bound of its own; one read (closed) no longer counts.
import assert from "node:assert/strict";
import { createTranslator } from "../../lib/models/translate.ts";
import { MAX_PROCESS_RESPONSES, MAX_RESPONSE_TEXT } from "../../lib/models/limits.ts";

Deno.test("responses read at once keep at most MAX_PROCESS_RESPONSES together", () => {
  const each = MAX_RESPONSE_TEXT - 1024 * 1024; // 7 MiB: under one response's bound
  const text = "x".repeat(each);
  const count = Math.floor(MAX_PROCESS_RESPONSES / each); // 4 fit together
  const open = Array.from({ length: count }, () => createTranslator());
  for (const t of open) {
    t.push({ type: "text", text });
    assert.equal(t.state.error, undefined);
  }
  const next = createTranslator();
  next.push({ type: "text", text });
  assert.equal(next.state.error?.code, "penguin_too_large");
  assert.match(next.state.error.message, /responses this penguin is reading hold more than 32 MiB/);
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
