// Escapes deeper than the levels the masker decodes (red team: a secret escaped nine levels deep
// was read only eight levels down and came out as escapes). When the last level's view still
// decodes, the lines that hold an escape are masked whole with their own marker; one level less
// is still matched as the secret, and ordinary deep-ish text is left alone.
import assert from "node:assert/strict";
import {
  createSecretMasker,
  ESCAPE_DEPTH_MARKER,
  ESCAPE_LEVELS,
  maskSecrets,
  type Secret,
} from "../../lib/tools/secret_mask.ts";

const VALUE = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";
const MARK = "[redacted:vault:DEEP]";
const SECRETS: Secret[] = [{ kind: "vault", name: "DEEP", value: VALUE }];

/** `s` escaped `levels` levels deep: each character `\x5c` … `x5c` `xHH`, one `x5c` a level. */
function deep(s: string, levels: number): string {
  return [...s].map((c) => "\\" + "x5c".repeat(levels - 1) + "x" + c.charCodeAt(0).toString(16))
    .join("");
}

/** `s` read `levels` times as C reads `\xHH`: what a reader that far down gets. */
function decode(s: string, levels: number): string {
  let t = s;
  for (let i = 0; i < levels; i++) {
    t = t.replace(/\\x([0-9a-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
  }
  return t;
}

/**
 * Streamed, a line's start may be decided before its escapes arrive (the masked output depends on
 * where the pieces fell, as the module doc says): what is left of the line is masked, and no
 * reading of what came out holds the value's escapes or a piece of it.
 */
function assertStreamedMasked(text: string, size: number, spelled: string): void {
  const out = streamed(text, size);
  assert.ok(out.includes(`${ESCAPE_DEPTH_MARKER}\n`), `pieces of ${size}: ${out}`);
  assert.ok(!out.includes(spelled.slice(0, 40)), `pieces of ${size}: ${out}`);
  for (let i = 0; i + 8 <= VALUE.length; i++) {
    assert.ok(!decode(out, ESCAPE_LEVELS + 2).includes(VALUE.slice(i, i + 8)), `pieces of ${size}`);
  }
}

function streamed(text: string, size: number): string {
  const m = createSecretMasker(SECRETS);
  let out = "";
  for (let i = 0; i < text.length; i += size) out += m.push(text.slice(i, i + size));
  return out + m.flush();
}

Deno.test("secret mask: a value escaped one level past the last is masked with the depth marker", () => {
  const spelled = deep(VALUE, ESCAPE_LEVELS + 1);
  assert.equal(decode(spelled, ESCAPE_LEVELS + 1), VALUE);
  const text = `before\nv=${spelled};\nafter ${VALUE.slice(0, 4)}\n`;
  const want = `before\n${ESCAPE_DEPTH_MARKER}\nafter ${VALUE.slice(0, 4)}\n`;
  assert.equal(maskSecrets(text, SECRETS), want);
  for (const size of [1, 2, 3, 7, 64]) assertStreamedMasked(text, size, spelled);
  assert.equal(streamed(text, text.length), want);
});

Deno.test("secret mask: an 8-character piece escaped ten levels deep is masked with the depth marker", () => {
  const spelled = deep(VALUE.slice(5, 13), ESCAPE_LEVELS + 2);
  const text = `x ${spelled} y\n`;
  assert.equal(maskSecrets(text, SECRETS), `${ESCAPE_DEPTH_MARKER}\n`);
  for (const size of [1, 5, 64]) assertStreamedMasked(text, size, spelled);
});

Deno.test("secret mask: a value escaped exactly the last level deep is still masked as itself", () => {
  const text = `v=${deep(VALUE, ESCAPE_LEVELS)};\n`;
  assert.equal(maskSecrets(text, SECRETS), `v=${MARK};\n`);
  for (const size of [1, 3, 64]) {
    assert.equal(streamed(text, size), `v=${MARK};\n`, `pieces of ${size}`);
  }
});

Deno.test("secret mask: escaped text that stops decoding within the levels is left as it is", () => {
  // Seven levels of JSON of a Windows path and an escaped word: the last level no longer decodes.
  let s = "C:\\Users\\x \\u00e9t\\u00e9 \\n";
  for (let i = 0; i < 6; i++) s = JSON.stringify(s).slice(1, -1);
  const text = `${s}\n`;
  assert.equal(maskSecrets(text, SECRETS), text);
  assert.equal(streamed(text, 7), text);
});

Deno.test("secret mask: a value URL-encoded one level past the last is masked with the depth marker", () => {
  // `%2551` is `%51` a level down: each `25` one level more.
  const spelled = [...VALUE].map((c) =>
    "%" + "25".repeat(ESCAPE_LEVELS) + c.charCodeAt(0).toString(16)
  ).join("");
  const text = `q=${spelled}\n`;
  assert.equal(maskSecrets(text, SECRETS), `${ESCAPE_DEPTH_MARKER}\n`);
  for (const size of [1, 7, 64]) {
    assert.ok(streamed(text, size).endsWith(`${ESCAPE_DEPTH_MARKER}\n`), `pieces of ${size}`);
    assert.ok(!streamed(text, size).includes("%2525"), `pieces of ${size}`);
  }
  const once = [...VALUE].map((c) =>
    "%" + "25".repeat(ESCAPE_LEVELS - 1) + c.charCodeAt(0).toString(16)
  ).join("");
  assert.equal(maskSecrets(`q=${once}\n`, SECRETS), `q=${MARK}\n`);
});
