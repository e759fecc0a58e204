import assert from "node:assert/strict";
import { contextSummaryText, extractSummary } from "../../lib/session/mod.ts";

/** What extractSummary makes of some replies: a spec-like name, then [reply, summary] pairs. */
const EXTRACTS: [string, [string, string][]][] = [
  ["takes the trimmed content of the first square pair", [
    ["Here:\n[summary]\n  the state  \n[/summary]\nbye", "the state"],
  ]],
  ["skips empty pairs and takes the first non-empty one", [
    ["[summary] [/summary] [summary]second[/summary]", "second"],
  ]],
  ["strips stray summary tags inside a pair", [["[summary][summary]inner[/summary]", "inner"]]],
  ["accepts the legacy angle form when no square pair has content", [
    ["<summary>legacy body</summary>", "legacy body"],
    ["[summary][/summary]<summary>legacy</summary>", "legacy"],
  ]],
  ["prefers a square pair over an earlier angle pair", [
    ["<summary>angle</summary>[summary]square[/summary]", "square"],
  ]],
  ["uses tagless text verbatim (trimmed)", [
    ["  just a plain summary\nline two  ", "just a plain summary\nline two"],
  ]],
  ["strips an unclosed tag and keeps the rest", [
    ["[summary]started but never closed", "started but never closed"],
  ]],
  ["of nothing but tags is empty", [["[summary]  [/summary]", ""], ["", ""]]],
];

for (const [name, pairs] of EXTRACTS) {
  Deno.test(`extractSummary ${name}`, () => {
    for (const [reply, summary] of pairs) assert.equal(extractSummary(reply), summary);
  });
}

Deno.test("contextSummaryText wraps the summary in a square block", () => {
  assert.equal(contextSummaryText("s"), "[context_summary]\ns\n[/context_summary]");
});
