// A secret printed as base64 (standard or URL-safe, padded or not, at any byte offset of the data
// encoded) or as hex (either case), whole or an 8-character piece of it, is masked with the
// secret's own marker, whole and streamed at every piece size (red team: `base64`, `xxd -p` and
// `basenc --base64url` of a vault value got through). Random base64 and hex dumps are left alone.
import assert from "node:assert/strict";
import { createSecretMasker, maskSecrets, type Secret } from "../../lib/tools/secret_mask.ts";

const VALUE = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";
// Bytes whose base64 holds `+` and `/` (and `-` `_` URL-safe), and a non-ASCII character.
const ODD = "~~>?ü~~>?~~>?zz!!";
const SHORT = "Tq8Wz3ab";
const SECRETS: Secret[] = [
  { kind: "vault", name: "ATK_V", value: VALUE },
  { kind: "vault", name: "ODD", value: ODD },
  { kind: "vault", name: "SHORT", value: SHORT },
];

const utf8 = (s: string) => new TextEncoder().encode(s);
const b64 = (s: string) => btoa(String.fromCharCode(...utf8(s)));
const b64url = (s: string) => b64(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
const hex = (s: string) => Array.from(utf8(s), (b) => b.toString(16).padStart(2, "0")).join("");

function streamed(text: string, size: number): string {
  const m = createSecretMasker(SECRETS);
  let out = "";
  for (let i = 0; i < text.length; i += size) out += m.push(text.slice(i, i + size));
  return out + m.flush();
}

/** Fail unless `text` masks (whole and streamed alike) to something holding `mark` and no 10 characters of `forms`. */
function assertMasked(text: string, mark: string, forms: string[]): void {
  for (const size of [0, 1, 2, 3, 7, 64]) {
    const out = size === 0 ? maskSecrets(text, SECRETS) : streamed(text, size);
    if (size > 0) assert.equal(out, maskSecrets(text, SECRETS), `pieces of ${size}`);
    assert.ok(out.includes(mark), `${size}: ${out}`);
    for (const form of forms) {
      for (let i = 0; i + 10 <= form.length; i++) {
        assert.ok(!out.includes(form.slice(i, i + 10)), `${size}: ${out} holds ${form}`);
      }
    }
  }
}

Deno.test("secret mask: a value's base64 is masked at each byte offset, either alphabet, padded or not", () => {
  for (const value of [VALUE, ODD]) {
    const mark = value === VALUE ? "[redacted:vault:ATK_V]" : "[redacted:vault:ODD]";
    for (const before of ["", "a", "ab", "user:", "password="]) {
      for (const enc of [b64, b64url]) {
        const encoded = enc(before + value + "\n");
        // The characters that mix in the bytes around the value stay; the value's do not.
        const inner = enc(value).slice(1, -3);
        const text = `data: ${encoded}\n`;
        assertMasked(text, mark, before === "" ? [inner] : []);
        const out = maskSecrets(text, SECRETS);
        assert.ok(out.length - mark.length < before.length * 2 + 16, out);
      }
    }
    assert.equal(maskSecrets(`${b64(value)}\n`, SECRETS), `${mark}\n`);
    assert.equal(maskSecrets(`${b64url(value)}\n`, SECRETS), `${mark}\n`);
  }
});

Deno.test("secret mask: an 8-character piece's base64 is masked at each byte offset", () => {
  for (let at = 0; at + 8 <= VALUE.length; at += 5) {
    const piece = VALUE.slice(at, at + 8);
    for (const before of ["", "x", "xy"]) {
      const text = `${b64(before + piece)}\n`;
      const out = maskSecrets(text, SECRETS);
      assert.ok(out.includes("[redacted:vault:ATK_V]"), `${before}${piece}: ${out}`);
      assertMasked(text, "[redacted:vault:ATK_V]", []);
    }
  }
});

Deno.test("secret mask: a value's hex and an 8-character piece's are masked in either case", () => {
  const text = `lower ${hex(VALUE)}\nupper ${hex(VALUE).toUpperCase()}\n` +
    `piece ${hex(VALUE.slice(9, 17))}\nodd ${hex(ODD)}\n`;
  const want = "lower [redacted:vault:ATK_V]\nupper [redacted:vault:ATK_V]\n" +
    "piece [redacted:vault:ATK_V]\nodd [redacted:vault:ODD]\n";
  assert.equal(maskSecrets(text, SECRETS), want);
  for (const size of [1, 2, 3, 7, 64]) {
    assert.equal(streamed(text, size), want, `pieces of ${size}`);
  }
});

Deno.test("secret mask: a short value's base64 and hex are masked whole, a 7-character piece's are not", () => {
  const text = `a ${b64(SHORT)} b ${b64("::" + SHORT)} c ${hex(SHORT)} d ${
    hex(SHORT.slice(0, 7))
  }\n`;
  const want = `a [redacted:vault:SHORT] b ${b64("::" + SHORT).slice(0, 3)}[redacted:vault:SHORT]` +
    `${b64("::" + SHORT).slice(13)} c [redacted:vault:SHORT] d ${hex(SHORT.slice(0, 7))}\n`;
  assert.equal(maskSecrets(text, SECRETS), want);
  for (const size of [1, 3, 64]) assert.equal(streamed(text, size), want, `pieces of ${size}`);
});

Deno.test("secret mask: base64 of random data and hex dumps are left alone with secrets loaded", () => {
  // A fixed-seed generator: the same bytes every run.
  let seed = 7;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
  const lines: string[] = [];
  for (let i = 0; i < 300; i++) {
    const bytes = Uint8Array.from({ length: 57 }, next);
    const b = btoa(String.fromCharCode(...bytes));
    const h = Array.from(bytes, (x) => x.toString(16).padStart(2, "0")).join("");
    lines.push(b, b.replaceAll("+", "-").replaceAll("/", "_"), h, h.toUpperCase());
    lines.push(
      `${(i * 16).toString(16).padStart(8, "0")}: ${h.slice(0, 32).replace(/(....)/g, "$1 ")}`,
    );
  }
  const text = lines.join("\n") + "\n";
  assert.equal(maskSecrets(text, SECRETS), text);
  assert.equal(streamed(text, 4096), text);
});
