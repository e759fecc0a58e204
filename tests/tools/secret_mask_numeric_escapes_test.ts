// Numeric escapes read by the reader-independent rule (red team final16 secimp rows 7-23): octal
// past `\377` and a C compiler's greedy `\x` keep their low 8 bits to bash `$'…'`, printf (format
// and `%b`), `echo -e`, dash, awk and gcc (`\521`, `\0521`, `\x0151`, `\x151`, `\x0fff51` are all
// `Q`), and Perl and GNU sed have `\N{U+51}`, `\o{121}`, `\d081`, `\o121`. Masking read none of
// them. Each spelling of a vault value is masked whole and streamed at every piece size; ordinary
// escaped text (a JSON of non-ASCII text, ANSI colours, Windows paths) with several secrets loaded
// is left as it is; a long digit run is masked with linear work and a small held tail.
import assert from "node:assert/strict";
import {
  createSecretMasker,
  maskSecrets,
  maskWork,
  type Secret,
} from "../../lib/tools/secret_mask.ts";
import { LONG_NUMBER_MARKER } from "../../lib/tools/_escape_lattice.ts";
import { assertNoPieceOf } from "../support/secrets.ts";

const VALUE = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";
const V3 = "Kx12Mz34Qw56Ty78Pr90Hn";
const MARK = "[redacted:vault:ATK_V]";
const SECRETS: Secret[] = [{ kind: "vault", name: "ATK_V", value: VALUE }];

const code = (c: string) => c.charCodeAt(0);
const each = (s: string, f: (c: string, i: number) => string) => [...s].map(f).join("");
const oct = (n: number) => n.toString(8);
const hex = (n: number) => n.toString(16);

/** Each spelling, by the red team's row. */
const SPELLINGS: Record<string, (s: string) => string> = {
  "row 7: octal of code+256 (bash $'…', printf, awk)": (s) =>
    each(s, (c) => `\\${oct(code(c) + 256)}`),
  "row 8: printf %b \\0NNN of code+256": (s) => each(s, (c) => `\\0${oct(code(c) + 256)}`),
  "row 9: gcc \\x01HH": (s) => each(s, (c) => `\\x01${hex(code(c))}`),
  "row 10: gcc \\x0fffHH": (s) => each(s, (c) => `\\x0fff${hex(code(c))}`),
  "row 12: wrapped octal on every other character": (s) =>
    each(s, (c, i) => i % 2 === 0 ? `\\${oct(code(c) + 256)}` : c),
  "row 13: wrapped octal, JSON-escaped again": (s) =>
    JSON.stringify(each(s, (c) => `\\${oct(code(c) + 256)}`)).slice(1, -1),
  "row 18: gcc \\x1HH": (s) => each(s, (c) => `\\x1${hex(code(c))}`),
  "row 19: gcc \\x7HH": (s) => each(s, (c) => `\\x${hex(code(c) + 0x700)}`),
  "row 20: Perl \\N{U+HH}": (s) => each(s, (c) => `\\N{U+${hex(code(c)).toUpperCase()}}`),
  "row 21: Perl \\o{NNN}": (s) => each(s, (c) => `\\o{${oct(code(c))}}`),
  "row 22: GNU sed \\dNNN": (s) => each(s, (c) => `\\d${String(code(c)).padStart(3, "0")}`),
  "row 23: GNU sed \\oNNN": (s) => each(s, (c) => `\\o${oct(code(c)).padStart(3, "0")}`),
  "a wrapped backslash \\534 before a level of \\xHH": (s) =>
    each(s, (c) => `\\534x${hex(code(c))}`),
  "a wrapped printf %b backslash \\0534 before a level of \\xHH": (s) =>
    each(s, (c) => `\\0534x${hex(code(c))}`),
  "every rule reading in turn": (s) =>
    each(s, (c, i) =>
      [
        `\\${oct(code(c) + 512)}`,
        `\\x0f${hex(code(c))}`,
        `\\d${code(c) + 256}`,
        `\\N{U+${hex(code(c))}}`,
        `\\u0${hex(code(c))}`,
      ][i % 5]!),
};

function streamed(text: string, secrets: Secret[], size: number): string {
  const m = createSecretMasker(secrets);
  let out = "";
  for (let i = 0; i < text.length; i += size) out += m.push(text.slice(i, i + size));
  return out + m.flush();
}

for (const [name, spell] of Object.entries(SPELLINGS)) {
  Deno.test(`secret mask: a value spelled ${name} is masked whole and in pieces`, () => {
    const text = `v=${spell(VALUE)};\n`;
    assert.equal(maskSecrets(text, SECRETS), `v=${MARK};\n`);
    for (const size of [1, 2, 3, 7, 64]) {
      assert.equal(streamed(text, SECRETS, size), `v=${MARK};\n`, `pieces of ${size}`);
    }
  });
}

Deno.test("secret mask: row 14, wrapped octal of a value with digit pairs, is masked", () => {
  const secrets: Secret[] = [{ kind: "vault", name: "V3", value: V3 }];
  const text = `v=${SPELLINGS["row 7: octal of code+256 (bash $'…', printf, awk)"]!(V3)}\n`;
  for (const size of [1, 3, 7, 64, text.length]) {
    assert.equal(streamed(text, secrets, size), "v=[redacted:vault:V3]\n", `pieces of ${size}`);
  }
});

Deno.test("secret mask: row 15, an 8-character piece as wrapped \\0NNN between text, is masked", () => {
  const text = `zz${each(VALUE.slice(3, 11), (c) => `\\0${oct(code(c) + 256)}`)}zz`;
  for (const size of [1, 3, 7, 64, text.length]) {
    assert.equal(streamed(text, SECRETS, size), `zz${MARK}zz`, `pieces of ${size}`);
  }
});

Deno.test("secret mask: a short value spelled with any leading part of a run is masked whole", () => {
  const secrets: Secret[] = [{ kind: "vault", name: "S", value: "pw56xy" }];
  // `\x7756` is `\x77` (w) then `56`, `\x3678` the low byte of 0x3678 (x).
  const text = "a \\160\\x7756\\x3678\\x79 b";
  assert.equal(maskSecrets(text, secrets), "a [redacted:vault:S] b");
  for (const size of [1, 3, 7]) {
    assert.equal(streamed(text, secrets, size), "a [redacted:vault:S] b", `pieces of ${size}`);
  }
});

Deno.test("secret mask: ordinary escaped text is left as it is with several secrets loaded", () => {
  const secrets: Secret[] = [
    ...SECRETS,
    { kind: "vault", name: "V3", value: V3 },
    { kind: "api_key", name: "HEX", value: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b" },
    { kind: "vault", name: "SHORT", value: "Tq8Wz3" },
    { kind: "api_key", name: "OPENAI_API_KEY", value: "sk-proj-4Kd9Lq2Zx7Vb1Nm8Rt5Yw3Hc6" },
  ];
  const words = ["中文文本", "Привет мир", "Ärger über Öl", "日本語のテキスト", "Ελληνικά"];
  const lines: string[] = [];
  for (let i = 0; i < 400; i++) {
    const json = JSON.stringify({ id: i, text: words[i % words.length] })
      .replace(/[\u0080-\uffff]/g, (c) => `\\u${hex(code(c)).padStart(4, "0")}`);
    lines.push(
      json,
      `\\033[${30 + (i % 8)}mcoloured\\033[0m`,
      `C:\\\\Users\\\\x${i}\\\\d${i}\\\\o1`,
    );
  }
  const text = lines.join("\n") + "\n";
  assert.equal(maskSecrets(text, secrets), text);
  assert.equal(streamed(text, secrets, 97), text);
});

Deno.test("secret mask: a numeric escape with a long digit run is masked, with linear work", () => {
  for (const start of ["\\x", "\\0", "\\d", "\\u{"]) {
    const digits = start === "\\d" || start === "\\0" ? "1234567" : "0123456789abcdef";
    const run = digits.repeat(Math.ceil(60_000 / digits.length)).slice(0, 60_000);
    const text = `${start}${run}v=${SPELLINGS["row 9: gcc \\x01HH"]!(VALUE)}\n`;
    const before = { ...maskWork };
    const m = createSecretMasker(SECRETS);
    let out = "";
    for (let i = 0; i < text.length; i += 400) {
      out += m.push(text.slice(i, i + 400));
      const given = Math.min(i + 400, text.length);
      assert.ok(m.held <= 8 * VALUE.length + 64, `${start}: held ${m.held} after ${given}`);
      assert.ok(maskWork.decoded - before.decoded <= 8 * given, `${start}: decoded`);
      assert.ok(maskWork.scanned - before.scanned <= 8 * given, `${start}: scanned`);
    }
    out += m.flush();
    assert.ok(out.startsWith(LONG_NUMBER_MARKER), `${start}: ${out.slice(0, 60)}`);
    assert.ok(out.endsWith(`v=${MARK}\n`), `${start}: ${out.slice(-60)}`);
    assertNoPieceOf(out, [VALUE], `${start} masked`);
    assert.ok(maskSecrets(text, SECRETS).startsWith(LONG_NUMBER_MARKER));
  }
});
