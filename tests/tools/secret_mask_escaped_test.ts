// A secret holding `"` or `\` reads escaped in JSON text (a tool call's arguments, a trace record,
// a request body): that form is masked too, whole, and the JSON stays valid (red team final9
// F32/F33: a vault value with quotes reached the resumed request whole inside write_file's
// arguments). So is its doubly escaped form (JSON inside a JSON string), and for a long value the
// pieces of both forms (red team final9 F6/F32/F33: every 8-character run of such a value holds
// an escape), cut only where a raw character's escape begins, so the JSON stays valid.
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

const PASSWORD = 'q7Lm"Zx9\\Kp3"Wt8\\Rv5"Hn2\\Yc4"';
const PW_SECRETS: Secret[] = [{ kind: "vault", name: "PW", value: PASSWORD }];

/** The 8-character runs of `value` that `text` holds. */
function runsIn(text: string, value: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 8 <= value.length; i++) {
    if (text.includes(value.slice(i, i + 8))) out.push(value.slice(i, i + 8));
  }
  return out;
}

/** Every piece of `value` of 8 characters or more, with where it starts. */
function* piecesOf(value: string): Generator<string> {
  for (let i = 0; i < value.length; i++) {
    for (let j = i + 8; j <= value.length; j++) yield value.slice(i, j);
  }
}

Deno.test("every piece of a quoted secret is masked in JSON text, which stays valid", () => {
  for (const piece of piecesOf(PASSWORD)) {
    const json = JSON.stringify({ status: `<${piece}>` });
    const masked = maskSecrets(json, PW_SECRETS);
    const decoded = (JSON.parse(masked) as { status: string }).status;
    assert.deepEqual(runsIn(decoded, PASSWORD), [], `${json} -> ${masked}`);
    assert.match(decoded, /\[redacted:vault:PW\]/);
  }
});

Deno.test("every piece of a quoted secret is masked in JSON held in a JSON string", () => {
  for (const piece of piecesOf(PASSWORD)) {
    const json = JSON.stringify({ arguments: JSON.stringify({ content: `k=${piece}` }) });
    const masked = maskSecrets(json, PW_SECRETS);
    const outer = JSON.parse(masked) as { arguments: string };
    const inner = (JSON.parse(outer.arguments) as { content: string }).content;
    assert.deepEqual(runsIn(inner, PASSWORD), [], `${json} -> ${masked}`);
    assert.match(inner, /\[redacted:vault:PW\]/);
  }
});

Deno.test("a secret with control characters is masked by pieces of its escaped forms", () => {
  const value = "ab\x01cd\x1bef\tgh\nij\u0000kl";
  const secrets: Secret[] = [{ kind: "vault", name: "CTL", value }];
  for (const piece of piecesOf(value)) {
    const once = JSON.stringify({ v: piece });
    const d1 = (JSON.parse(maskSecrets(once, secrets)) as { v: string }).v;
    assert.deepEqual(runsIn(d1, value), [], once);
    const twice = JSON.stringify({ o: once });
    const d2 = JSON.parse((JSON.parse(maskSecrets(twice, secrets)) as { o: string }).o) as {
      v: string;
    };
    assert.deepEqual(runsIn(d2.v, value), [], twice);
  }
});

Deno.test("a piece of an escaped form is masked when a stream cuts it anywhere", () => {
  const text = JSON.stringify({ o: JSON.stringify({ v: `x ${PASSWORD.slice(2, 20)} y` }) });
  const whole = maskSecrets(text, PW_SECRETS);
  assert.ok(whole.includes("[redacted:vault:PW]"), whole);
  for (let cut = 1; cut < text.length; cut++) {
    const m = createSecretMasker(PW_SECRETS);
    const out = m.push(text.slice(0, cut)) + m.push(text.slice(cut)) + m.flush();
    assert.equal(out, whole, `cut at ${cut}`);
  }
});
