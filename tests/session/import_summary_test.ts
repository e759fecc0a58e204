import assert from "node:assert/strict";
import { lossSummary, modelSaw } from "../../lib/session/import_summary.ts";
import { importOrigin } from "../../lib/session/import_origin.ts";

const entry = (kind: string, reason: string, count = 1) => ({
  kind,
  count,
  example: "f:1",
  reason,
});

Deno.test("the import summary names only what the model saw and was not imported", () => {
  const ui = entry("event_msg task_started", "a UI event; the model context it shows is imported");
  const dup = entry("item_completed UserMessage", "duplicate of the user response_item message");
  const kept = entry(
    "turn_context",
    "per-turn settings (cwd, model); the model is kept in session_meta",
  );
  const lost = entry("image part", "only text parts are imported", 2);
  assert.deepEqual([ui, dup, kept, lost].map(modelSaw), [false, false, false, true]);
  assert.equal(lossSummary([ui, dup, kept]), "everything the model saw was imported");
  assert.equal(
    lossSummary([ui, lost]),
    "not imported: image part ×2 (--verbose for why)",
  );
});

Deno.test("an import's origin reads both shapes of imported_from", () => {
  assert.equal(
    importOrigin({ harness: "codex", id: "abc", version: "0.1", file: "/h/r.jsonl", cwd: "/w" }),
    "Codex 0.1 session abc (/h/r.jsonl)",
  );
  assert.equal(importOrigin({ harness: "pi", id: "x" }), "pi session x");
  assert.equal(
    importOrigin({ path: "/b/s_001.jsonl", session_id: "session-1" }),
    "penguin trace /b/s_001.jsonl (session session-1)",
  );
  assert.equal(importOrigin(undefined), null);
  assert.equal(importOrigin({}), "an unrecorded source");
});
