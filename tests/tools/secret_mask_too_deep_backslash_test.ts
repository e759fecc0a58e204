// A line too deep to decode followed by a backslash no reading decodes (red team final17 secimp
// rows 68 and 78: a vault value as `%XX` inside eight levels of JSON `\u` escapes, then one `\`,
// or that line cut short by the output's size limit, came out as written). The URL-encoded level
// was read only from a view without a backslash, so the trailing `\` hid it and the last level
// no longer looked as if it decoded. Each shape of rows 68 to 75 is masked whole and in pieces of
// every size, final or not, and no reading of what came out gives the value or a piece of it.
import assert from "node:assert/strict";
import {
  createSecretMasker,
  ESCAPE_DEPTH_MARKER,
  maskSecrets,
  type Secret,
} from "../../lib/tools/secret_mask.ts";
import { assertNoReadingLeaks, json, pct } from "../support/deep_escapes.ts";

// Sixteen characters: long enough to be masked in pieces, short enough to stream in 1-character
// pieces quickly (a held match is read again with each piece).
const VALUE = "Qz7Kp2Xw9Lm4Rt6Y";
const MARK = "[redacted:vault:ATK_V]";
const SECRETS: Secret[] = [{ kind: "vault", name: "ATK_V", value: VALUE }];

const PCT8 = json(pct(VALUE), 8);
const JSON9 = json(VALUE, 9);

/** The report's rows: the text, and what its output must hold (the depth marker or the value's). */
const ROWS: [string, string, string][] = [
  ["68: %XX in 8 JSON levels, then `\\`", PCT8 + "\\", ESCAPE_DEPTH_MARKER],
  ["69: 9 JSON levels, then `\\`", JSON9 + "\\", ESCAPE_DEPTH_MARKER],
  ["70: %XX in 7 JSON levels, then `\\`", json(pct(VALUE), 7) + "\\", MARK],
  ["71: 9 JSON levels, `\\`, a newline, plain text", JSON9 + "\\\nplain", ESCAPE_DEPTH_MARKER],
  ["72: 9 JSON levels, then `\\u00`", JSON9 + "\\u00", ESCAPE_DEPTH_MARKER],
  ["73: plain text, 9 JSON levels, ` \\`", "abc " + JSON9 + " \\", ESCAPE_DEPTH_MARKER],
  ["74: 8 JSON levels, then `\\`", json(VALUE, 8) + "\\", MARK],
  ["75: 4 JSON levels, then `\\`", json(VALUE, 4) + "\\", MARK],
  // Three URL levels under six JSON ones: the backslash stops no level on the way down either.
  [
    "%XX thrice in 6 JSON levels, then `\\`",
    json(pct(pct(pct(VALUE))), 6) + "\\",
    ESCAPE_DEPTH_MARKER,
  ],
  ["68 with a newline after the `\\`", PCT8 + "\\\n", ESCAPE_DEPTH_MARKER],
];

const SIZES = [1, 3, 7, 64];

function streamed(text: string, size: number, final: boolean): string {
  const m = createSecretMasker(SECRETS);
  let out = "";
  for (let i = 0; i < text.length; i += size) out += m.push(text.slice(i, i + size));
  return final ? out + m.flush() : out;
}

for (const [row, text, want] of ROWS) {
  Deno.test(`secret mask: row ${row} is masked whole and in pieces`, () => {
    const whole = maskSecrets(text, SECRETS);
    assert.ok(whole.includes(want), `whole: ${whole.slice(0, 200)}`);
    assertNoReadingLeaks(whole, VALUE, "whole");
    for (const size of [...SIZES, text.length]) {
      const out = streamed(text, size, true);
      assert.ok(out.includes(want), `pieces of ${size}: ${out.slice(0, 200)}`);
      assertNoReadingLeaks(out, VALUE, `pieces of ${size}`);
      assertNoReadingLeaks(streamed(text, size, false), VALUE, `pieces of ${size}, not flushed`);
    }
  });
}

Deno.test("secret mask: a too-deep line cut short anywhere by a size limit is still masked", () => {
  // Row 78: the output's kept head is one whole copy and a piece of the next, cut anywhere.
  const line = PCT8.repeat(2);
  for (let cut = PCT8.length + 1; cut < line.length; cut += 211) {
    const text = line.slice(0, cut);
    const out = maskSecrets(text, SECRETS);
    assert.ok(out.startsWith(ESCAPE_DEPTH_MARKER), `cut at ${cut}: ${out.slice(0, 120)}`);
    assertNoReadingLeaks(out, VALUE, `cut at ${cut}`);
  }
});
