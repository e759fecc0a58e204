// A line too deep to decode, streamed in small pieces, is masked with work linear in its length
// (red team final17 secimp row 82: 64-character pieces of one such line of 12.7, 25.5 and 51 KB
// took 1.6, 6.5 and 25.7 s, as each piece scanned the whole held line again through every
// level). The work is counted (characters decoded and scanned), not timed.
import assert from "node:assert/strict";
import {
  createSecretMasker,
  ESCAPE_DEPTH_MARKER,
  maskSecrets,
  maskWork,
  type Secret,
} from "../../lib/tools/secret_mask.ts";
import { assertNoReadingLeaks, json, pct } from "../support/deep_escapes.ts";

const VALUE = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";
const SECRETS: Secret[] = [{ kind: "vault", name: "ATK_V", value: VALUE }];
/** The value as `%XX` inside eight JSON `\u` levels: nine levels, one past the last. */
const LINE = json(pct(VALUE), 8);
/**
 * Characters decoded and scanned per character of the text at most (measured: 8 to 25, pieces of
 * 64 to pieces of 1): the line is read through its levels about once when it ends.
 */
const PER_CHAR = 40;
/**
 * Work allowed on top, for the start of the line: until its first escaped character (about 400
 * characters) is whole, the line is not judged yet and each piece reads the held start again
 * (measured: 0.45 M in pieces of 1). Before the fix every piece read the whole held line again,
 * past these bounds within the first kilobytes.
 */
const START = 1_000_000;

for (const size of [1, 7, 64]) {
  Deno.test(`secret mask: a 25 KB too-deep line in pieces of ${size} is masked with linear work`, () => {
    const text = `${LINE}${LINE}\nplain after\n`;
    const m = createSecretMasker(SECRETS);
    const before = { ...maskWork };
    let out = "";
    for (let i = 0; i < text.length; i += size) {
      out += m.push(text.slice(i, i + size));
      const given = Math.min(i + size, text.length);
      const work = maskWork.decoded - before.decoded + maskWork.scanned - before.scanned;
      // Checked as the pieces come, so work that grows faster than the line fails early.
      assert.ok(work <= PER_CHAR * given + START, `work ${work} after ${given} characters`);
    }
    out += m.flush();
    assert.equal(out, `${ESCAPE_DEPTH_MARKER}\nplain after\n`);
    assertNoReadingLeaks(out, VALUE, `pieces of ${size}`);
  });
}

Deno.test("secret mask: a 2 MB too-deep line of whole text (a model's answer, a trace) is masked with linear work", () => {
  // Attack round 27 d11: the whole-text path (maskSecrets, in 64 Ki slices) scanned the held line
  // again with each slice: 8 MiB of model text took ten minutes and 600 MB.
  const unit = "\\\\u005c\\\\x5c%5c&#92;\\134";
  const line = unit.repeat(Math.ceil(2_000_000 / unit.length));
  const text = `${line}\nplain after\n`;
  const before = { ...maskWork };
  const out = maskSecrets(text, SECRETS);
  const work = maskWork.decoded - before.decoded + maskWork.scanned - before.scanned;
  assert.ok(work <= PER_CHAR * text.length + START, `work ${work} for ${text.length} characters`);
  assert.ok(out.endsWith("\nplain after\n"), out.slice(-40));
  assert.ok(!out.includes(line.slice(0, 64)), "the line failed closed");
});
