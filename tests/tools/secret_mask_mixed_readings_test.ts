// A secret spelled with C escapes at one level and JavaScript escapes at the next (or the
// reverse, or any mix up to eight levels) is masked (red team final13c secimp rows 18-20, 29:
// each chain of decoded views kept one reading for all its levels, so a mixed spelling passed).
// A text whose escapes read too many ways at one level fails closed: each line of it holding a
// backslash is replaced by a marker naming why.
import assert from "node:assert/strict";
import {
  createSecretMasker,
  ESCAPE_READINGS_MARKER,
  maskSecrets,
  MAX_VIEWS_PER_LEVEL,
  type Secret,
} from "../../lib/tools/secret_mask.ts";
import { allReadings, readMixed, spellMixed } from "../support/mixed_escapes.ts";
import { assertNoPieceOf } from "../support/secrets.ts";

const VALUE = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";
const MARK = "[redacted:vault:ATK_V]";
const SECRETS: Secret[] = [{ kind: "vault", name: "ATK_V", value: VALUE }];

/** Asserts `masked` holds no 8-character piece of VALUE as it is nor read under `readings`. */
function assertHidden(masked: string, readings: string, where: string): void {
  assertNoPieceOf(masked, [VALUE], `${where} as it is`);
  assertNoPieceOf(readMixed(masked, readings), [VALUE], `${where} read ${readings}`);
}

/** `text` pushed through a streaming masker in chunks of `size`. */
function streamed(text: string, size: number): string {
  const m = createSecretMasker(SECRETS);
  let out = "";
  for (let i = 0; i < text.length; i += size) out += m.push(text.slice(i, i + size));
  return out + m.flush();
}

for (const readings of ["cj", "jc", "jcj", "cjc", "ccj", "jjc"]) {
  Deno.test(`secret mask: a value read ${readings} (mixed C and JavaScript levels) is masked`, () => {
    const text = spellMixed(VALUE, readings);
    assert.equal(readMixed(text, readings), VALUE, "the spelling reads as the value");
    const masked = maskSecrets(`A:${text}\n`, SECRETS);
    assert.equal(masked, `A:${MARK}\n`);
    assertHidden(masked, readings, "masked");
  });
}

Deno.test("secret mask: every sequence of JavaScript and C readings up to eight levels is covered", () => {
  for (let levels = 1; levels <= 8; levels++) {
    for (const readings of allReadings(levels)) {
      const text = spellMixed(VALUE, readings);
      assert.equal(readMixed(text, readings), VALUE, `${readings} reads as the value`);
      const masked = maskSecrets(text, SECRETS);
      assert.ok(
        masked === MARK || masked === ESCAPE_READINGS_MARKER,
        `${readings}: masked whole, got ${JSON.stringify(masked.slice(0, 60))}`,
      );
      assertHidden(masked, readings, readings);
    }
  }
});

Deno.test("secret mask: mixed readings are masked the same however the output is chunked", () => {
  for (const readings of ["cj", "jcj", "cjcjc", "jjjjjjjc"]) {
    const text = `before\nv=${spellMixed(VALUE, readings)}\nafter\n`;
    const whole = maskSecrets(text, SECRETS);
    for (const size of [1, 3, 7, 64]) {
      const out = streamed(text, size);
      assertHidden(out, readings, `${readings} in chunks of ${size}`);
      assert.ok(out.startsWith("before\n") && out.endsWith("\nafter\n"), out);
      if (readings.length <= 3) assert.equal(out, whole, `${readings} in chunks of ${size}`);
    }
  }
});

/**
 * A line whose escapes read a different way for every sequence of readings: `\e` escaped once
 * more in each word, so level d+1 reads one word's `\e` as ESC (C) or `e` (JavaScript).
 */
const DIVERGENT = Array.from({ length: 6 }, (_, d) => "\\".repeat(2 ** d) + "e").join(" ");

Deno.test("secret mask: past the views a level may hold, each line with a backslash is masked, with a marker naming why", () => {
  assert.ok(2 ** 6 > MAX_VIEWS_PER_LEVEL, "the line needs more views than the cap");
  const text = `plain line\n${DIVERGENT}\nv=${VALUE}\nx ${spellMixed(VALUE, "jcjc")} y\nlast`;
  const masked = maskSecrets(text, SECRETS);
  assert.equal(
    masked,
    `plain line\n${ESCAPE_READINGS_MARKER}\nv=${MARK}\n${ESCAPE_READINGS_MARKER}\nlast`,
  );
  assert.match(ESCAPE_READINGS_MARKER, /too_many_readings/);
  for (const size of [1, 5, 4096]) {
    const out = streamed(text, size);
    assertHidden(out, "jcjc", `chunks of ${size}`);
    assert.ok(out.startsWith("plain line\n") && out.endsWith("\nlast"), out);
    assert.ok(out.includes(ESCAPE_READINGS_MARKER), `chunks of ${size}: ${out}`);
  }
});

Deno.test("secret mask: ordinary text with stray backslashes stays within the views of a level", () => {
  const path = "C:\\Users\\qa\\data\\e2e\\new\\x1W\\u12 \\a \\cX";
  let text = path;
  for (let i = 0; i < 6; i++) text = JSON.stringify({ p: text, n: "\\q" });
  const masked = maskSecrets(`${text}\nv=${JSON.stringify(VALUE)}`, SECRETS);
  assert.equal(masked, `${text}\nv="${MARK}"`, "nothing but the value is masked");
});
