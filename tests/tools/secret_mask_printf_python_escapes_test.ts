// Four spellings real readers decode that masking left as written (red team final14 rows 13-16,
// 26, 31): printf `%b` / `echo -e` read `\0NNN` (`\0121` is `Q`), Python reads `\N{LATIN CAPITAL
// LETTER Q}` (any case), JavaScript reads `\u{0000000051}` (any number of leading zeros), and a
// C compiler reads every hex digit of `\x0051`. A vault value in each is masked whole, streamed
// in pieces too, with the mask covering whole escapes; and the readings others give to the same
// text (`\0121` is LF then `1` to C and JavaScript, `\x0051` is NUL then `51` to printf) still
// decode.
import assert from "node:assert/strict";
import {
  createSecretMasker,
  maskSecrets,
  maskWork,
  type Secret,
} from "../../lib/tools/secret_mask.ts";
import { assertNoPieceOf } from "../support/secrets.ts";

const VALUE = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";
const MARK = "[redacted:vault:ATK_V]";
const SECRETS: Secret[] = [{ kind: "vault", name: "ATK_V", value: VALUE }];

const code = (c: string) => c.charCodeAt(0);
const DIGITS = ["ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"];

/** Python's Unicode name of an ASCII letter or digit. */
function unicodeName(c: string): string {
  if (/[0-9]/.test(c)) return `DIGIT ${DIGITS[Number(c)]}`;
  return `LATIN ${c === c.toUpperCase() ? "CAPITAL" : "SMALL"} LETTER ${c.toUpperCase()}`;
}

/** Every character of `s` spelled by `spell`. */
const each = (s: string, spell: (c: string, i: number) => string) => [...s].map(spell).join("");

const SPELLINGS: Record<string, (s: string) => string> = {
  "printf %b \\0NNN": (s) => each(s, (c) => "\\0" + code(c).toString(8).padStart(3, "0")),
  "Python \\N{NAME}": (s) => each(s, (c) => `\\N{${unicodeName(c)}}`),
  "Python \\N{name} in any case": (s) =>
    each(s, (c, i) => `\\N{${i % 2 ? unicodeName(c).toLowerCase() : unicodeName(c)}}`),
  "JavaScript \\u{…} with leading zeros": (s) =>
    each(s, (c, i) => `\\u{${"0".repeat(7 + (i % 8))}${code(c).toString(16)}}`),
  "C \\x0… with every hex digit": (s) =>
    each(s, (c, i) => "\\x" + code(c).toString(16).padStart(4 + (i % 3), "0")),
};

for (const [name, spell] of Object.entries(SPELLINGS)) {
  Deno.test(`secret mask: a value spelled as ${name} is masked whole`, () => {
    const text = `before ${spell(VALUE)} after\n`;
    assert.equal(maskSecrets(text, SECRETS), `before ${MARK} after\n`);
  });

  Deno.test(`secret mask: a value spelled as ${name} is masked streamed in small pieces`, () => {
    const text = `v=${spell(VALUE)};\n`;
    for (const size of [1, 3, 7]) {
      const m = createSecretMasker(SECRETS);
      let out = "";
      for (let i = 0; i < text.length; i += size) out += m.push(text.slice(i, i + size));
      out += m.flush();
      assert.equal(out, `v=${MARK};\n`, `pieces of ${size}`);
    }
  });
}

Deno.test("secret mask: a run of the value's 8-character pieces as \\0NNN is masked", () => {
  const spelled = SPELLINGS["printf %b \\0NNN"]!(VALUE.slice(4, 20));
  const out = maskSecrets(`x ${spelled} y`, SECRETS);
  assert.ok(out.includes("[redacted:"), out);
  assertNoPieceOf(out, [VALUE], "the masked output");
});

Deno.test("secret mask: \\0NN then an octal digit still reads as C and JavaScript read it", () => {
  // `\012` is LF to C, Python and JavaScript: the value after it, its first character a digit.
  const value = "7Kp2Xw9Lm4Rt6Yh8";
  const secrets: Secret[] = [{ kind: "vault", name: "S", value: `\n${value}` }];
  assert.equal(maskSecrets(`a\\012${value}b`, secrets), "a[redacted:vault:S]b");
});

Deno.test("secret mask: \\x0H then a hex digit still reads as printf reads it", () => {
  // printf and Python read `\x0a` then `1…`; a C compiler reads `\x0a1` as U+00A1.
  const value = "1b2c3d4e5f6a7b8c9d";
  const secrets: Secret[] = [{ kind: "vault", name: "S", value: `\n${value}` }];
  assert.equal(maskSecrets(`a\\x0a${value}z`, secrets), "a[redacted:vault:S]z");
});

Deno.test("secret mask: a \\N{…} name not known and a \\u{…} past U+10FFFF stay as written", () => {
  const text = "\\N{SNOWMAN} \\N{LATIN CAPITAL LETTER QQ} \\u{0110000} \\x0110000";
  assert.equal(maskSecrets(text, SECRETS), text);
  // The value around them is still found.
  const around = `${text}${SPELLINGS["Python \\N{NAME}"]!(VALUE)}${text}`;
  assert.equal(maskSecrets(around, SECRETS), `${text}${MARK}${text}`);
});

Deno.test("secret mask: a long run of leading zeros in pieces is masked with a small held tail", () => {
  // `\u{` and `\x0` followed by 256 K zeros: held only while an escape's digits are few.
  for (const start of ["\\u{", "\\x0"]) {
    const text = `${start}${"0".repeat(256 * 1024)}}v=${SPELLINGS["printf %b \\0NNN"]!(VALUE)}\n`;
    const m = createSecretMasker(SECRETS);
    const before = { ...maskWork };
    let out = "";
    for (let i = 0; i < text.length; i += 400) {
      out += m.push(text.slice(i, i + 400));
      const given = Math.min(i + 400, text.length);
      assert.ok(m.held <= 5 * VALUE.length + 32, `held ${m.held} after ${given}`);
      assert.ok(maskWork.decoded - before.decoded <= 8 * given, `decoded after ${given}`);
      assert.ok(maskWork.scanned - before.scanned <= 8 * given, `scanned after ${given}`);
    }
    out += m.flush();
    assert.ok(out.endsWith(`}v=${MARK}\n`), out.slice(-80));
    assertNoPieceOf(out, [VALUE], "the masked output");
  }
});
