/**
 * Merging held deltas (lib/models/_hold.ts) keeps every character: a run
 * of deltas whose pieces were joined into one (at 512 and every 511 after,
 * before runs grew in flat blocks) still hands on the whole run, so the
 * deltas a consumer sees add up to the complete message at whatever point
 * the run is handed on or the response is stopped. And a long run of tiny
 * deltas is merged copying each character a few times, not joining the run
 * so far anew every 511 deltas (about 64 times the text for a held run of
 * 64 Ki one-character deltas).
 *
 * @module
 */
import assert from "node:assert/strict";
import { coalesce, createHold } from "../../lib/models/_hold.ts";
import { partialText, partialToolCall } from "../../lib/protocol/builders.ts";
import type { ModelPayload } from "../../lib/protocol/types.ts";

/** The text the text deltas of `ms` stream. */
function streamed(ms: ModelPayload[]): string {
  return ms.flatMap((m) => (m.type === "partial_text" && m.event_type === "delta" ? [m.text] : []))
    .join("");
}

Deno.test("a run of 512, 1023 or 1534 deltas merges into one delta holding all of them", () => {
  for (const n of [511, 512, 513, 1022, 1023, 1534]) {
    const ms = [
      partialText("start"),
      ...Array.from({ length: n }, (_, i) => partialText("delta", `${i % 10}`)),
    ];
    const merged = coalesce(ms);
    assert.equal(merged.length, 2, `${n} deltas`);
    assert.equal(streamed(merged), ms.slice(1).map((m) => (m as { text: string }).text).join(""));
  }
});

Deno.test("a tool call's 512 argument deltas merge into its whole arguments", () => {
  const deltas = Array.from({ length: 512 }, () => partialToolCall("delta", "c1", "", "7"));
  const [merged] = coalesce(deltas);
  assert.equal((merged as { arguments: string }).arguments, "7".repeat(512));
});

Deno.test("held deltas taken or disposed of right after the 512th hand on all 512", () => {
  for (const end of ["take", "dispose"] as const) {
    const pending: ModelPayload[] = [];
    const hold = createHold(pending);
    hold.add([partialText("start")]);
    for (let i = 0; i < 512; i++) hold.add([partialText("delta", "Q")]);
    const out = end === "take" ? hold.take() : (hold.dispose(), pending.splice(0));
    assert.equal(streamed(out), "Q".repeat(512), end);
    hold.dispose();
  }
});

Deno.test("a held run of 60 000 one-character deltas copies its text a few times, not 60", () => {
  const pending: ModelPayload[] = [];
  const hold = createHold(pending);
  const join = Array.prototype.join;
  let copied = 0;
  Array.prototype.join = function (this: unknown[], separator?: string): string {
    const joined = join.call(this, separator);
    copied += joined.length;
    return joined;
  };
  let out: ModelPayload[];
  try {
    hold.add([partialText("start")]);
    for (let i = 0; i < 60_000; i++) hold.add([partialText("delta", "Q")]);
    out = hold.take();
  } finally {
    Array.prototype.join = join;
    hold.dispose();
  }
  assert.equal(streamed(out), "Q".repeat(60_000));
  assert.ok(copied <= 3 * 60_000, `${copied} characters copied for 60000`);
});
