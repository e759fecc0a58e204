// The length of every function in lib/, in lines from its first to its last (as
// function_length_test.ts counts them, with Deno's lint AST, which only `deno test` runs).
// function_size_budget_test.ts holds lib/ to its budget and prints the figures.
import { REPO } from "../support/cli.ts";
import { libFiles, lineOf } from "./_lint.ts";

/** One function: where it starts, its name when it has one, and its length in lines. */
export interface FunctionSize {
  where: string;
  name: string;
  lines: number;
}

function nameOf(node: Deno.lint.Node, parent: Deno.lint.Node | undefined): string {
  const id = (node as { id?: { name?: string } | null }).id;
  if (id?.name) return id.name;
  const key = (parent as { key?: { name?: string } } | undefined)?.key;
  if (key?.name) return key.name;
  const decl = (parent as { id?: { name?: string } } | undefined)?.id;
  return decl?.name ?? "<anonymous>";
}

/** Every function of `file`. */
export function sizesOf(file: string, src: string = Deno.readTextFileSync(file)): FunctionSize[] {
  const out: FunctionSize[] = [];
  const create: Deno.lint.Rule["create"] = (ctx) => {
    const text = ctx.sourceCode.text;
    const check = (node: Deno.lint.Node) => {
      const [start, end] = node.range;
      out.push({
        where: `${file.startsWith(REPO) ? file.slice(REPO.length) : file}:${lineOf(text, node)}`,
        name: nameOf(node, (node as { parent?: Deno.lint.Node }).parent),
        lines: text.slice(start, end).split("\n").length,
      });
    };
    return {
      FunctionDeclaration: check,
      FunctionExpression: check,
      ArrowFunctionExpression: check,
    };
  };
  const plugin: Deno.lint.Plugin = { name: "penguin-sizes", rules: { sizes: { create } } };
  Deno.lint.runPlugin(plugin, file, src);
  return out;
}

/** Every function in lib/, longest first. */
export function functionSizes(dir?: string): FunctionSize[] {
  return libFiles(dir).flatMap((f) => sizesOf(f)).sort((a, b) => b.lines - a.lines);
}
