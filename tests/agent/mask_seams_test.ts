// A resumed history's neighbouring texts are masked across their seam, whatever lies between and
// whoever wrote them: the Anthropic and Gemini encoders drop an empty text or a thinking without
// a signature and merge the turns on either side, and a vault value split 7|7 over two such
// texts reached the model whole (attack round 32 v01, v12; round 31 s03 for one turn's texts).
import assert from "node:assert/strict";
import type { CompleteMessage } from "../../lib/protocol/types.ts";
import type { EngineState } from "../../lib/agent/engine.ts";
import { maskEngineState } from "../../lib/agent/_mask_history.ts";
import { maskSecrets } from "../../lib/tools/secret_mask.ts";

const V = "Wk4Rp8Zn2Qv6Tx";
const secrets = [{ kind: "vault" as const, name: "SPLIT_V", value: V }];

function state(history: CompleteMessage[]): EngineState {
  return {
    history,
    carryOver: [],
    sessionTokens: { input: 0, output: 0, cache_read: 0, cache_write: 0 },
    lastRequestTotal: 0,
    sessionTurns: 0,
  } as unknown as EngineState;
}

const text = (role: "user" | "assistant", t: string) =>
  ({ type: "text", role, text: t }) as CompleteMessage;

Deno.test("a secret across two texts with an empty user text between is masked in both", () => {
  const masked = maskEngineState(
    state([
      text("assistant", `note ${V.slice(0, 7)}`),
      text("user", ""),
      { type: "thinking", role: "assistant", thinking: "" } as CompleteMessage,
      text("assistant", `${V.slice(7)} end`),
    ]),
    secrets,
  );
  const texts = masked.history.map((m) => (m as { text?: string }).text ?? "");
  assert.equal(masked.history.length, 4, "each message keeps its place");
  assert.equal(texts[0], "note [redacted:vault:SPLIT_V]");
  assert.equal(texts[3], "[redacted:vault:SPLIT_V] end");
  // However an encoder joins them, nothing of the value is left.
  assert.equal(maskSecrets(texts.join(""), secrets), texts.join(""));
  assert.ok(!texts.join("").includes(V.slice(3, 11)));
});

Deno.test("texts that form no secret together are left as they are", () => {
  const history = [text("assistant", "Wk4Rp8Z"), text("user", "hello")];
  assert.equal(maskEngineState(state(history), secrets).history[0], history[0]);
});
