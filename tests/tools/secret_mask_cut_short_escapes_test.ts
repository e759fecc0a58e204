// Output made of escapes that never complete (`\u00` × 65,536, also `\u0`, `\u000`, `\x0`, `\7`,
// `\\u00`) is masked with work linear in its length and a small held tail (red team final13
// F13-3: 32 KB of `\u00` took penguin to 521 MB, 60 MB to 4.5 GB). Each piece of output left the
// last escape cut short, the text before it was decoded again and found its own last escape cut
// short in turn, back through the whole run: the masker held all of it and decoded it again for
// every escape of it, on every new piece. The work is counted (characters decoded and scanned),
// not timed; a value spelled in escapes inside and after the run is still masked.
import assert from "node:assert/strict";
import {
  createSecretMasker,
  ESCAPE_LEVELS,
  maskWork,
  type Secret,
} from "../../lib/tools/secret_mask.ts";
import { assertNoPieceOf } from "../support/secrets.ts";

const VALUE = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";
const MARK = "[redacted:vault:ATK_V]";
const SECRETS: Secret[] = [{ kind: "vault", name: "ATK_V", value: VALUE }];
const RUN = 256 * 1024;
/**
 * Characters decoded and scanned per character of output at most: a run of these escapes reads
 * in two readings at a level or two, with the held tail read again with each piece (measured:
 * 2 to 2.7). Before the fix the count grew with the square of the output, past this bound with
 * the first piece; and a reading that decoded nothing was read again at each of the
 * {@linkcode ESCAPE_LEVELS} levels (16 per character).
 */
const PER_CHAR = ESCAPE_LEVELS;

const SPELLINGS = ["\\u00", "\\u0", "\\u000", "\\x0", "\\7", "\\\\u00", "\\U000", "\\u{00"];

/** `value` with every character an escape, `\xHH` and `\u00HH` in turn (read alike as C and JavaScript). */
function spelled(value: string): string {
  return [...value].map((c, i) => {
    const hex = c.charCodeAt(0).toString(16).padStart(2, "0");
    return i % 2 === 0 ? `\\x${hex}` : `\\u00${hex}`;
  }).join("");
}

/**
 * Characters the masker may hold between pieces: a start of the value's spelling (it may go on)
 * and the longest escape cut short (`\u{10FFFF` with the `}` to come).
 */
const MOST_HELD = spelled(VALUE).length + 10;

/** `pattern` repeated to `length` characters. */
function runOf(pattern: string, length: number): string {
  return pattern.repeat(Math.ceil(length / pattern.length)).slice(0, length);
}

for (const pattern of SPELLINGS) {
  for (const size of [400, 4096]) {
    Deno.test(`secret mask: 256 KB of ${pattern} in pieces of ${size} is masked with linear work and a small held tail`, () => {
      const half = runOf(pattern, RUN / 2);
      const text = `${half}v=${spelled(VALUE)}\n${half}w=${spelled(VALUE)}\n`;
      const m = createSecretMasker(SECRETS);
      const before = { ...maskWork };
      let out = "";
      for (let i = 0; i < text.length; i += size) {
        out += m.push(text.slice(i, i + size));
        const given = Math.min(i + size, text.length);
        const decoded = maskWork.decoded - before.decoded;
        const scanned = maskWork.scanned - before.scanned;
        // Checked as the output comes, so work that grows faster than it fails early.
        assert.ok(decoded <= PER_CHAR * given, `decoded ${decoded} after ${given}`);
        assert.ok(scanned <= PER_CHAR * given, `scanned ${scanned} after ${given}`);
        assert.ok(m.held <= MOST_HELD, `held ${m.held} after ${given}`);
      }
      out += m.flush();
      assert.equal(out, `${half}v=${MARK}\n${half}w=${MARK}\n`);
      assertNoPieceOf(out, [VALUE], "the masked output");
    });
  }
}
