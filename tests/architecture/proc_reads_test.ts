// No module in lib/ reads /proc with Deno's file API: under penguin's own permission set (anything
// short of --allow-all) Deno refuses every /proc path, so such a read fails in the shipped program
// while the tests' -A let it through (the process budget read nothing that way: attack pass
// final14-bounded F14-1). /proc is read through bash (lib/sandbox/_proc_facts.ts).
import assert from "node:assert/strict";
import { findings, libFiles, lineOf } from "./_lint.ts";

const procRule: Deno.lint.Rule["create"] = (ctx) => {
  const src = ctx.sourceCode.text;
  return {
    CallExpression(node) {
      const callee = node.callee;
      if (
        callee.type !== "MemberExpression" || callee.object.type !== "Identifier" ||
        callee.object.name !== "Deno"
      ) return;
      const arg = node.arguments[0];
      if (arg === undefined) return;
      const text = arg.type === "Literal" && typeof arg.value === "string"
        ? arg.value
        : arg.type === "TemplateLiteral"
        ? src.slice(arg.range[0] + 1, arg.range[1] - 1)
        : undefined;
      if (text !== undefined && (text === "/proc" || text.startsWith("/proc/"))) {
        ctx.report({ node, message: `line ${lineOf(src, node)}: ${JSON.stringify(text)}` });
      }
    },
  };
};

Deno.test("no module in lib/ reads /proc through Deno's file API", () => {
  const found = libFiles().flatMap((f) => findings(procRule, f));
  assert.deepEqual(found, []);
});

Deno.test("the /proc rule finds literal and template paths in Deno calls only", () => {
  const src = [
    'await Deno.readTextFile("/proc/sys/kernel/pid_max");',
    "Deno.statSync(`/proc/${pid}/stat`);",
    'const script = "read -r l </proc/loadavg";',
    'await Deno.readTextFile("/etc/hostname");',
  ].join("\n");
  assert.deepEqual(findings(procRule, "/x/lib/m.ts", src).map((f) => f.split(" ").slice(1)), [
    ["line", "1:", '"/proc/sys/kernel/pid_max"'],
    ["line", "2:", '"/proc/${pid}/stat"'],
  ]);
});
