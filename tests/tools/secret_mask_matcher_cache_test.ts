// Masking many short strings with one set of secrets (a foreign import or a display masks every
// string of every record): the matcher — the secrets' window table and its filter — is made once
// for the same secrets, not once per string (an 8 MB Claude import with one vault value took 81 s
// instead of 6 s). Measured as work: the matcher reads each secret's value for every window of it
// (about its length), the cache once per call. An array added to later still masks what it holds.
import assert from "node:assert/strict";
import { countedSecret } from "../support/counted_secret.ts";
import { maskSecrets, type Secret } from "../../lib/tools/secret_mask.ts";

const V = "Qm7Zr2Kx9Wc4Lp8Tn3Hv6Bd1Fs5Gj0Yb";

Deno.test("masking 2000 short strings with the same secrets makes their matcher once", () => {
  const { secret, reads } = countedSecret("TOK", V);
  const secrets = [secret];
  let out = "";
  for (let i = 0; i < 2000; i++) {
    out = maskSecrets(`line ${i}: ${V.slice(3, 15)} and more`, secrets);
  }
  assert.equal(out, "line 1999: [redacted:vault:TOK] and more");
  assert.ok(reads() < 2000 * 3, `the secret was read ${reads()} times`);
});

Deno.test("a secret added to the same array later is masked too", () => {
  const secrets: Secret[] = [{ kind: "vault", name: "A", value: "Aa1Bb2Cc3Dd4Ee5Ff6Gg" }];
  assert.equal(maskSecrets("Aa1Bb2Cc3Dd4Ee5Ff6Gg", secrets), "[redacted:vault:A]");
  secrets.push({ kind: "mcp", name: "s.env", value: "Hh7Ii8Jj9Kk0Ll1Mm2Nn" });
  assert.equal(maskSecrets("Hh7Ii8Jj9Kk0Ll1Mm2Nn", secrets), "[redacted:mcp:s.env]");
});

Deno.test("secrets equal in content share a matcher; other secrets get their own", () => {
  const { secret, reads } = countedSecret("TOK", V);
  for (let i = 0; i < 500; i++) maskSecrets(`x ${V} y`, [secret]);
  assert.ok(reads() < 500 * 3, `the secret was read ${reads()} times`);
  const other: Secret = { kind: "vault", name: "OTHER", value: "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss" };
  assert.equal(maskSecrets(`a ${other.value} ${V}`, [other]), `a [redacted:vault:OTHER] ${V}`);
  assert.equal(maskSecrets(`a ${V}`, [secret]), "a [redacted:vault:TOK]");
});
