// Tool-call arguments are masked in their JSON strings and numbers. The numbers are found by a scan
// that skips strings without a regular expression: the one used before backtracked per character of
// a string and overflowed the stack on arguments holding a 10 MB string, and `trace show` of such a
// trace stopped with an internal error (attack round 25 bounded C8).
import assert from "node:assert/strict";
import { maskArguments } from "../../lib/agent/_mask_json.ts";
import { maskSecrets, type Secret } from "../../lib/tools/secret_mask.ts";

const secrets: Secret[] = [
  { kind: "vault", name: "PIN", value: "73019284615" },
  { kind: "vault", name: "TOKEN", value: "Qm7Zr2Kx9Wc4Lp8Tn3Hv6Bd1" },
];
const mask = (t: string) => maskSecrets(t, secrets);

Deno.test("maskArguments masks a secret spelled as a number, beside strings holding digits and escapes", () => {
  const args =
    '{"a":"7301 \\"q\\" 73019284615","n":73019284615,"m":-1.5e3,"k":[1,"2",73019284615]}';
  const out = JSON.parse(maskArguments(args, mask));
  assert.deepEqual(out, {
    a: '7301 "q" [redacted:vault:PIN]',
    n: "[redacted:vault:PIN]",
    m: -1500,
    k: [1, "2", "[redacted:vault:PIN]"],
  });
  assert.equal(maskArguments('{"n":12,"s":"x"}', mask), '{"n":12,"s":"x"}', "unchanged text kept");
});

Deno.test("maskArguments of a 12 MB string masks it without overflowing the stack", () => {
  const long = "x".repeat(12_000_000) + 'ab\\\\c\\"'.repeat(1000); // 12 MB, escapes at its end
  const args = `{"content":"${long}Qm7Zr2Kx9Wc4Lp8Tn3Hv6Bd1","n":73019284615}`;
  const out = JSON.parse(maskArguments(args, mask));
  assert.equal(out.n, "[redacted:vault:PIN]");
  assert.ok((out.content as string).endsWith("[redacted:vault:TOKEN]"));
});
