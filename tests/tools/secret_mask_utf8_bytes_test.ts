// A non-ASCII secret printed as its UTF-8 bytes escaped one by one (attack round 20 mcpsecrets
// repro05: `%C3%BC`, `\xc3\xbc`, `\303\274` decoded to the characters U+00C3 U+00BC, never to
// `ü`, so only the secret's ASCII runs were masked and a mostly non-ASCII secret went out whole),
// or decoded as Latin-1 (mojibake): each spelling is masked whole, also streamed in pieces and
// a level down (in a JSON string); ASCII text with the same bytes' neighbours is left alone.
import assert from "node:assert/strict";
import { createSecretMasker, maskSecrets, type Secret } from "../../lib/tools/secret_mask.ts";

const SECRETS: Secret[] = [
  { kind: "vault", name: "DE", value: "Grüße-aus-München-2026-xyzq" },
  { kind: "vault", name: "RU", value: "пароль-секрет-ключ-42" },
  { kind: "vault", name: "ZH", value: "密码钥匙秘密令牌值九" },
  { kind: "vault", name: "EURO", value: "€uro-prices-€€-ßeta-x9" },
];

const bytesOf = (s: string) => [...new TextEncoder().encode(s)];
const hex = (b: number) => b.toString(16).padStart(2, "0");
/** Every non-ASCII byte of `s` spelled by `f`, the ASCII characters as they are. */
const spell = (s: string, f: (b: number) => string) =>
  bytesOf(s).map((b) => b >= 0x80 ? f(b) : String.fromCharCode(b)).join("");

const SPELLINGS: Record<string, (s: string) => string> = {
  "%HH (urllib.parse.quote, encodeURIComponent)": (s) =>
    spell(s, (b) => `%${hex(b).toUpperCase()}`),
  "every byte %hh": (s) => bytesOf(s).map((b) => `%${hex(b)}`).join(""),
  "\\xhh (a Python bytes repr)": (s) => spell(s, (b) => `\\x${hex(b)}`),
  "\\ooo (printf %b, od -b)": (s) => spell(s, (b) => `\\${b.toString(8)}`),
  "&#xHH; (an HTML escape of the bytes)": (s) => spell(s, (b) => `&#x${hex(b)};`),
  "Latin-1 mojibake": (s) => bytesOf(s).map((b) => String.fromCharCode(b)).join(""),
  "%HH in a JSON string": (s) => JSON.stringify({ v: spell(s, (b) => `%${hex(b)}`) }),
};

/** What is left of `text` masked: the secrets' markers and the text around them. */
function expected(name: string, before: string, after: string): string {
  return `${before}[redacted:vault:${name}]${after}`;
}

for (const [how, f] of Object.entries(SPELLINGS)) {
  Deno.test(`a non-ASCII secret spelled as ${how} is masked, whole and streamed`, () => {
    for (const s of SECRETS) {
      const spelled = f(s.value);
      const json = how.includes("JSON");
      const text = `id=${spelled}&next=1\n`;
      const masked = maskSecrets(text, SECRETS);
      const want = json
        ? expected(s.name, `id={"v":"`, `"}&next=1\n`)
        : expected(s.name, "id=", "&next=1\n");
      // A trailing continuation byte in 0x80–0x9F (a C1 control when read as a character, which
      // the matcher does not see) may stay after the marker: one byte of the last character.
      const tail = masked.slice(masked.indexOf("]") + 1);
      assert.ok(masked.startsWith(want.slice(0, want.indexOf("]") + 1)), `${s.name}: ${masked}`);
      assert.ok(
        tail === want.slice(want.indexOf("]") + 1) ||
          /^(%[89][0-9a-f]|\\x[89][0-9a-f]|\\2[0-3][0-7]|&#x[89][0-9a-f];|[\u0080-\u009f])/i.test(
            tail,
          ),
        `${s.name}: ${masked}`,
      );
      assert.ok(!masked.includes(spelled.slice(0, 12)), `${s.name}: no piece left: ${masked}`);
      for (const size of [1, 3, 7]) {
        const m = createSecretMasker(SECRETS);
        let out = "";
        for (let i = 0; i < text.length; i += size) out += m.push(text.slice(i, i + size));
        out += m.flush();
        assert.equal(out, masked, `${s.name}, pieces of ${size}`);
      }
    }
  });
}

Deno.test("the byte reading of a non-ASCII secret is masked in pieces, as the secret is", () => {
  const de = SECRETS[0]!.value;
  // A piece of 16 characters read byte by byte (the ß's second byte, a C1 control, not counted):
  // "Grüße-aus-Münc" is one, "Grüße-aus-Mün" is not (and its ASCII run is under 8 characters).
  const piece = (n: number) => spell(de.slice(0, n), (b) => `%${hex(b).toUpperCase()}`);
  assert.equal(maskSecrets(`a ${piece(14)} b`, SECRETS), "a [redacted:vault:DE] b");
  assert.equal(maskSecrets(`a ${piece(13)} b`, SECRETS), `a ${piece(13)} b`);
});

Deno.test("ordinary percent-encoded and Latin-1 text with secrets loaded is left as it is", () => {
  const texts = [
    "https://example.com/search?q=M%C3%BCnchen%20Wetter&lang=de",
    "Grüße aus München, 2026",
    "Ã¼ber alles: %C3%A4%C3%B6%C3%BC and \\xc3\\xa4",
    "пароль: ********",
  ];
  for (const t of texts) assert.equal(maskSecrets(t, SECRETS), t);
});
