// A JSON encoder writes coloured text's ESC as `\u001b`, so a secret printed with `ESC[1m` every
// 4 characters reads `Ab<C\u001b[1md&E/…` in JSON text: its decoded view holds terminal
// sequences between the secret's characters, which must not separate them there either (red team
// final11 rows 35, 37, 53, 55). And a value escaped more than twice (a JSON string held in a JSON
// string held in a JSON string…) is decoded up to eight levels (rows 28–30, 52).
import assert from "node:assert/strict";
import {
  createSecretMasker,
  ESCAPE_LEVELS,
  maskSecrets,
  type Secret,
} from "../../lib/tools/secret_mask.ts";

const VALUE = 'Ab<Cd&E/f>Gh"Ij\\Kl<Mn&Op/Qr>St"Uv\\Wx<Yz&';
const SECRETS: Secret[] = [{ kind: "vault", name: "V", value: VALUE }];

/** `s` with ESC[1m every 4 characters (coloured text). */
function coloured(s: string): string {
  const parts: string[] = [];
  for (let i = 0; i < s.length; i += 4) parts.push(s.slice(i, i + 4));
  return parts.join("\x1b[1m");
}

/** The row-35 form: coloured `s`, JSON-encoded (ESC spelled `\u001b`). */
function escapedCsi(s: string): string {
  return JSON.stringify(coloured(s)).slice(1, -1);
}

/** The row-37 form: every non-alphanumeric character as `\uXXXX`, an OSC title spelled `\x1b]0;t\x07` between characters. */
function escapedOsc(s: string): string {
  return [...s].map((c) =>
    /[A-Za-z0-9]/.test(c) ? c : "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")
  ).join("\\x1b]0;t\\x07");
}

/** `s` JSON-encoded `levels` times. */
function nested(s: string, levels: number): string {
  let t = s;
  for (let i = 0; i < levels; i++) t = JSON.stringify(t);
  return t;
}

/** What a reader sees: string escapes undone (as often as they decode) and terminal sequences dropped. */
function shown(text: string): string {
  let t = text;
  for (let i = 0; i < 12; i++) {
    t = t.replace(/\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|["\\/bfnrt])/g, (_, e: string) => {
      if (e.length > 1) return String.fromCharCode(parseInt(e.slice(1), 16));
      return ({ b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" } as Record<string, string>)[e] ?? e;
    });
    // deno-lint-ignore no-control-regex
    t = t.replace(/\x1b\[[0-9;]*[A-Za-z]|\x1b\][^\x07]*\x07/g, "");
  }
  return t;
}

/** The 8-character runs of VALUE that `text` holds. */
function runsIn(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 8 <= VALUE.length; i++) {
    if (text.includes(VALUE.slice(i, i + 8))) out.push(VALUE.slice(i, i + 8));
  }
  return out;
}

/** `text` masked whole, and pushed one code unit at a time: both must agree. */
function maskBothWays(text: string): string {
  const whole = maskSecrets(text, SECRETS);
  const m = createSecretMasker(SECRETS);
  let out = "";
  for (const ch of text) out += m.push(ch);
  out += m.flush();
  assert.equal(out, whole, `stream and whole differ for ${text}`);
  return whole;
}

const CASES: { name: string; form: (s: string) => string }[] = [
  { name: "JSON-escaped CSI between every 4 characters", form: escapedCsi },
  { name: "\\x-escaped OSC title between \\u escapes", form: escapedOsc },
  { name: "three levels", form: (s) => nested(s, 3).slice(1, -1) },
  { name: "five levels", form: (s) => nested(s, 5).slice(1, -1) },
  { name: "escaped CSI, then two more levels", form: (s) => nested(coloured(s), 3).slice(1, -1) },
];

for (const c of CASES) {
  Deno.test(`a secret in the form "${c.name}" is masked, whole and streamed`, () => {
    const text = `out: ${c.form(VALUE)} end`;
    assert.deepEqual(runsIn(shown(text)).length, VALUE.length - 7);
    const masked = maskBothWays(text);
    assert.ok(masked.includes("[redacted:vault:V]"), masked);
    assert.deepEqual(runsIn(shown(masked)), [], masked);
  });

  Deno.test(`an 8-character piece of a secret in the form "${c.name}" is masked`, () => {
    for (let i = 0; i + 8 <= VALUE.length; i += 5) {
      const piece = VALUE.slice(i, i + 8);
      const text = `<${c.form(piece)}>`;
      const masked = maskBothWays(text);
      assert.deepEqual(runsIn(shown(masked)), [], `${text} -> ${masked}`);
      assert.ok(masked.includes("[redacted:vault:V]"), `${text} -> ${masked}`);
    }
  });
}

Deno.test("a secret escaped as many levels as are decoded is masked, and the JSON still parses", () => {
  // JSON-encoded 8 times: the value is escaped 8 levels deep.
  const text = nested(`pw=${VALUE}`, ESCAPE_LEVELS);
  const masked = maskBothWays(text);
  let t: unknown = masked;
  for (let i = 0; i < ESCAPE_LEVELS; i++) t = JSON.parse(t as string);
  assert.equal(t, "pw=[redacted:vault:V]");
  assert.equal(ESCAPE_LEVELS, 8);
});

Deno.test("a stream cut anywhere masks the escaped-CSI form the same", () => {
  const text = `{"log":"${escapedCsi(VALUE)}\\n"}`;
  const whole = maskSecrets(text, SECRETS);
  assert.deepEqual(runsIn(shown(whole)), [], whole);
  for (let cut = 1; cut < text.length; cut++) {
    const m = createSecretMasker(SECRETS);
    const out = m.push(text.slice(0, cut)) + m.push(text.slice(cut)) + m.flush();
    assert.equal(out, whole, `cut at ${cut}`);
  }
  assert.equal((JSON.parse(whole) as { log: string }).log.includes("[redacted:vault:V]"), true);
});
