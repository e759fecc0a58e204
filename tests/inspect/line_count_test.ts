// lineCount (lib/inspect/format.ts) counts the lines of a text in place, as splitting it at its
// line breaks counts them (a last line break ends a line, it does not start one).
import assert from "node:assert/strict";
import { lineCount } from "../../lib/inspect/format.ts";

Deno.test("lineCount counts as a split at line breaks does, without the last empty line", () => {
  const bySplit = (t: string) => t === "" ? 0 : t.split("\n").length - (t.endsWith("\n") ? 1 : 0);
  for (const text of ["", "a", "a\n", "\n", "\n\n", "a\nb", "a\nb\n", "a\r\nb\r\n", "\n\na\n\n"]) {
    assert.equal(lineCount(text), bySplit(text), JSON.stringify(text));
  }
  assert.equal(lineCount("x\n".repeat(100_000)), 100_000);
});
