// A command prints a vault value as `%XX` inside eight levels of JSON `\u` escapes (nine levels:
// past the last the masker decodes) and then one backslash, with no final newline: run's output,
// the next model request and the trace hold the depth marker and no reading of them gives the
// value (red team final17 secimp row 76: the trailing `\` turned the too-deep check off, and eight
// JSON decodes and one URL decode of the trace gave the value).
import assert from "node:assert/strict";
import { ESCAPE_DEPTH_MARKER } from "../../lib/tools/secret_mask.ts";
import { assertNoReadingLeaks, json, pct } from "../support/deep_escapes.ts";
import { runPrintingVaultValue } from "../support/secrets.ts";

const VALUE = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";

Deno.test("penguin run: a too-deep line that ends in one backslash is masked in the output, trace and next request", async () => {
  const text = json(pct(VALUE), 8) + "\\";
  assert.ok(!text.includes("'"));
  const { out, next, stored } = await runPrintingVaultValue(`printf '%s' '${text}'`, VALUE);
  assert.ok(next.includes(ESCAPE_DEPTH_MARKER), next.slice(0, 400));
  for (
    const [where, got] of [["run's output", out], ["the next request", next], ["the trace", stored]]
  ) {
    assertNoReadingLeaks(got!, VALUE, where!);
  }
});
