// No module in lib/ names a fixed path under /tmp in its code (a comment may): a file penguin
// would write there is shared with every other user of the machine, who can plant it first as
// a link, and a directory penguin does not create makes the write throw (a debugging log left in
// the MCP answer gate did both). penguin's own /tmp directory is `/tmp/penguin-<uid>`, created
// private by `lib/sandbox/_private_tmp.ts`; `/tmp` alone is the sandbox's private one.
import assert from "node:assert/strict";
import { findings, libFiles, lineOf } from "./_lint.ts";

/** The only form allowed: the per-user run directory, named with the uid. */
const ALLOWED = /^\/tmp\/penguin-\$\{/;

const fixedTmpRule: Deno.lint.Rule["create"] = (ctx) => {
  const src = ctx.sourceCode.text;
  const check = (node: Deno.lint.Node, text: string) => {
    if (text.startsWith("/tmp/") && !ALLOWED.test(text)) {
      ctx.report({ node, message: `line ${lineOf(src, node)}: ${JSON.stringify(text)}` });
    }
  };
  return {
    Literal(node) {
      if (typeof node.value === "string") check(node, node.value);
    },
    TemplateLiteral(node) {
      check(node, src.slice(node.range[0] + 1, node.range[1] - 1));
    },
  };
};

Deno.test("no module in lib/ writes to or reads from a fixed path under /tmp", () => {
  const found = libFiles().flatMap((f) => findings(fixedTmpRule, f));
  assert.deepEqual(found, []);
});

Deno.test("the /tmp rule finds literals and templates and lets the per-user run directory be", () => {
  const src = [
    'const a = "/tmp/mcpbudget/gate.log";',
    "const b = `/tmp/x-${1}`;",
    "const c = `/tmp/penguin-${uid}`;",
    'const d = "/tmp";',
    "// a comment naming /tmp/anything",
  ].join("\n");
  assert.deepEqual(findings(fixedTmpRule, "/x/lib/m.ts", src).map((f) => f.split(" ").slice(1)), [
    ["line", "1:", '"/tmp/mcpbudget/gate.log"'],
    ["line", "2:", '"/tmp/x-${1}"'],
  ]);
});
