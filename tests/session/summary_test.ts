import assert from "node:assert/strict";
import { contextSummaryText, extractSummary } from "../../lib/session/mod.ts";

Deno.test("extractSummary takes the trimmed content of the first square pair", () => {
  assert.equal(extractSummary("Here:\n[summary]\n  the state  \n[/summary]\nbye"), "the state");
});

Deno.test("extractSummary skips empty pairs and takes the first non-empty one", () => {
  assert.equal(extractSummary("[summary] [/summary] [summary]second[/summary]"), "second");
});

Deno.test("extractSummary strips stray summary tags inside a pair", () => {
  assert.equal(extractSummary("[summary][summary]inner[/summary]"), "inner");
});

Deno.test("extractSummary accepts the legacy angle form when no square pair has content", () => {
  assert.equal(extractSummary("<summary>legacy body</summary>"), "legacy body");
  assert.equal(extractSummary("[summary][/summary]<summary>legacy</summary>"), "legacy");
});

Deno.test("extractSummary prefers a square pair over an earlier angle pair", () => {
  assert.equal(extractSummary("<summary>angle</summary>[summary]square[/summary]"), "square");
});

Deno.test("extractSummary uses tagless text verbatim (trimmed)", () => {
  assert.equal(
    extractSummary("  just a plain summary\nline two  "),
    "just a plain summary\nline two",
  );
});

Deno.test("extractSummary strips an unclosed tag and keeps the rest", () => {
  assert.equal(extractSummary("[summary]started but never closed"), "started but never closed");
});

Deno.test("extractSummary of nothing but tags is empty", () => {
  assert.equal(extractSummary("[summary]  [/summary]"), "");
  assert.equal(extractSummary(""), "");
});

Deno.test("contextSummaryText wraps the summary in a square block", () => {
  assert.equal(contextSummaryText("s"), "[context_summary]\ns\n[/context_summary]");
});
