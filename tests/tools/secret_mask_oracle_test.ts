// The masker is no oracle for a secret's next character (attack round 25 secrets repro04): a
// model that prints a known public prefix followed by guesses must not learn from which guess
// comes back masked. A piece counts only with 8 characters past the public prefix.
import assert from "node:assert/strict";
import { FRAGMENT_LENGTH, maskSecrets, type Secret } from "../../lib/tools/secret_mask.ts";
import { publicPrefixLength } from "../../lib/tools/_public_prefix.ts";

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const RANDOM = "Qm7vX2kP9wLr4TzA8cYe1NbF6hJs3GdU5oKi0RqWxVnE";
const KEY: Secret = { kind: "api_key", name: "OPENAI_API_KEY", value: `sk-proj-${RANDOM}` };

/** Every text `guess(known, x)` for known = 0..7 correct characters past the prefix, x any. */
function guesses(prefix: string, secret: string, form: (t: string) => string) {
  const out: { known: number; x: string; text: string; right: boolean }[] = [];
  for (let known = 0; known < FRAGMENT_LENGTH; known++) {
    const head = prefix + secret.slice(prefix.length, prefix.length + known);
    for (const x of B64URL) {
      out.push({
        known,
        x,
        text: `guess=${form(head + x)};`,
        right: x === secret[prefix.length + known],
      });
    }
  }
  return out;
}

Deno.test("a public prefix and up to 7 right characters after it are never masked, whatever follows", () => {
  for (const g of guesses("sk-proj-", KEY.value, (t) => t)) {
    const masked = maskSecrets(g.text, [KEY]);
    if (g.known === FRAGMENT_LENGTH - 1 && g.right) {
      // Eight right characters past the prefix at once: a piece, masked (a 64^8 guess).
      assert.equal(masked, "guess=[redacted:api_key:OPENAI_API_KEY];");
    } else {
      assert.equal(masked, g.text, `known ${g.known}, guess ${g.x}`);
    }
  }
});

Deno.test("the oracle is closed through the hex, base64 and JSON escape forms too", () => {
  const hex = (t: string) =>
    Array.from(new TextEncoder().encode(t), (b) => b.toString(16).padStart(2, "0")).join("");
  const b64 = (t: string) => btoa(t).replace(/=+$/, "");
  const json = (t: string) =>
    Array.from(t, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
  for (const [name, form] of [["hex", hex], ["base64", b64], ["json", json]] as const) {
    const seen = new Map<number, Set<string>>();
    for (const g of guesses("sk-proj-", KEY.value, form)) {
      if (g.known === FRAGMENT_LENGTH - 1) continue;
      const masked = maskSecrets(g.text, [KEY]);
      // Whether it was masked must not depend on the guess: one outcome per number known.
      const outcomes = seen.get(g.known) ?? new Set<string>();
      outcomes.add(masked === g.text ? "clear" : "masked");
      seen.set(g.known, outcomes);
      assert.equal(outcomes.size, 1, `${name}: known ${g.known}, guess ${g.x} differs`);
    }
    for (const [known, outcomes] of seen) {
      assert.deepEqual([...outcomes], ["clear"], `${name}: known ${known}`);
    }
  }
});

Deno.test("a secret without a public prefix still has every piece of 8 characters masked", () => {
  const secret: Secret = { kind: "vault", name: "TOKEN", value: RANDOM };
  for (let k = 0; k + FRAGMENT_LENGTH <= RANDOM.length; k++) {
    const piece = RANDOM.slice(k, k + FRAGMENT_LENGTH);
    assert.equal(maskSecrets(`[${piece}]`, [secret]), "[[redacted:vault:TOKEN]]", piece);
  }
  // And the whole key with its prefix, and its prefix with 8 characters after it, are masked.
  assert.equal(maskSecrets(KEY.value, [KEY]), "[redacted:api_key:OPENAI_API_KEY]");
  assert.equal(maskSecrets(KEY.value.slice(0, 16), [KEY]), "[redacted:api_key:OPENAI_API_KEY]");
  assert.equal(maskSecrets(KEY.value.slice(-8), [KEY]), "[redacted:api_key:OPENAI_API_KEY]");
});

Deno.test("the public prefix is a known token prefix, leading words or a JWT header, never the whole", () => {
  assert.equal(publicPrefixLength(`sk-ant-api03-${RANDOM}`, 8), 13);
  assert.equal(publicPrefixLength(`sk-proj-${RANDOM}`, 8), 8);
  assert.equal(publicPrefixLength(`ghp_${RANDOM}`, 8), 4);
  assert.equal(publicPrefixLength(`github_pat_11ABCDEFG_${RANDOM}`, 8), 11);
  assert.equal(publicPrefixLength(`AKIA${RANDOM}`, 8), 4);
  assert.equal(publicPrefixLength(`tok_${RANDOM}`, 8), 4);
  assert.equal(publicPrefixLength(RANDOM, 8), 0);
  assert.equal(publicPrefixLength("9f8e7d6c5b4a3f2e1d0c", 8), 0);
  const jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig";
  assert.equal(publicPrefixLength(jwt, 8), jwt.indexOf(".") + 1);
  // Never so long that the value has no piece left: the last 8 characters always count.
  assert.equal(publicPrefixLength("my-db-password-x", 8), 8);
  assert.equal(publicPrefixLength("sk-proj-abc", 8), 3);
});
