// A text longer than one slice (MASK_SLICE_CHARS) is masked a slice at a time: the result is the
// one the streaming masker gives for the whole text at once, whatever a slice's edge cuts (a
// secret, a long secret's fragment, a surrogate pair, a hidden character inside a secret).
import assert from "node:assert/strict";
import {
  createSecretMasker,
  MASK_SLICE_CHARS,
  maskSecrets,
  type Secret,
} from "../../lib/tools/secret_mask.ts";

const TOKEN: Secret = { kind: "vault", name: "TOKEN", value: "tok-9f8e7d6c5b4a" };
const LONG: Secret = {
  kind: "api_key",
  name: "OPENAI_API_KEY",
  value: "sk-proj-Zx9QwErTyUiOpAsDfGhJkLzXcVbNm1234567890",
};
const SECRETS = [TOKEN, LONG];

/** The whole text through one streaming masker: the reference. */
function whole(text: string): string {
  const m = createSecretMasker(SECRETS);
  return m.push(text) + m.flush();
}

/** `text` placed so that it starts `before` characters ahead of the edge of slice `n`. */
function across(text: string, before: number, n = 1): string {
  const pad = "x".repeat(n * MASK_SLICE_CHARS - before);
  return `${pad}${text}${"y".repeat(MASK_SLICE_CHARS)}`;
}

Deno.test("a secret cut by a slice's edge is masked, wherever the edge falls in it", () => {
  for (let before = 0; before <= TOKEN.value.length; before++) {
    const text = across(`${TOKEN.value} and ${TOKEN.value}`, before);
    const out = maskSecrets(text, SECRETS);
    assert.equal(out.includes("tok-9f8e"), false, `edge ${before} into the secret`);
    assert.equal(out, whole(text), `edge ${before}`);
  }
});

Deno.test("a long secret's fragment cut by a slice's edge is masked", () => {
  const fragment = LONG.value.slice(5, 30);
  for (const before of [1, 7, 12, 24]) {
    const text = across(`key: ${fragment}.`, before, 2);
    const out = maskSecrets(text, SECRETS);
    assert.equal(out.includes(fragment.slice(0, 12)), false, `edge ${before}`);
    assert.equal(out, whole(text), `edge ${before}`);
  }
});

Deno.test("a surrogate pair on a slice's edge stays whole, the secrets after it masked", () => {
  const text = across(`🐧${TOKEN.value}`, 1);
  const out = maskSecrets(text, SECRETS);
  assert.ok(out.includes("🐧"));
  assert.equal(out.includes("tok-9f8e"), false);
  assert.equal(out, whole(text));
});

Deno.test("a hidden character inside a secret on a slice's edge does not keep it from being masked", () => {
  const hidden = `${TOKEN.value.slice(0, 6)}\u200b${TOKEN.value.slice(6)}`;
  for (const before of [3, 6, 7, 9]) {
    const text = across(hidden, before);
    const out = maskSecrets(text, SECRETS);
    assert.equal(out.includes("9f8e7d"), false, `edge ${before}`);
    assert.equal(out, whole(text), `edge ${before}`);
  }
});

Deno.test("a long text without a secret comes back as it is", () => {
  const text = across("nothing to see", 4, 3);
  assert.equal(maskSecrets(text, SECRETS), text);
});

Deno.test("a text of three slices that is one secret over and over is masked throughout", () => {
  const text = `${TOKEN.value} `.repeat(Math.ceil(3 * MASK_SLICE_CHARS / 17));
  const out = maskSecrets(text, SECRETS);
  assert.equal(out, text.replaceAll(TOKEN.value, "[redacted:vault:TOKEN]"));
});
