import assert from "node:assert/strict";
import {
  createSecretMasker,
  FRAGMENT_LENGTH,
  FRAGMENT_SECRET_LENGTH,
  maskSecrets,
  MAX_HELD_CONTROLS,
  MIN_SECRET_LENGTH,
  type Secret,
  secretMarker,
  vaultSecrets,
} from "../../lib/tools/secret_mask.ts";
import { publicPrefixLength } from "../../lib/tools/_public_prefix.ts";

const TOKEN: Secret = { kind: "vault", name: "MY_TOKEN", value: "tok-9f8e7d6c5b4a" };
const KEY: Secret = { kind: "api_key", name: "OPENAI_API_KEY", value: "sk-proj-Zx9QwErTyUiOp" };

/**
 * Leftmost-longest replacement, one position at a time, by brute force: the reference the
 * masker must equal. A value of 12+ characters matches by any run of 8+ of its characters
 * that ends 8 or more characters past the value's public prefix (lib/tools/_public_prefix.ts).
 */
function reference(text: string, secrets: readonly Secret[]): string {
  const seen = new Set<string>();
  const usable = secrets.filter((s) => {
    if (s.value.length < MIN_SECRET_LENGTH || seen.has(s.value)) return false;
    seen.add(s.value);
    return true;
  }).sort((a, b) => b.value.length - a.value.length);
  let out = "";
  let i = 0;
  while (i < text.length) {
    let best: { s: Secret; n: number } | undefined;
    for (const s of usable) {
      let n = 0;
      if (s.value.length >= FRAGMENT_SECRET_LENGTH) {
        // A piece counts when it ends 8 characters or more past the public prefix.
        const reach = publicPrefixLength(s.value, FRAGMENT_LENGTH, s.kind) + FRAGMENT_LENGTH;
        for (let len = Math.min(s.value.length, text.length - i); len >= FRAGMENT_LENGTH; len--) {
          const piece = text.slice(i, i + len);
          let o = s.value.indexOf(piece);
          while (o >= 0 && o + len < reach) o = s.value.indexOf(piece, o + 1);
          if (o >= 0) {
            n = len;
            break;
          }
        }
      } else if (text.startsWith(s.value, i)) n = s.value.length;
      if (n > 0 && (best === undefined || n > best.n)) best = { s, n };
    }
    if (best) {
      out += secretMarker(best.s);
      i += best.n;
    } else {
      out += text[i];
      i++;
    }
  }
  return out;
}

/** A deterministic pseudo-random generator (xorshift32). */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
}

Deno.test("maskSecrets replaces vault values and API keys by named markers", () => {
  const text = `token=${TOKEN.value}\nkey: ${KEY.value}; again ${TOKEN.value}`;
  assert.equal(
    maskSecrets(text, [TOKEN, KEY]),
    "token=[redacted:vault:MY_TOKEN]\nkey: [redacted:api_key:OPENAI_API_KEY]; again [redacted:vault:MY_TOKEN]",
  );
});

Deno.test("values shorter than the minimum length are never masked", () => {
  const short: Secret = { kind: "vault", name: "PIN", value: "12345" };
  assert.equal(MIN_SECRET_LENGTH, 6);
  assert.equal(maskSecrets("pin 12345", [short]), "pin 12345");
  assert.equal(createSecretMasker([short]).active, false);
});

Deno.test("a longer secret wins over a shorter one it contains, even when split across chunks", () => {
  const outer: Secret = { kind: "vault", name: "OUTER", value: "prefix-inner1-suffix" };
  const inner: Secret = { kind: "vault", name: "INNER", value: "inner1" };
  const m = createSecretMasker([inner, outer]);
  const out = m.push("a prefix-inner1") + m.push("-suf") + m.push("fix b") + m.flush();
  assert.equal(out, "a [redacted:vault:OUTER] b");
  const m2 = createSecretMasker([inner, outer]);
  // "-inner1-suffix" is 14 characters of OUTER reaching its end: masked as a piece of it, which
  // is longer. ("prefix-inner1-" is only its public prefix: a guess at it proves nothing.)
  const out2 = m2.push("a no-inner1") + m2.push("-suffix") + m2.flush();
  assert.equal(out2, "a no[redacted:vault:OUTER]");
  // Alone, "inner1" is too short to be a piece of OUTER: INNER's own marker.
  const m3 = createSecretMasker([inner, outer]);
  const out3 = m3.push("x inner1") + m3.push(" y") + m3.flush();
  assert.equal(out3, "x [redacted:vault:INNER] y");
});

Deno.test("the streaming masker finds a secret split over two and three chunks and holds back only a possible prefix", () => {
  const m = createSecretMasker([TOKEN]);
  const v = TOKEN.value;
  assert.equal(m.push(`token=${v.slice(0, 5)}`), "token=");
  assert.equal(m.held, 5);
  assert.equal(m.push(v.slice(5, 9)), "");
  // "e" could begin a piece of the secret ("e7d6c5b4"): it waits for more text.
  assert.equal(m.push(`${v.slice(9)} done`), "[redacted:vault:MY_TOKEN] don");
  assert.equal(m.held, 1);
  assert.equal(m.push("!"), "e!");
  assert.equal(m.held, 0);
  // A tail that cannot start the secret or a piece of it is released at once.
  assert.equal(m.push("Password: "), "Password: ");
  assert.equal(m.flush(), "");
  // A held tail that never completes comes out unchanged at the end.
  assert.equal(m.push("x tok-9f"), "x ");
  assert.equal(m.flush(), "tok-9f");
});

/** How {@linkcode assertChunkingMasksLikeWhole} draws its texts and chunks. */
interface ChunkingDraw {
  seed: number;
  rounds: number;
  /** Pieces of the alphabet a text holds, at most (exclusive). */
  maxPieces: number;
  /** Length of a chunk, at most. */
  maxStep: number;
}

/**
 * Seeded random texts from `alphabet`: each masks like {@linkcode reference},
 * and pushed in random chunks masks like the whole, never holding back as
 * much as the longest secret.
 */
function assertChunkingMasksLikeWhole(
  secrets: Secret[],
  alphabet: string[],
  draw: ChunkingDraw,
): void {
  const maxLen = Math.max(...secrets.map((s) => s.value.length));
  const next = rng(draw.seed);
  for (let round = 0; round < draw.rounds; round++) {
    let text = "";
    const n = Math.floor(next() * draw.maxPieces);
    for (let i = 0; i < n; i++) text += alphabet[Math.floor(next() * alphabet.length)];
    const whole = maskSecrets(text, secrets);
    assert.equal(whole, reference(text, secrets), `whole text ${JSON.stringify(text)}`);
    const m = createSecretMasker(secrets);
    let out = "";
    let i = 0;
    while (i < text.length) {
      const step = 1 + Math.floor(next() * draw.maxStep);
      out += m.push(text.slice(i, i + step));
      assert.ok(m.held <= maxLen - 1, "holds back less than the longest secret's length");
      i += step;
    }
    out += m.flush();
    assert.equal(out, whole, `chunked ${JSON.stringify(text)}`);
  }
}

Deno.test("any chunking of a text masks exactly like the whole text (randomised, seeded)", () => {
  const secrets: Secret[] = [
    TOKEN,
    KEY,
    { kind: "vault", name: "AAA", value: "aaaaab" },
    { kind: "vault", name: "AB", value: "abab-abab" },
    { kind: "api_key", name: "g", value: "aaaaabab-abab" },
    { kind: "vault", name: "SHORT", value: "ab" },
  ];
  const alphabet = ["a", "b", "-", "ab", "aaaa", TOKEN.value.slice(0, 7), KEY.value, TOKEN.value];
  assertChunkingMasksLikeWhole(secrets, alphabet, {
    seed: 0x9e3779b9,
    rounds: 400,
    maxPieces: 30,
    maxStep: 6,
  });
});

Deno.test("vaultSecrets names each value by its key; duplicates mask under the first name", () => {
  const secrets = vaultSecrets({ A_TOKEN: "same-value-1", B_TOKEN: "same-value-1" });
  assert.deepEqual(secrets.map((s) => s.name), ["A_TOKEN", "B_TOKEN"]);
  assert.equal(maskSecrets("same-value-1", secrets), "[redacted:vault:A_TOKEN]");
});

Deno.test("a piece of 8+ characters of a 12+ character secret is masked: prefix, suffix, middle", () => {
  const secret: Secret = { kind: "vault", name: "API_TOKEN", value: "7c3a91e2d4b85f60e1aa" };
  const v = secret.value;
  const marker = "[redacted:vault:API_TOKEN]";
  assert.equal(maskSecrets(`p=${v.slice(0, 12)}.`, [secret]), `p=${marker}.`);
  assert.equal(maskSecrets(`s=${v.slice(-16)}.`, [secret]), `s=${marker}.`);
  assert.equal(maskSecrets(`m=${v.slice(5, 13)}.`, [secret]), `m=${marker}.`);
  // Seven characters are not a piece; the masked run stops where the secret stops agreeing.
  assert.equal(maskSecrets(`${v.slice(0, 7)}`, [secret]), v.slice(0, 7));
  assert.equal(maskSecrets(`x${v.slice(2, 11)}ZZ`, [secret]), `x${marker}ZZ`);
  // Pieces split over lines or glued to other text are still found.
  assert.equal(maskSecrets(`${v.slice(0, 9)}\n${v.slice(9)}`, [secret]), `${marker}\n${marker}`);
  assert.equal(maskSecrets(`abc${v.slice(4, 14)}def`, [secret]), `abc${marker}def`);
});

Deno.test("a secret shorter than 12 characters is masked only whole", () => {
  const secret: Secret = { kind: "vault", name: "PASS", value: "hunter2-xyz" };
  assert.equal(secret.value.length, FRAGMENT_SECRET_LENGTH - 1);
  assert.equal(
    maskSecrets("hunter2-xy and hunter2-xyz", [secret]),
    "hunter2-xy and [redacted:vault:PASS]",
  );
});

Deno.test("the streaming masker finds a piece split across chunks and holds back less than the secret", () => {
  const secret: Secret = { kind: "vault", name: "K", value: "abcdefghijklmnopqrst" };
  const m = createSecretMasker([secret]);
  assert.equal(m.push("see xyzghij"), "see xyz");
  assert.equal(m.held, 4);
  assert.equal(m.push("klm"), "");
  assert.equal(m.held, 7);
  assert.equal(m.push("nop!"), "[redacted:vault:K]!");
  assert.equal(m.held, 0);
  // A run that reaches the end of the text waits for the next chunk; flush decides it.
  assert.equal(m.push("..klmnopqrs"), "..");
  assert.equal(m.held, 9);
  assert.equal(m.flush(), "[redacted:vault:K]");
});

Deno.test("pieces: any chunking of a text masks exactly like the whole text (randomised, seeded)", () => {
  const secrets: Secret[] = [
    { kind: "vault", name: "A", value: "abcabcabXYZabcab" },
    { kind: "mcp", name: "s.TOKEN", value: "XYZ-abcabc-123456" },
    { kind: "api_key", name: "k", value: "abcab-12" },
    { kind: "vault", name: "DUP", value: "abcabcabXYZabcab" },
  ];
  const alphabet = ["a", "b", "c", "X", "YZ", "-", "1234", "56", "abcab", "abcabcab", "\n"];
  assertChunkingMasksLikeWhole(secrets, alphabet, {
    seed: 0x1234567,
    rounds: 1500,
    maxPieces: 40,
    maxStep: 9,
  });
});

Deno.test("a piece at the end of a megabyte of output, among 200 long secrets, is masked", () => {
  const secrets: Secret[] = [];
  for (let i = 0; i < 200; i++) {
    secrets.push({
      kind: "vault",
      name: `K${i}`,
      value: `secret-${i}-${"q".repeat(i % 7)}${i * 7919}zz`,
    });
  }
  const v = secrets[150]!.value;
  const filler = "lorem ipsum dolor sit amet ".repeat(40_000);
  // Past the public prefix "secret-" by 8 characters or more.
  const out = maskSecrets(filler + v.slice(9, 19), secrets);
  assert.equal(out, filler + "[redacted:vault:K150]");
});

Deno.test("a secret whose pieces are separated by escape sequences or controls is masked whole, sequences included", () => {
  const secret: Secret = { kind: "vault", name: "V", value: "Vx1Aw7OCq9Lm2Np4" };
  const v = secret.value;
  const marker = "[redacted:vault:V]";
  const seps = [
    "\x1b[0m", // CSI
    "\x1b]0;title\x07", // OSC title, BEL
    "\x9b0m", // 8-bit CSI
    "\x1bPq\x1b\\", // DCS, ST
    "\x00", // C0
    "\x85", // C1
    "\u200b", // zero width
  ];
  for (const sep of seps) {
    const text = `a ${v.slice(0, 5)}${sep}${v.slice(5, 10)}${sep}${v.slice(10, 15)} b`;
    const want = `a ${marker} b`;
    assert.equal(maskSecrets(text, [secret]), want, JSON.stringify(sep));
    // Streamed one character at a time, the same.
    const m = createSecretMasker([secret]);
    let out = "";
    for (const ch of text) out += m.push(ch);
    assert.equal(out + m.flush(), want, `streamed ${JSON.stringify(sep)}`);
  }
  // Sequences around the secret stay; a secret inside a sequence is masked there.
  assert.equal(
    maskSecrets(`\x1b[31m${v.slice(0, 4)}\x1b[0m${v.slice(4, 9)}\x1b[0m!`, [secret]),
    `\x1b[31m${marker}\x1b[0m!`,
  );
  assert.equal(maskSecrets(`\x1b]0;${v}\x07ok`, [secret]), `\x1b]0;${marker}\x07ok`);
  // Newlines and other text still separate pieces (seven characters are no piece).
  assert.equal(
    maskSecrets(`${v.slice(0, 5)}\n${v.slice(5, 10)}`, [secret]),
    `${v.slice(0, 5)}\n${v.slice(5, 10)}`,
  );
});

Deno.test("with escape sequences, any chunking masks like the whole text and a terminal shows no piece (randomised)", async () => {
  const { safeText } = await import("../../lib/display/terminal_text.ts");
  const secrets: Secret[] = [
    { kind: "vault", name: "A", value: "abcabcabXYZabcab" },
    { kind: "mcp", name: "s.TOKEN", value: "XYZ-abcabc-123456" },
    { kind: "vault", name: "S", value: "ab;cab" },
  ];
  const alphabet = [
    "a",
    "b",
    "c",
    "X",
    "YZ",
    "-",
    "1234",
    "\n",
    "\x1b[0m",
    "\x1b]0;",
    "\x07",
    "\x9b",
    "m",
    "\x1b",
    "\\",
    "\x1bP",
    "\x00",
    "abcab",
  ];
  const next = rng(0xabcdef1);
  for (let round = 0; round < 1500; round++) {
    let text = "";
    const n = Math.floor(next() * 40);
    for (let i = 0; i < n; i++) text += alphabet[Math.floor(next() * alphabet.length)];
    const whole = maskSecrets(text, secrets);
    const m = createSecretMasker(secrets);
    let out = "";
    let i = 0;
    while (i < text.length) {
      const step = 1 + Math.floor(next() * 9);
      out += m.push(text.slice(i, i + step));
      i += step;
    }
    out += m.flush();
    assert.equal(out, whole, `chunked ${JSON.stringify(text)}`);
    const shown = safeText(whole).replaceAll("\\x", "\n");
    for (const s of secrets.slice(0, 2)) {
      // Every piece that ends 8 characters or more past the public prefix ("XYZ-abcabc-").
      const from = publicPrefixLength(s.value, FRAGMENT_LENGTH, s.kind);
      for (let k = from; k + FRAGMENT_LENGTH <= s.value.length; k++) {
        const piece = s.value.slice(k, k + FRAGMENT_LENGTH);
        assert.ok(!shown.includes(piece), `${JSON.stringify(text)} shows ${piece}`);
      }
    }
  }
});

Deno.test("a possible secret held behind endless control sequences is decided within a bound, as at the end", () => {
  const secret: Secret = { kind: "vault", name: "V", value: "Vx1Aw7OCq9Lm2Np4" };
  const m = createSecretMasker([secret]);
  let out = m.push(secret.value.slice(0, 5));
  for (let i = 0; i < 20_000; i++) {
    out += m.push("\x1b[0m");
    assert.ok(m.held <= MAX_HELD_CONTROLS + 4);
  }
  // Five characters never tell a secret (the fragment rule): shown as the end would show them.
  assert.ok(out.startsWith("Vx1Aw\x1b[0m"), out.slice(0, 40));
  out += m.push(secret.value.slice(5, 13)) + m.flush();
  assert.ok(!out.includes(secret.value.slice(5, 13)), "the next eight are masked");
});

Deno.test("a forced decision tells no guess that continues a secret from one that does not", () => {
  // Attack round 27 d01: `G <guess>` then 80 Ki characters of sequences, no newline; the forced
  // decision masked the guess only when it continued the key (any piece of it, however short),
  // and the model read the key a character a turn. Now it is decided as the end would decide it:
  // by the fragment rule, which needs eight unknown characters right at once.
  const key: Secret = { kind: "api_key", name: "custom", value: "sk-proj-Qm7vX2kP9wLr4TzA" };
  const same = (right: string, wrong: string, filler: string) => {
    const shown = (guess: string) => {
      const m = createSecretMasker([key]);
      const out = m.push(`G ${guess}`) + m.push(filler);
      return out.replaceAll(guess, "<guess>");
    };
    return shown(right) === shown(wrong);
  };
  const fillers = ["\x1b[0m".repeat(20_000), "\u200b".repeat(70_000), "\u00ad".repeat(70_000)];
  for (const [i, filler] of fillers.entries()) {
    assert.ok(same("sk-proj-Q", "sk-proj-X", filler), `the first character past the prefix (${i})`);
    assert.ok(same("sk-proj-Qm7", "sk-proj-Qm8", filler), `the third (${i})`);
    assert.ok(same("Qm7vX2k", "Qm7vX2j", filler), `seven characters (${i})`);
    assert.ok(same("P", "Z", filler), `one character (${i})`);
  }
});

Deno.test("a secret whose pieces are separated by invisible characters is masked, however chunked", () => {
  const value = "Vx1Aw7OCq9Lm2Np4Rt6Yu8Io0Pa3Sd5F";
  const secrets = [{ kind: "vault" as const, name: "K", value }];
  const hidden = [
    "\u200e",
    "\u200f",
    "\u034f",
    "\u061c",
    "\ufe0f",
    "\u{e0041}",
    "\u00ad",
    "\u2061",
    "\u180e",
    "\u{1d173}",
    "\u2028",
    "\u2029",
  ];
  for (const h of hidden) {
    const text = `x ${value.slice(0, 5)}${h}${value.slice(5, 10)}${h}${value.slice(10, 15)} y`;
    assert.equal(maskSecrets(text, secrets), "x [redacted:vault:K] y", JSON.stringify(h));
    const masker = createSecretMasker(secrets);
    let out = "";
    for (let i = 0; i < text.length; i++) out += masker.push(text[i]!);
    assert.equal(out + masker.flush(), "x [redacted:vault:K] y", `${JSON.stringify(h)} by unit`);
  }
});
