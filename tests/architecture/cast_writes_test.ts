// No module in lib/ writes through a cast: `(msg as Record<string, unknown>).x = y`
// changes a message past its type. Build the value with its type instead.
import assert from "node:assert/strict";
import { REPO } from "../support/cli.ts";
import { findings, libFiles, lineOf } from "./_lint.ts";

type AnyNode = Deno.lint.Node & Record<string, unknown>;

/** The target of a write, or of `delete`, is a member of a cast expression. */
function castMember(node: AnyNode | undefined): boolean {
  if (node?.type !== "MemberExpression") return false;
  const object = node.object as AnyNode;
  return object.type === "TSAsExpression" || object.type === "TSTypeAssertion";
}

const castWrites: Deno.lint.Rule["create"] = (ctx) => {
  const src = ctx.sourceCode.text;
  const report = (node: Deno.lint.Node) =>
    ctx.report({ node, message: `line ${lineOf(src, node)}: ${src.slice(...node.range)}` });
  return {
    AssignmentExpression(node) {
      if (castMember(node.left as AnyNode)) report(node);
    },
    UpdateExpression(node) {
      if (castMember(node.argument as AnyNode)) report(node);
    },
    UnaryExpression(node) {
      if (node.operator === "delete" && castMember(node.argument as AnyNode)) report(node);
    },
  };
};

Deno.test("no module in lib/ writes a field through a cast", () => {
  assert.deepEqual(libFiles().flatMap((f) => findings(castWrites, f)), []);
});

Deno.test("the rule finds assignments, updates and deletes through a cast", () => {
  const src = [
    "const m: { a: number } = { a: 1 };",
    "(m as Record<string, unknown>).b = 2;",
    "(m as { n: number }).n++;",
    "delete (m as { a?: number }).a;",
    "m.a = 3;",
  ].join("\n");
  assert.deepEqual(findings(castWrites, `${REPO}lib/x.ts`, src).map((s) => s.split(":")[0]), [
    "lib/x.ts line 2",
    "lib/x.ts line 3",
    "lib/x.ts line 4",
  ]);
});
