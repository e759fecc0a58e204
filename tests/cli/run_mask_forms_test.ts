// Masking of vault values as a user would choose them (attack round 31, through real `penguin run`s
// whose model prints the value):
// - s01b: a value given decomposed (NFD) and printed composed (NFC) reached the model, the trace
//   and the terminal whole: every Unicode normal form of a value is masked;
// - s01a: a passphrase's leading words (`Summer2024.`) counted as a token format's public prefix
//   and 16 of its 17 characters were left unmasked: a vault value has no such words;
// - s05b: any value starting `eyJ` had up to 64 characters taken for a JSON Web Token's header; a
//   header is public only when it decodes to one.
import assert from "node:assert/strict";
import { assertNoPieceOf, runPrintingVaultValue } from "../support/secrets.ts";
import { maskSecrets } from "../../lib/tools/secret_mask.ts";
import { publicPrefixLength } from "../../lib/tools/_public_prefix.ts";

const NFD = "Ze\u0301phyrine\u0301-Qu\u0308ark-9a\u0300";
const NFC = NFD.normalize("NFC");

Deno.test("penguin run: a vault value printed in another Unicode normal form is masked (s01b)", async () => {
  assert.notEqual(NFC, NFD);
  const seen = await runPrintingVaultValue(`printf '%s\\n' '${NFC}'`, NFD);
  for (const [where, text] of Object.entries(seen)) {
    assertNoPieceOf(text, [NFC, NFD], where);
  }
  assert.match(seen.next, /\[redacted:vault:DB_PW\]/);
});

Deno.test("penguin run: a passphrase's leading words are no public prefix (s01a)", async () => {
  const value = "Summer2024.Kx9pqZ";
  const seen = await runPrintingVaultValue(`printf '%s\\n' '${value.slice(0, 16)}'`, value);
  assert.equal(publicPrefixLength(value, 8, "vault"), 0);
  for (const [where, text] of Object.entries(seen)) assertNoPieceOf(text, [value], where, 8);
  assert.match(seen.next, /\[redacted:vault:DB_PW\]/);
});

Deno.test("a JWT header is public only when it decodes to one (s05b)", () => {
  const header = btoa('{"alg":"HS256","typ":"JWT"}').replace(/=+$/, "");
  const jwt = `${header}.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXNlY3JldA`;
  assert.equal(publicPrefixLength(jwt, 8, "vault"), header.length + 1);
  const fake = btoa('{"password":"hunter2hunter2","x":1}').replace(/=+$/, "") + ".tail";
  assert.ok(fake.startsWith("eyJ"));
  assert.equal(publicPrefixLength(fake, 8, "vault"), 0);
  const secret = { kind: "vault" as const, name: "BLOB", value: fake };
  assert.equal(maskSecrets(`x ${fake.slice(0, 20)} y`, [secret]), "x [redacted:vault:BLOB] y");
});

Deno.test("an API key keeps its format's leading words as public prefix", () => {
  assert.equal(publicPrefixLength("tok_live_Ab3dEf6hIj9kLm", 8, "api_key"), 9);
  assert.equal(publicPrefixLength("ghp_Ab3dEf6hIj9kLmNo", 8, "vault"), 4);
});

Deno.test("a short value's other normal form is masked whole only, not in pieces (round 32 v04)", () => {
  const key = "\u00c4rger-\u00d6l-1"; // 10 characters: masked only whole
  const nfd = key.normalize("NFD"); // 12 code units
  const secret = { kind: "api_key" as const, name: "K", value: key };
  assert.equal(maskSecrets(nfd, [secret]), "[redacted:api_key:K]");
  assert.equal(maskSecrets(`x${nfd.slice(0, 9)}`, [secret]), `x${nfd.slice(0, 9)}`);
  // A long one's other form: a piece counts from 16 code units, never from 8.
  const long = "\u00c4rger-\u00d6l-\u00fcber-Stra\u00dfe-99";
  const longNfd = long.normalize("NFD");
  const s2 = { kind: "vault" as const, name: "L", value: long };
  assert.equal(maskSecrets(`<${longNfd.slice(2, 12)}>`, [s2]), `<${longNfd.slice(2, 12)}>`);
  assert.equal(maskSecrets(`<${longNfd.slice(2, 18)}>`, [s2]), "<[redacted:vault:L]>");
});
