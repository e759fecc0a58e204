// JSON encoders escape differently from JSON.stringify: Go writes `<` `>` `&` as `\u003c` `\u003e`
// `\u0026`, .NET writes upper-case hex (`\u003C`) and `"` as `\u0022`, Python's ensure_ascii writes
// non-ASCII as `\u00e4`, PHP writes `/` as `\/`, and any encoder may write every character as
// `\uXXXX`. A secret in any of these spellings (and doubly escaped) is masked, whole and by its
// 8-character runs, on the text as it decodes (red team final10 rows 32-38: only JSON.stringify's
// spelling was masked, so a Go-escaped vault value reached the trace and the model).
import assert from "node:assert/strict";
import { createSecretMasker, maskSecrets, type Secret } from "../../lib/tools/secret_mask.ts";

const GO_VALUE = "Tr0ub4dor&3xK<9pQ";
const ACCENTED = "Grüße-Köln-Zürich-Straße";
const MIXED = 'Ab<Cd&E/f>Gh"Ij\\Kl';
const EMOJI = "pw\u{1F511}key\u{1F512}lock99";
const SECRETS: Secret[] = [
  { kind: "vault", name: "GO", value: GO_VALUE },
  { kind: "vault", name: "ACC", value: ACCENTED },
  { kind: "vault", name: "MIX", value: MIXED },
  { kind: "vault", name: "EMO", value: EMOJI },
];

const hex4 = (c: number, upper = false) => {
  const h = c.toString(16).padStart(4, "0");
  return "\\u" + (upper ? h.toUpperCase() : h);
};
/** Go's encoding/json: JSON.stringify, then `<` `>` `&` as `\u003c` `\u003e` `\u0026`. */
const goEscape = (s: string) =>
  JSON.stringify(s).slice(1, -1).replace(/[<>&]/g, (c) => hex4(c.charCodeAt(0)));
/** .NET's default encoder: every non-alphanumeric character as upper-case `\u00XX`. */
const dotnetEscape = (s: string) =>
  [...s].map((c) => /[A-Za-z0-9]/.test(c) ? c : hex4(c.charCodeAt(0), true)).join("");
/** Python's json.dumps (ensure_ascii): every non-ASCII code unit as `\uXXXX`. */
const pythonEscape = (s: string) =>
  JSON.stringify(s).slice(1, -1).replace(/[\u00a0-\uffff]/g, (c) => hex4(c.charCodeAt(0)));
/** Every code unit as `\uXXXX` (surrogate pairs as two escapes). */
const allEscape = (s: string) =>
  Array.from({ length: s.length }, (_, i) => hex4(s.charCodeAt(i))).join("");
/** PHP's json_encode: `/` as `\/`. */
const phpEscape = (s: string) => JSON.stringify(s).slice(1, -1).replace(/\//g, "\\/");
/** Every non-alphanumeric ASCII character as `\xHH` (C, Python repr, shell `$'…'`). */
const xEscape = (s: string) =>
  [...s].map((c) =>
    /[A-Za-z0-9]/.test(c) || c.charCodeAt(0) > 0x7f
      ? c
      : "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0")
  ).join("");
/** Every code point as `\u{X}` (JavaScript, Rust, Swift). */
const braceEscape = (s: string) =>
  [...s].map((c) => `\\u{${c.codePointAt(0)!.toString(16)}}`).join("");
/** The text inside another JSON string. */
const again = (s: string) => JSON.stringify(s).slice(1, -1);

/** Undo JSON string escapes (and `\\xHH`, `\\u{X}`) in `s`, `levels` times (as a reader of the output would). */
function decode(s: string, levels: number): string {
  let t = s;
  for (let i = 0; i < levels; i++) {
    t = t.replace(
      /\\(u[0-9a-fA-F]{4}|u\{[0-9a-fA-F]{1,6}\}|x[0-9a-fA-F]{2}|["\\/bfnrt])/g,
      (_, e: string) =>
        e[0] === "u" && e[1] === "{"
          ? String.fromCodePoint(parseInt(e.slice(2, -1), 16))
          : e[0] === "u" || e[0] === "x"
          ? String.fromCharCode(parseInt(e.slice(1), 16))
          : ({ b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" } as Record<string, string>)[e] ?? e,
    );
  }
  return t;
}

/** The 8-code-unit runs of `value` that `text` holds once decoded. */
function runsIn(text: string, value: string, levels: number): string[] {
  const t = decode(text, levels);
  const out: string[] = [];
  for (let i = 0; i + 8 <= value.length; i++) {
    if (t.includes(value.slice(i, i + 8))) out.push(value.slice(i, i + 8));
  }
  return out;
}

const CASES: { name: string; value: string; key: string; spell: (s: string) => string }[] = [
  { name: "Go (\\u003c \\u0026)", value: GO_VALUE, key: "GO", spell: goEscape },
  { name: ".NET (upper-case hex, \\u0022)", value: MIXED, key: "MIX", spell: dotnetEscape },
  { name: "Python ensure_ascii (\\u00fc)", value: ACCENTED, key: "ACC", spell: pythonEscape },
  { name: "every character as \\uXXXX", value: MIXED, key: "MIX", spell: allEscape },
  { name: "PHP (\\/)", value: MIXED, key: "MIX", spell: phpEscape },
  { name: "a surrogate pair's escapes", value: EMOJI, key: "EMO", spell: pythonEscape },
  { name: "\\xHH", value: MIXED, key: "MIX", spell: xEscape },
  { name: "\\u{X}", value: EMOJI, key: "EMO", spell: braceEscape },
  { name: "Go, doubly escaped", value: GO_VALUE, key: "GO", spell: (s) => again(goEscape(s)) },
  { name: ".NET, doubly escaped", value: MIXED, key: "MIX", spell: (s) => again(dotnetEscape(s)) },
];

for (const c of CASES) {
  const levels = c.name.includes("doubly") ? 2 : 1;

  Deno.test(`a secret spelled by ${c.name} is masked whole`, () => {
    const text = `{"pw": "${c.spell(c.value)}", "n": 1}`;
    const masked = maskSecrets(text, SECRETS);
    assert.deepEqual(runsIn(masked, c.value, levels), [], masked);
    assert.equal(masked, `{"pw": "[redacted:vault:${c.key}]", "n": 1}`);
  });

  Deno.test(`every 8-character run of a secret spelled by ${c.name} is masked`, () => {
    for (let i = 0; i + 8 <= c.value.length; i++) {
      const piece = c.value.slice(i, i + 8);
      if (piece.charCodeAt(0) >= 0xdc00 && piece.charCodeAt(0) < 0xe000) continue; // half a pair
      const text = `x=${c.spell(piece)};`;
      const masked = maskSecrets(text, SECRETS);
      assert.deepEqual(runsIn(masked, c.value, levels), [], `${text} -> ${masked}`);
      assert.ok(masked.includes(`[redacted:vault:${c.key}]`), masked);
      // Whole escapes are masked: what is left still decodes.
      assert.ok(masked.startsWith("x=") && masked.endsWith(";"), masked);
      assert.doesNotMatch(masked, /\\(u[0-9a-fA-F]{0,3})?\[redacted/, masked);
    }
  });

  Deno.test(`a secret spelled by ${c.name} is masked when a stream cuts it anywhere`, () => {
    const text = `out: ${c.spell(c.value)} end`;
    const whole = maskSecrets(text, SECRETS);
    assert.equal(whole, `out: [redacted:vault:${c.key}] end`);
    for (let cut = 1; cut < text.length; cut++) {
      const m = createSecretMasker(SECRETS);
      const out = m.push(text.slice(0, cut)) + m.push(text.slice(cut)) + m.flush();
      assert.equal(out, whole, `cut at ${cut}`);
    }
  });
}

Deno.test("a stream cut inside an escape holds the escape back, then masks the run", () => {
  // `&3xK<9pQ`, an 8-character suffix, Go-escaped; cut between `\u00` and `26`.
  const text = `v=${goEscape(GO_VALUE.slice(-8))}!`;
  const cut = text.indexOf("\\u0026") + 4;
  const m = createSecretMasker(SECRETS);
  const first = m.push(text.slice(0, cut));
  assert.ok(!first.includes("\\u00"), first);
  const out = first + m.push(text.slice(cut)) + m.flush();
  assert.equal(out, "v=[redacted:vault:GO]!");
});

Deno.test("text without a real escape is left alone", () => {
  const text = "C:\\Users\\x\\q Tr0ub4d \\u12 \\x";
  assert.equal(maskSecrets(text, SECRETS), text);
});
