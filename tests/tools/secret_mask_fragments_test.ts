// The fragment rule of lib/tools/secret_mask.ts on text made of near-misses (red team F6-2): every
// piece of 8+ characters of a long secret is masked wherever it starts and however long it is,
// shorter pieces survive, adjacent and overlapping pieces are matched leftmost-longest, and the
// whole-text path (no hidden characters) masks like the streaming masker cut at every position.
import assert from "node:assert/strict";
import {
  createSecretMasker,
  FRAGMENT_LENGTH,
  maskSecrets,
  type Secret,
  secretMarker,
} from "../../lib/tools/secret_mask.ts";

const VALUE = "Vq7sK2pLx9Zr4TmW8nBy3HcJ6dFg5";
const SECRET: Secret = { kind: "vault", name: "TOKEN", value: VALUE };
const MARK = secretMarker(SECRET);

/** Leftmost-longest pieces of 8+ characters of VALUE in `text`, by brute force. */
function reference(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    let n = 0;
    for (let len = Math.min(VALUE.length, text.length - i); len >= FRAGMENT_LENGTH; len--) {
      if (VALUE.includes(text.slice(i, i + len))) {
        n = len;
        break;
      }
    }
    if (n > 0) {
      out += MARK;
      i += n;
    } else {
      out += text[i];
      i++;
    }
  }
  return out;
}

/** Every 8-character window of VALUE that `text` holds. */
function survivingWindows(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + FRAGMENT_LENGTH <= VALUE.length; i++) {
    const w = VALUE.slice(i, i + FRAGMENT_LENGTH);
    if (text.includes(w)) out.push(w);
  }
  return out;
}

/** `text` through the streaming masker in two chunks cut at `at`. */
function maskedInTwo(text: string, at: number): string {
  const m = createSecretMasker([SECRET]);
  return m.push(text.slice(0, at)) + m.push(text.slice(at)) + m.flush();
}

Deno.test("every piece of the secret, at every start and of every length, masks by the rule", () => {
  for (let start = 0; start < VALUE.length; start++) {
    for (let end = start + 1; end <= VALUE.length; end++) {
      const piece = VALUE.slice(start, end);
      const text = `<${piece}>`;
      const want = end - start >= FRAGMENT_LENGTH ? `<${MARK}>` : text;
      assert.equal(maskSecrets(text, [SECRET]), want, piece);
      // At the very start and end of the text too.
      assert.equal(maskSecrets(piece, [SECRET]), want.slice(1, -1), piece);
    }
  }
});

Deno.test("near-miss text: adjacent and overlapping pieces mask leftmost-longest, no window survives", () => {
  // 7- to 15-character pieces, some joined with no separator (two pieces that overlap in VALUE,
  // or that run on into one longer piece), as the near-miss import of F6-2 holds.
  const parts: string[] = [];
  for (let j = 0; j < 400; j++) {
    const k = 7 + (j % 9);
    const s0 = (j * 7) % (VALUE.length - k);
    parts.push(VALUE.slice(s0, s0 + k) + ["", " ", "", "-", "\n"][j % 5]);
  }
  const text = parts.join("") + ` ${VALUE.slice(5, 12)} `;
  const masked = maskSecrets(text, [SECRET]);
  assert.equal(masked, reference(text));
  assert.deepEqual(survivingWindows(masked), []);
  // A 7-character piece standing alone is left as it is.
  assert.ok(masked.endsWith(` ${VALUE.slice(5, 12)} `));
  assert.ok(masked.includes(MARK));
});

Deno.test("near-miss text cut in two at every position masks like the whole text", () => {
  const text = [
    VALUE.slice(0, 7),
    VALUE.slice(3, 15),
    VALUE.slice(10, 18) + VALUE.slice(17, 29),
    VALUE.slice(20, 27),
    VALUE,
    VALUE.slice(1, 9),
  ].join(" ");
  const whole = maskSecrets(text, [SECRET]);
  assert.equal(whole, reference(text));
  for (let at = 0; at <= text.length; at++) {
    assert.equal(maskedInTwo(text, at), whole, `cut at ${at}`);
  }
});

Deno.test("a short secret beside a long one: each found where it starts, in plain and streamed text", () => {
  const short: Secret = { kind: "api_key", name: "K", value: "s3cr3t!" };
  const text = `a s3cr3t! ${VALUE.slice(2, 12)}s3cr3t!${VALUE.slice(0, 7)}s3cr3 ${VALUE}`;
  const want = `a ${secretMarker(short)} ${MARK}${secretMarker(short)}${
    VALUE.slice(0, 7)
  }s3cr3 ${MARK}`;
  assert.equal(maskSecrets(text, [SECRET, short]), want);
  for (let at = 0; at <= text.length; at++) {
    const m = createSecretMasker([SECRET, short]);
    assert.equal(
      m.push(text.slice(0, at)) + m.push(text.slice(at)) + m.flush(),
      want,
      `cut at ${at}`,
    );
  }
});

Deno.test("a text shorter than any match, or with no secret, comes back as it is", () => {
  assert.equal(maskSecrets(VALUE.slice(0, 7), [SECRET]), VALUE.slice(0, 7));
  assert.equal(maskSecrets(VALUE, []), VALUE);
  // Hidden characters between pieces still take the masker's path: the piece is masked whole.
  assert.equal(maskSecrets(`${VALUE.slice(0, 4)}\u200b${VALUE.slice(4, 9)}`, [SECRET]), MARK);
});
