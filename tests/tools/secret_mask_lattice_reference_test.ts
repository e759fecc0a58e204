// The lattice walk over numeric escapes (lib/tools/_escape_lattice.ts) keeps its states in typed
// arrays, for speed; what it finds must be what the first, plain walk found (maps of states per
// position, kept in tests/support/escape_lattice_reference.ts): the same matches in the same
// order, the same first undecided position and the same characters walked, final or not, on
// random texts of every kind of escape with secrets spelled in them, and on texts cut anywhere.
import assert from "node:assert/strict";
import { createLattice, type LatticeSecret } from "../../lib/tools/_escape_lattice.ts";
import { createReferenceLattice } from "../support/escape_lattice_reference.ts";
import { prng } from "../support/prng.ts";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=\\";

/** Secrets of 6 to 48 characters: the ones under 12 matched only whole, as the masker has them. */
function secretsOf(rand: () => number): LatticeSecret[] {
  return Array.from({ length: 1 + Math.floor(rand() * 5) }, (_, i) => {
    const n = 6 + Math.floor(rand() * 43);
    let value = "";
    for (let k = 0; k < n; k++) value += ALPHABET[Math.floor(rand() * ALPHABET.length)];
    return { value, marker: `[redacted:vault:K${i}]`, whole: n < 12 };
  });
}

const hex = (n: number) => n.toString(16);
const oct = (n: number) => n.toString(8);

/** One character spelled some way any reader may read it (a numeric escape, mostly). */
function spell(c: string, rand: () => number): string {
  const u = c.charCodeAt(0);
  const ways = [
    () => c,
    () => `\\${oct(u + 256)}`,
    () => `\\x${hex(u)}`,
    () => `\\x0${hex(u)}`,
    () => `\\x1${hex(u).padStart(2, "0")}`,
    () => `\\u00${hex(u).padStart(2, "0")}`,
    () => `\\u{${hex(u)}}`,
    () => `\\d${String(u).padStart(3, "0")}`,
    () => `\\o{${oct(u)}}`,
    () => `\\N{U+${hex(u).toUpperCase()}}`,
    () => `\\${oct(u)}`,
    () => `\\\n${c}`,
  ];
  return ways[Math.floor(rand() * ways.length)]!();
}

/** Noise: escapes of every kind, digits, letters, cut-short escapes, long digit runs. */
function noise(rand: () => number): string {
  const bits = [
    () => `\\${Math.floor(rand() * 512).toString(8)}`,
    () => `\\x${hex(Math.floor(rand() * 4096))}`,
    () => `\\d${Math.floor(rand() * 1000)}`,
    () => `\\u${hex(Math.floor(rand() * 65536)).padStart(4, "0")}`,
    () => "\\u00",
    () => `\\x${"0".repeat(30 + Math.floor(rand() * 10))}51`,
    () => `\\u{${"0".repeat(Math.floor(rand() * 70))}41}`,
    () => ALPHABET[Math.floor(rand() * ALPHABET.length)]!,
    () => " ",
    () => "\\\r\n",
    () => "\\N{LATIN SMALL LETTER A}",
  ];
  let s = "";
  const n = Math.floor(rand() * 12);
  for (let i = 0; i < n; i++) s += bits[Math.floor(rand() * bits.length)]!();
  return s;
}

/** A text of noise with secrets (whole or in pieces) spelled in it. */
function textOf(secrets: readonly LatticeSecret[], rand: () => number): string {
  let s = "";
  for (let part = 0; part < 6; part++) {
    s += noise(rand);
    const v = secrets[Math.floor(rand() * secrets.length)]!.value;
    const from = rand() < 0.5 ? 0 : Math.floor(rand() * v.length);
    const to = rand() < 0.5 ? v.length : from + Math.floor(rand() * (v.length - from + 1));
    for (const c of v.slice(from, to)) s += spell(c, rand);
  }
  return s + noise(rand);
}

Deno.test("secret mask lattice: the fast walk finds what the reference walk finds", () => {
  let compared = 0;
  let withHits = 0;
  for (let seed = 1; seed <= 150; seed++) {
    const rand = prng(seed);
    const secrets = secretsOf(rand);
    const fast = createLattice(secrets, 8);
    const reference = createReferenceLattice(secrets, 8);
    const text = textOf(secrets, rand);
    const cuts = [
      text.length,
      ...Array.from({ length: 6 }, () => Math.floor(rand() * text.length)),
    ];
    for (const cut of cuts) {
      for (const final of [true, false]) {
        const piece = text.slice(0, cut);
        const want = reference.scan(piece, final);
        assert.deepEqual(fast.scan(piece, final), want, `seed ${seed}, cut ${cut}, final ${final}`);
        compared++;
        if (want.hits.length > 0) withHits++;
      }
    }
  }
  // The texts are made to hold matches: most comparisons have some.
  assert.ok(withHits > compared / 2, `${withHits} of ${compared} with matches`);
});

Deno.test("secret mask lattice: the walk takes each character once, however dense the escapes", () => {
  const rand = prng(7);
  const secrets = secretsOf(rand);
  const lattice = createLattice(secrets, 8);
  let text = "";
  while (text.length < 200_000) text += textOf(secrets, rand);
  for (const final of [true, false]) {
    const got = lattice.scan(text, final);
    // Regions around escapes are joined, never walked twice: at most the text's length.
    assert.ok(got.walked <= text.length, `walked ${got.walked} of ${text.length}`);
    assert.ok(got.walked > text.length / 2, `walked ${got.walked}: the escapes are everywhere`);
  }
});
