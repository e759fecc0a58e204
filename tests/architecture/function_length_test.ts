// No function in lib/ runs past LIMIT lines unless it says why at its top: a
// comment `// Long because: <reason>` (or `// Long by design: <reason>`) on
// one of the first lines of its body. Functions are found with Deno's lint AST.
import assert from "node:assert/strict";
import { REPO } from "../support/cli.ts";
import { findings, libFiles, lineOf } from "./_lint.ts";

/** Longest function, in lines from its first to its last, without a written reason. */
const LIMIT = 80;
/** How many of a function body's first lines may hold the reason. */
const TOP = 4;
const REASON = /\/\/ Long (?:because|by design): \S/;

const lengthRule: Deno.lint.Rule["create"] = (ctx) => {
  const src = ctx.sourceCode.text;
  const check = (node: Deno.lint.Node) => {
    const [start, end] = node.range;
    const lines = src.slice(start, end).split("\n").length;
    if (lines <= LIMIT) return;
    const fn = node as Deno.lint.Node & { body: Deno.lint.Node };
    const top = src.slice(fn.body.range[0]).split("\n", TOP);
    if (top.some((l) => REASON.test(l))) return;
    ctx.report({ node, message: `line ${lineOf(src, node)}: ${lines} lines` });
  };
  return {
    FunctionDeclaration: check,
    FunctionExpression: check,
    ArrowFunctionExpression: check,
  };
};

Deno.test(`no function in lib/ is over ${LIMIT} lines without a reason at its top`, () => {
  const found = libFiles().flatMap((f) => findings(lengthRule, f));
  assert.deepEqual(found, []);
});

Deno.test("the length rule finds long functions of every form and accepts a written reason", () => {
  const body = (n: number) =>
    Array.from({ length: n }, (_, i) => `  const x${i} = ${i};`).join("\n");
  const src = [
    `export function plain() {\n${body(LIMIT)}\n}`,
    `export const arrow = () => {\n${body(LIMIT)}\n};`,
    `export const obj = { method() {\n${body(LIMIT)}\n} };`,
    `export function fine() {\n${body(LIMIT - 2)}\n}`,
    `export function reasoned() {\n  // Long because: one table of cases.\n${body(LIMIT)}\n}`,
  ].join("\n");
  const found = findings(lengthRule, `${REPO}lib/x.ts`, src).map((s) =>
    s.replace(/ \d+ lines$/, "")
  );
  assert.deepEqual(found, ["lib/x.ts line 1:", "lib/x.ts line 83:", "lib/x.ts line 165:"]);
});
