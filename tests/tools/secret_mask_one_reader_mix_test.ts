// One reader's spelling that mixes escapes only the C reading reads with `\0NN` before an octal
// digit (red team final15 secimp rows 12-16): Python, bash `$'…'`, printf's format string and C
// compilers read at most three octal digits (`\0612` is `1` then `2`) and also read `\N{…}`,
// `\U…` and a greedy `\x00HH`. Masking read `\0612` as printf `%b` does (one escape, `\0612`),
// so a value spelled that way was decoded by neither of its readings. A vault value in each such
// spelling is masked whole and streamed in pieces, and printf `%b`'s own mix (`\U…` letters,
// `\0NNN` digits) still is.
import assert from "node:assert/strict";
import { createSecretMasker, maskSecrets, type Secret } from "../../lib/tools/secret_mask.ts";

const VALUE = "Kx12Mz34Qw56Ty78Pr90Hn";
const MARK = "[redacted:vault:ATK_V3]";
const SECRETS: Secret[] = [{ kind: "vault", name: "ATK_V3", value: VALUE }];

const code = (c: string) => c.charCodeAt(0);
const octal = (c: string, width: number) => code(c).toString(8).padStart(width, "0");
const DIGITS = ["ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"];

/** Python's Unicode name of an ASCII letter or digit. */
function unicodeName(c: string): string {
  if (/[0-9]/.test(c)) return `DIGIT ${DIGITS[Number(c)]}`;
  return `LATIN ${c === c.toUpperCase() ? "CAPITAL" : "SMALL"} LETTER ${c.toUpperCase()}`;
}

/**
 * `s` with each digit before an octal digit as `\0NN` and that octal digit as itself (three
 * octal digits, then a plain one), every other character spelled by `other`.
 */
function mixed(s: string, other: (c: string) => string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (/[0-9]/.test(c) && i + 1 < s.length && /[0-7]/.test(s[i + 1]!)) {
      out += "\\0" + octal(c, 2) + s[++i];
    } else out += other(c);
  }
  return out;
}

const SPELLINGS: Record<string, string> = {
  "Python \\N{NAME} and \\0NN": mixed(VALUE, (c) => `\\N{${unicodeName(c)}}`),
  "bash $'…' \\U000000HH and \\0NN": mixed(
    VALUE,
    (c) => "\\U" + code(c).toString(16).padStart(8, "0"),
  ),
  "a C compiler's \\x00HH and \\0NN": mixed(VALUE, (c) => "\\x00" + code(c).toString(16)),
  "printf %b \\U000000HH and \\0NNN": [...VALUE].map((c) =>
    /[0-9]/.test(c) ? "\\0" + octal(c, 3) : "\\U" + code(c).toString(16).padStart(8, "0")
  ).join(""),
};

Deno.test("secret mask: the mixed spellings hold \\0NN before a plain octal digit", () => {
  // The shape the fix is about: `\061` then `2`, which printf `%b` would read as one escape.
  assert.ok(SPELLINGS["Python \\N{NAME} and \\0NN"]!.includes("\\0612"));
  assert.ok(SPELLINGS["printf %b \\U000000HH and \\0NNN"]!.includes("\\0061\\0062"));
});

for (const [name, spelled] of Object.entries(SPELLINGS)) {
  Deno.test(`secret mask: a value spelled as ${name} is masked whole`, () => {
    assert.equal(maskSecrets(`before ${spelled} after\n`, SECRETS), `before ${MARK} after\n`);
  });

  Deno.test(`secret mask: a value spelled as ${name} is masked streamed in pieces`, () => {
    const text = `v=${spelled};\n`;
    for (const size of [1, 3, 7, 64]) {
      const m = createSecretMasker(SECRETS);
      let out = "";
      for (let i = 0; i < text.length; i += size) out += m.push(text.slice(i, i + size));
      out += m.flush();
      assert.equal(out, `v=${MARK};\n`, `pieces of ${size}`);
    }
  });
}
