// URL percent-encoding and HTML/XML character references (red team: a vault value printed URL-
// encoded or as HTML entities got through): `%51` (either hex case), `%u0051`, `&#81;`, `&#x51;`,
// `&#X51`, `&amp;`, `&num;`…, each mixed with plain characters and backslash escapes, and read a
// level down (a URL-encoded JSON string). Each spelling is masked whole and streamed at every piece
// size; ordinary URLs, HTML, base64 and hex dumps with several secrets loaded are left as they are.
import assert from "node:assert/strict";
import { createSecretMasker, maskSecrets, type Secret } from "../../lib/tools/secret_mask.ts";
import { LONG_NUMBER_MARKER } from "../../lib/tools/_escape_lattice.ts";

const VALUE = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";
const PUNCT = "a&b<c>d\"e'f#g$h%i(j)k*l+m";
const MARK = "[redacted:vault:ATK_V]";
const SECRETS: Secret[] = [
  { kind: "vault", name: "ATK_V", value: VALUE },
  { kind: "vault", name: "PUNCT", value: PUNCT },
];

const code = (c: string) => c.charCodeAt(0);
const each = (s: string, f: (c: string, i: number) => string) => [...s].map(f).join("");
const hex = (c: string) => code(c).toString(16).padStart(2, "0");

const SPELLINGS: Record<string, (s: string) => string> = {
  "%HH, lower-case hex": (s) => each(s, (c) => `%${hex(c)}`),
  "%HH, upper-case hex": (s) => each(s, (c) => `%${hex(c).toUpperCase()}`),
  "%uHHHH (escape())": (s) => each(s, (c) => `%u00${hex(c)}`),
  "&#DD;": (s) => each(s, (c) => `&#${code(c)};`),
  "&#DD without ;": (s) => each(s, (c) => `&#${code(c)}`),
  "&#xHH;": (s) => each(s, (c) => `&#x${hex(c)};`),
  "&#XHH without ;, leading zeros": (s) => each(s, (c) => `&#X000${hex(c)}`),
  "a mix of %HH, &#DD;, \\xHH, \\u00HH and plain": (s) =>
    each(s, (c, i) => [`%${hex(c)}`, `&#${code(c)};`, c, `\\x${hex(c)}`, `\\u00${hex(c)}`][i % 5]!),
  "encodeURIComponent of a JSON string of \\u00HH": (s) =>
    encodeURIComponent(each(s, (c) => `\\u00${hex(c)}`)),
  "%HH HTML-escaped (&#37;HH)": (s) => each(s, (c) => `%${hex(c)}`).replaceAll("%", "&#37;"),
  "twice URL-encoded": (s) =>
    encodeURIComponent(encodeURIComponent(s)).replaceAll(/[A-Za-z0-9]/g, (c) => `%25${hex(c)}`),
};

function streamed(text: string, secrets: Secret[], size: number): string {
  const m = createSecretMasker(secrets);
  let out = "";
  for (let i = 0; i < text.length; i += size) out += m.push(text.slice(i, i + size));
  return out + m.flush();
}

for (const [name, spell] of Object.entries(SPELLINGS)) {
  Deno.test(`secret mask: a value spelled ${name} is masked whole and in pieces`, () => {
    const text = `v=${spell(VALUE)} .\n`;
    assert.equal(maskSecrets(text, SECRETS), `v=${MARK} .\n`);
    for (const size of [1, 2, 3, 7, 64]) {
      assert.equal(streamed(text, SECRETS, size), `v=${MARK} .\n`, `pieces of ${size}`);
    }
  });
}

Deno.test("secret mask: an 8-character piece spelled as %HH between text is masked", () => {
  const text = `zz${each(VALUE.slice(3, 11), (c) => `%${hex(c)}`)}zz`;
  for (const size of [1, 3, 7, 64, text.length]) {
    assert.equal(streamed(text, SECRETS, size), `zz${MARK}zz`, `pieces of ${size}`);
  }
});

Deno.test("secret mask: a value's punctuation as named and numeric references is masked", () => {
  const names: Record<string, string> = {
    "&": "&amp;",
    "<": "&lt",
    ">": "&GT;",
    '"': "&quot;",
    "'": "&apos;",
    "#": "&num;",
    "$": "&dollar;",
    "%": "&percnt;",
    "(": "&lpar;",
    ")": "&rpar;",
    "*": "&ast;",
    "+": "&plus;",
  };
  const spelled = [
    each(PUNCT, (c) => names[c] ?? c),
    each(PUNCT, (c, i) => names[c] === undefined ? c : i % 2 ? `%${hex(c)}` : `&#${code(c)};`),
  ];
  for (const s of spelled) {
    const text = `<p>${s}</p>\n`;
    assert.equal(maskSecrets(text, SECRETS), "<p>[redacted:vault:PUNCT]</p>\n");
    for (const size of [1, 2, 5, 64]) {
      assert.equal(
        streamed(text, SECRETS, size),
        "<p>[redacted:vault:PUNCT]</p>\n",
        `pieces of ${size}`,
      );
    }
  }
});

Deno.test("secret mask: a character reference with more than 32 digits is masked whole", () => {
  const text = `a &#${"0".repeat(40)}81; b`;
  const out = maskSecrets(text, SECRETS);
  assert.ok(out.startsWith(`a ${LONG_NUMBER_MARKER}`), out);
  assert.ok(!out.includes("&#0"), out);
});

Deno.test("secret mask: ordinary URLs, HTML, base64 and hex are left as they are with secrets loaded", () => {
  const secrets: Secret[] = [
    ...SECRETS,
    { kind: "api_key", name: "HEX", value: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b" },
    { kind: "vault", name: "SHORT", value: "Tq8Wz3" },
    { kind: "api_key", name: "OPENAI_API_KEY", value: "sk-proj-4Kd9Lq2Zx7Vb1Nm8Rt5Yw3Hc6" },
  ];
  let seed = 11;
  const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
  const words = ["Grüße aus Köln", "a b&c", "100% sure", '<tag attr="v">', "x=1&y=2", "日本語"];
  const lines: string[] = [];
  for (let i = 0; i < 200; i++) {
    const w = words[i % words.length]!;
    const bytes = Uint8Array.from({ length: 48 }, rand);
    const b64 = btoa(String.fromCharCode(...bytes));
    lines.push(
      `GET https://example.com/search?q=${encodeURIComponent(w)}&page=${i}%20x HTTP/1.1`,
      `<a href="/p?a=1&amp;b=${i}" title="${
        w.replaceAll("&", "&amp;").replaceAll("<", "&lt;")
      }">&copy; &#169; &nbsp;&#x2014;</a>`,
      b64,
      b64.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, ""),
      Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""),
      `${(i * 16).toString(16).padStart(8, "0")}  ${
        Array.from(bytes.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join(" ")
      }`,
      JSON.stringify({ url: `https://x.test/${encodeURIComponent(w)}`, html: `&lt;b&gt;${i}` }),
    );
  }
  const text = lines.join("\n") + "\n";
  assert.equal(maskSecrets(text, secrets), text);
  assert.equal(streamed(text, secrets, 4096), text);
  assert.equal(streamed(text, secrets, 61), text);
});

Deno.test("secret mask: random numeric escapes that decode to % and & are left as they are", () => {
  // Decoded, random `\NNN`/`\xHHH`/`\dNNN`/`\uHHHH` hold `%`, `&` and hex digits everywhere: read as
  // a further view each, they overflowed the views a level may hold (every line masked).
  let seed = 5;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) / 0x1000000;
  const digits = (base: number, n: number) =>
    Array.from({ length: n }, () => Math.floor(rand() * base).toString(base)).join("");
  const parts: string[] = [];
  for (let i = 0; i < 12_000; i++) {
    const r = rand();
    parts.push(
      r < 0.25
        ? `\\${digits(8, 3)}`
        : r < 0.5
        ? `\\x${digits(16, 3)}`
        : r < 0.7
        ? `\\d${digits(10, 3)}`
        : r < 0.9
        ? `\\u${digits(16, 4)}`
        : r < 0.95
        ? "\n"
        : " ",
    );
  }
  const text = parts.join("") + "\n";
  assert.equal(maskSecrets(text, SECRETS), text);
});
