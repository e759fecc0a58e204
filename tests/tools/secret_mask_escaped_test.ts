// A secret holding `"` or `\` reads escaped in JSON text (a tool call's arguments, a trace record,
// a request body): that form is masked too, whole, and the JSON stays valid (red team final9
// F32/F33: a vault value with quotes reached the resumed request whole inside write_file's
// arguments). Its fragments are not matched in the escaped form (a cut could split an escape);
// fragments without an escape are the plain value's and are masked as before.
import assert from "node:assert/strict";
import { createSecretMasker, maskSecrets, type Secret } from "../../lib/tools/secret_mask.ts";

const VALUE = 'q7Lm"Zx9\\Kp3!rT8vW2';
const SECRETS: Secret[] = [{ kind: "vault", name: "DB_PW", value: VALUE }];
const ESCAPED = JSON.stringify(VALUE).slice(1, -1);

Deno.test("a secret with a quote and a backslash is masked in JSON text, which stays valid JSON", () => {
  const args = JSON.stringify({ file_path: "a.env", content: `PW=${VALUE}\n` });
  assert.ok(args.includes(ESCAPED));
  const masked = maskSecrets(args, SECRETS);
  assert.ok(!masked.includes(ESCAPED), masked);
  const parsed = JSON.parse(masked) as { content: string };
  assert.equal(parsed.content, "PW=[redacted:vault:DB_PW]\n");
});

Deno.test("the escaped form is masked when a stream cuts it anywhere", () => {
  const text = `{"content":"x ${ESCAPED} y"}`;
  for (let cut = 1; cut < text.length; cut++) {
    const m = createSecretMasker(SECRETS);
    const out = m.push(text.slice(0, cut)) + m.push(text.slice(cut)) + m.flush();
    assert.equal(out, '{"content":"x [redacted:vault:DB_PW] y"}', `cut at ${cut}`);
  }
});

Deno.test("the plain value is still masked whole and by fragments", () => {
  assert.equal(maskSecrets(`pw ${VALUE}.`, SECRETS), "pw [redacted:vault:DB_PW].");
  assert.ok(!maskSecrets(`tail Zx9\\Kp3!rT8v end`, SECRETS).includes("Kp3!rT8v"));
});
