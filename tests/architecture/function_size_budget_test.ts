// lib/'s function sizes do not grow back (issue 31). The goal is none over 200 lines and at most
// 10 over 120; the ceilings below are today's counts and only ever go down.
// The figures, longest first:
//   FUNCTION_SIZES=1 deno test -A tests/architecture/function_size_budget_test.ts
// (FUNCTION_SIZES_LIB=<dir> measures another checkout's lib/.)
import assert from "node:assert/strict";
import { functionSizes, sizesOf } from "./function_sizes.ts";
import { REPO } from "../support/cli.ts";

const MAX = 200;
const LONG = 120;
/** Functions over MAX lines allowed today (goal: 0). */
const MAX_OVER = 0;
/** Functions over LONG lines allowed today (goal: 10). */
const MAX_LONG = 6;

Deno.test(`at most ${MAX_OVER} functions in lib/ are over ${MAX} lines, ${MAX_LONG} over ${LONG}`, () => {
  const all = functionSizes(Deno.env.get("FUNCTION_SIZES_LIB") || undefined);
  const over = (n: number) => all.filter((f) => f.lines > n);
  if (Deno.env.get("FUNCTION_SIZES")) {
    for (const f of over(LONG)) console.log(`${f.lines}\t${f.name}\t${f.where}`);
    console.log(
      `over 80: ${over(80).length} · over ${LONG}: ${over(LONG).length} · over ${MAX}: ${
        over(MAX).length
      }`,
    );
  }
  assert.ok(
    over(MAX).length <= MAX_OVER,
    `${over(MAX).length} functions over ${MAX} lines (at most ${MAX_OVER}):\n` +
      over(MAX).map((f) => `${f.where} ${f.name}: ${f.lines}`).join("\n"),
  );
  assert.ok(
    over(LONG).length <= MAX_LONG,
    `${over(LONG).length} functions over ${LONG} lines (at most ${MAX_LONG}):\n` +
      over(LONG).map((f) => `${f.where} ${f.name}: ${f.lines}`).join("\n"),
  );
});

Deno.test("the size count finds functions of every form, with their names", () => {
  const body = (n: number) =>
    Array.from({ length: n }, (_, i) => `  const x${i} = ${i};`).join("\n");
  const src = [
    `export function plain() {\n${body(3)}\n}`,
    `export const arrow = () => {\n${body(1)}\n};`,
    `export const obj = { method() {\n${body(2)}\n} };`,
  ].join("\n");
  const sizes = sizesOf(`${REPO}lib/x.ts`, src).map((f) => [f.name, f.lines, f.where]);
  assert.deepEqual(sizes, [
    ["plain", 5, "lib/x.ts:1"],
    ["arrow", 3, "lib/x.ts:6"],
    ["method", 4, "lib/x.ts:9"],
  ]);
});
