// No module in lib/ writes through a cast: `(msg as Record<string, unknown>).x = y`
// changes a message past its type. Build the value with its type instead.
import assert from "node:assert/strict";
import { REPO } from "../support/cli.ts";

function* walk(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) yield* walk(p);
    else if (e.name.endsWith(".ts")) yield p;
  }
}

type AnyNode = Deno.lint.Node & Record<string, unknown>;

/** The target of a write, or of `delete`, is a member of a cast expression. */
function castMember(node: AnyNode | undefined): boolean {
  if (node?.type !== "MemberExpression") return false;
  const object = node.object as AnyNode;
  return object.type === "TSAsExpression" || object.type === "TSTypeAssertion";
}

const castWrites: Deno.lint.Plugin = {
  name: "penguin-casts",
  rules: {
    "no-cast-writes": {
      create(ctx) {
        const src = ctx.sourceCode.text;
        const report = (node: Deno.lint.Node) => {
          const line = src.slice(0, node.range[0]).split("\n").length;
          ctx.report({ node, message: `line ${line}: ${src.slice(...node.range)}` });
        };
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
      },
    },
  },
};

function writesThroughCasts(file: string, src = Deno.readTextFileSync(file)): string[] {
  return Deno.lint.runPlugin(castWrites, file, src).map((d) =>
    `${file.slice(REPO.length)} ${d.message}`
  );
}

Deno.test("no module in lib/ writes a field through a cast", () => {
  assert.deepEqual([...walk(`${REPO}lib`)].flatMap((f) => writesThroughCasts(f)), []);
});

Deno.test("the rule finds assignments, updates and deletes through a cast", () => {
  const src = [
    "const m: { a: number } = { a: 1 };",
    "(m as Record<string, unknown>).b = 2;",
    "(m as { n: number }).n++;",
    "delete (m as { a?: number }).a;",
    "m.a = 3;",
  ].join("\n");
  assert.deepEqual(writesThroughCasts(`${REPO}lib/x.ts`, src).map((s) => s.split(":")[0]), [
    "lib/x.ts line 2",
    "lib/x.ts line 3",
    "lib/x.ts line 4",
  ]);
});
