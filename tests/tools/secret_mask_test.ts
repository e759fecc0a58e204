import assert from "node:assert/strict";
import {
  createSecretMasker,
  maskSecrets,
  MIN_SECRET_LENGTH,
  type Secret,
  secretMarker,
  vaultSecrets,
} from "../../lib/tools/secret_mask.ts";

const TOKEN: Secret = { kind: "vault", name: "MY_TOKEN", value: "tok-9f8e7d6c5b4a" };
const KEY: Secret = { kind: "api_key", name: "OPENAI_API_KEY", value: "sk-proj-Zx9QwErTyUiOp" };

/** Leftmost-longest replacement, one position at a time: the reference the masker must equal. */
function reference(text: string, secrets: readonly Secret[]): string {
  const usable = secrets.filter((s) => s.value.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.value.length - a.value.length);
  let out = "";
  let i = 0;
  outer: while (i < text.length) {
    for (const s of usable) {
      if (text.startsWith(s.value, i)) {
        out += secretMarker(s);
        i += s.value.length;
        continue outer;
      }
    }
    out += text[i];
    i++;
  }
  return out;
}

/** A deterministic pseudo-random generator (xorshift32). */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
}

Deno.test("maskSecrets replaces vault values and API keys by named markers", () => {
  const text = `token=${TOKEN.value}\nkey: ${KEY.value}; again ${TOKEN.value}`;
  assert.equal(
    maskSecrets(text, [TOKEN, KEY]),
    "token=[redacted:vault:MY_TOKEN]\nkey: [redacted:api_key:OPENAI_API_KEY]; again [redacted:vault:MY_TOKEN]",
  );
});

Deno.test("values shorter than the minimum length are never masked", () => {
  const short: Secret = { kind: "vault", name: "PIN", value: "12345" };
  assert.equal(MIN_SECRET_LENGTH, 6);
  assert.equal(maskSecrets("pin 12345", [short]), "pin 12345");
  assert.equal(createSecretMasker([short]).active, false);
});

Deno.test("a longer secret wins over a shorter one it contains, even when split across chunks", () => {
  const outer: Secret = { kind: "vault", name: "OUTER", value: "prefix-inner1-suffix" };
  const inner: Secret = { kind: "vault", name: "INNER", value: "inner1" };
  const m = createSecretMasker([inner, outer]);
  const out = m.push("a prefix-inner1") + m.push("-suf") + m.push("fix b") + m.flush();
  assert.equal(out, "a [redacted:vault:OUTER] b");
  const m2 = createSecretMasker([inner, outer]);
  const out2 = m2.push("a prefix-inner1") + m2.push("-nope") + m2.flush();
  assert.equal(out2, "a prefix-[redacted:vault:INNER]-nope");
});

Deno.test("the streaming masker finds a secret split over two and three chunks and holds back only a possible prefix", () => {
  const m = createSecretMasker([TOKEN]);
  const v = TOKEN.value;
  assert.equal(m.push(`token=${v.slice(0, 5)}`), "token=");
  assert.equal(m.held, 5);
  assert.equal(m.push(v.slice(5, 9)), "");
  assert.equal(m.push(`${v.slice(9)} done`), "[redacted:vault:MY_TOKEN] done");
  assert.equal(m.held, 0);
  // A tail that cannot start the secret is released at once.
  assert.equal(m.push("Password: "), "Password: ");
  assert.equal(m.flush(), "");
  // A held tail that never completes comes out unchanged at the end.
  assert.equal(m.push("x tok-9f"), "x ");
  assert.equal(m.flush(), "tok-9f");
});

Deno.test("any chunking of a text masks exactly like the whole text (randomised, seeded)", () => {
  const secrets: Secret[] = [
    TOKEN,
    KEY,
    { kind: "vault", name: "AAA", value: "aaaaab" },
    { kind: "vault", name: "AB", value: "abab-abab" },
    { kind: "api_key", name: "g", value: "aaaaabab-abab" },
    { kind: "vault", name: "SHORT", value: "ab" },
  ];
  const alphabet = ["a", "b", "-", "ab", "aaaa", TOKEN.value.slice(0, 7), KEY.value, TOKEN.value];
  const maxLen = Math.max(...secrets.map((s) => s.value.length));
  const next = rng(0x9e3779b9);
  for (let round = 0; round < 400; round++) {
    let text = "";
    const n = Math.floor(next() * 30);
    for (let i = 0; i < n; i++) text += alphabet[Math.floor(next() * alphabet.length)];
    const whole = maskSecrets(text, secrets);
    assert.equal(whole, reference(text, secrets), `whole text ${JSON.stringify(text)}`);
    const m = createSecretMasker(secrets);
    let out = "";
    let i = 0;
    while (i < text.length) {
      const step = 1 + Math.floor(next() * 6);
      out += m.push(text.slice(i, i + step));
      assert.ok(m.held <= maxLen - 1, "holds back at most the longest secret's length - 1");
      i += step;
    }
    out += m.flush();
    assert.equal(out, whole, `chunked ${JSON.stringify(text)}`);
  }
});

Deno.test("vaultSecrets names each value by its key; duplicates mask under the first name", () => {
  const secrets = vaultSecrets({ A_TOKEN: "same-value-1", B_TOKEN: "same-value-1" });
  assert.deepEqual(secrets.map((s) => s.name), ["A_TOKEN", "B_TOKEN"]);
  assert.equal(maskSecrets("same-value-1", secrets), "[redacted:vault:A_TOKEN]");
});
