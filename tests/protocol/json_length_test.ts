// jsonLength counts the JSON of a value without building it, exactly as JSON.stringify would.
import assert from "node:assert/strict";
import { jsonLength } from "../../lib/protocol/json_length.ts";

const CASES: unknown[] = [
  "",
  "plain",
  'quote " and backslash \\ and / slash',
  "\b\f\n\r\t and \u0000\u0001\u001f \u007f",
  "pair 🐧, lone high \ud800x, lone low \udc00, high at the end \ud83d",
  "\u2028\u2029 line separators",
  0,
  -0,
  1.5e-7,
  123456789012345680000,
  NaN,
  Infinity,
  true,
  false,
  null,
  [],
  {},
  [1, "a", null, true, [{}], undefined, () => 1],
  { a: 1, b: undefined, c: () => 1, "d\n": ["x", { e: "y" }], f: null },
  { signature: "S".repeat(100_000), nested: { deep: [1, 2, { x: 'é€"' }] } },
];

Deno.test("jsonLength is the length of JSON.stringify for every kind of JSON value", () => {
  for (const v of CASES) {
    assert.equal(jsonLength(v), JSON.stringify(v)?.length ?? 0, JSON.stringify(v)?.slice(0, 60));
  }
});

Deno.test("jsonLength agrees with JSON.stringify on random strings of every code unit class", () => {
  const units = [
    0x00,
    0x09,
    0x0a,
    0x1f,
    0x20,
    0x22,
    0x41,
    0x5c,
    0x7f,
    0xe9,
    0xd83d,
    0xdc27,
    0xdbff,
    0xdc00,
    0xffff,
  ];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (let round = 0; round < 2000; round++) {
    const len = next() % 12;
    let s = "";
    for (let i = 0; i < len; i++) s += String.fromCharCode(units[next() % units.length]!);
    assert.equal(jsonLength(s), JSON.stringify(s).length, JSON.stringify(s));
    assert.equal(jsonLength({ [s]: [s] }), JSON.stringify({ [s]: [s] }).length);
  }
});
