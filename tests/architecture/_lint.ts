// Rules over lib/'s syntax trees: each `.ts` module under lib/, and one lint
// rule (Deno's lint AST) run over a module's source, its findings named by file.
import { REPO } from "../support/cli.ts";

/** Every `.ts` module under lib/, as absolute paths. */
export function libFiles(dir = `${REPO}lib`): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...libFiles(p));
    else if (e.name.endsWith(".ts")) out.push(p);
  }
  return out.sort();
}

/** The line (1-based) where `node` starts in `src`. */
export function lineOf(src: string, node: Deno.lint.Node): number {
  return src.slice(0, node.range[0]).split("\n").length;
}

/** Run the rule `create` over `src` (the module `file`): `<path in repo> <message>` per finding. */
export function findings(
  create: Deno.lint.Rule["create"],
  file: string,
  src: string = Deno.readTextFileSync(file),
): string[] {
  const plugin: Deno.lint.Plugin = { name: "penguin-architecture", rules: { rule: { create } } };
  return Deno.lint.runPlugin(plugin, file, src).map((d) =>
    `${file.slice(REPO.length)} ${d.message}`
  );
}
